-- Deletes a principal with its API keys, its grants and its queue
-- ownerships (the queues themselves stay).
-- KEYS[1] principals hash, KEYS[2] keys hash, KEYS[3] grants hash,
-- KEYS[4] owners hash, KEYS[5] the principal's created-queues set,
-- KEYS[6] version
-- ARGV[1] principal
-- returns 1 when deleted, 0 when there was no such principal
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
local kv = redis.call('HGETALL', KEYS[2])
for i = 1, #kv, 2 do
  if cjson.decode(kv[i + 1])['principal'] == ARGV[1] then
    redis.call('HDEL', KEYS[2], kv[i])
  end
end
local prefix = ARGV[1] .. '/'
for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
  if string.sub(f, 1, #prefix) == prefix then
    redis.call('HDEL', KEYS[3], f)
  end
end
for _, q in ipairs(redis.call('SMEMBERS', KEYS[5])) do
  if redis.call('HGET', KEYS[4], q) == ARGV[1] then
    redis.call('HDEL', KEYS[4], q)
  end
end
redis.call('DEL', KEYS[5])
redis.call('INCR', KEYS[6])
return 1
