-- Makes the admin principal an admin (creating it if missing) and sets the
-- bootstrap key.
-- KEYS[1] principals hash, KEYS[2] keys hash, KEYS[3] version
-- ARGV[1] admin principal name, ARGV[2] its JSON (used if it is missing),
-- ARGV[3] bootstrap key id, ARGV[4] key JSON
-- returns 1
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local p = cjson.decode(raw)
  if not p['admin'] then
    p['admin'] = true
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(p))
  end
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('INCR', KEYS[3])
return 1
