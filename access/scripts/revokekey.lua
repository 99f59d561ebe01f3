-- Deletes an API key if it belongs to the principal.
-- KEYS[1] keys hash, KEYS[2] version
-- ARGV[1] key id, ARGV[2] principal
-- returns 1 when deleted, 0 when there is no such key of that principal
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then
  return 0
end
if cjson.decode(raw)['principal'] ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
return 1
