-- visibility: set in-flight deadlines to now + ms for one tag. Only the
-- handle of the latest receive (generation = receive count) may do it.
-- KEYS: 1 meta, 2 n, 3 v, 4 rc, 5 wk, 6 x
-- ARGV: 1 tag, then triples: message id, generation, ms from now
-- Returns: per triple 1 (changed) or 0 (stale: received again, or gone).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[1]
local h = redis.call('HGET', KEYS[2], 'h')
if not h then return notfound(KEYS[1]) end
local hint = tonumber(h)
local now = nowms()
local low = INF
local res = {}
for i = 2, #ARGV, 3 do
  local id, gen = ARGV[i], tonumber(ARGV[i + 1])
  local rc = redis.call('HGET', KEYS[4], id)
  local cnt = rc and tonumber(string.match(rc, '^(%d+)|'))
  if cnt == gen then
    local at = now + tonumber(ARGV[i + 2])
    redis.call('ZADD', KEYS[3], at, id)
    if redis.call('ZSCORE', KEYS[6], id) then redis.call('ZADD', KEYS[6], at, id) end
    if at < low then low = at end
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
if low < hint then redis.call('HSET', KEYS[2], 'h', fmt(low)) end
if low < hint or low <= now then wake(KEYS[5], tag, low) end
return res
