-- workers: a process's heartbeat in the set of live background workers
-- (DESIGN §8: work that reads every queue is shared among them, each
-- queue to one; see package redrive). Members expire on Redis's clock, so
-- replicas with skewed clocks agree on who is alive.
-- KEYS: 1 the workers zset (member: owner, score: expiry ms)
-- ARGV: 1 owner, 2 ms it stays a member without another heartbeat (0:
--       it leaves now)
-- Returns: the live members, in member order.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ttl > 0 then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
local out = redis.call('ZRANGE', KEYS[1], 0, -1)
table.sort(out)
return out
