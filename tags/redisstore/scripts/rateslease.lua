-- rateslease: take or renew the rates sampler's lease (rates.go), or give
-- it up, in the rates hash: o the holder, x its expiry (ms, Redis TIME),
-- t the last tick sampled in full.
-- KEYS: 1 the rates hash
-- ARGV: 1 owner, 2 lease ms (0: give it up, if owner holds it), 3 now ms
--       (Redis TIME, read by the caller for its tick)
-- Returns: -1 when another owner holds the lease, else the last tick
--          sampled in full (0: none).
local now = tonumber(ARGV[3])
local h = redis.call('HMGET', KEYS[1], 'o', 'x', 't')
if h[1] and h[1] ~= ARGV[1] and (tonumber(h[2]) or 0) > now then return -1 end
if tonumber(ARGV[2]) == 0 then
  if h[1] == ARGV[1] then redis.call('HDEL', KEYS[1], 'o', 'x') end
  return tonumber(h[3]) or 0
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'x', now + tonumber(ARGV[2]))
return tonumber(h[3]) or 0
