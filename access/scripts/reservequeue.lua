-- Counts a queue against a principal's quota of created queues.
-- KEYS[1] the principal's created-queues set
-- ARGV[1] queue, ARGV[2] the principal's maximum
-- returns 1 when newly counted, 0 when already counted, -1 when the quota
-- is used up
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return -1
end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
