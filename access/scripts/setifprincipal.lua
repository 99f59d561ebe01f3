-- Sets a field of a hash (an API key, a grant) if the principal exists.
-- KEYS[1] principals hash, KEYS[2] the hash to set, KEYS[3] version
-- ARGV[1] principal, ARGV[2] field, ARGV[3] value
-- returns 1 when set, 0 when the principal does not exist
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('INCR', KEYS[3])
return 1
