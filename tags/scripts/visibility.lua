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
local ids = {}
for i = 2, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local rcs = redis.call('HMGET', KEYS[4], unpack(ids))
local res, zv, changed = {}, {}, {}
for j, id in ipairs(ids) do
  local i = 2 + (j - 1) * 3
  local cnt = rcs[j] and tonumber(string.match(rcs[j], '^(%d+)|'))
  if cnt == tonumber(ARGV[i + 1]) then
    local at = now + tonumber(ARGV[i + 2])
    zv[#zv + 1] = at
    zv[#zv + 1] = id
    changed[#changed + 1] = {id, at}
    if at < low then low = at end
    res[j] = 1
  else
    res[j] = 0
  end
end
if #zv > 0 then
  redis.call('ZADD', KEYS[3], unpack(zv))
  -- Messages at their last receive keep their last-chance deadline in step.
  local last = {}
  for _, c in ipairs(changed) do last[#last + 1] = c[1] end
  local xs = redis.call('ZMSCORE', KEYS[6], unpack(last))
  local zx = {}
  for k, c in ipairs(changed) do
    if xs[k] then
      zx[#zx + 1] = c[2]
      zx[#zx + 1] = c[1]
    end
  end
  if #zx > 0 then redis.call('ZADD', KEYS[6], unpack(zx)) end
end
if low < hint then redis.call('HSET', KEYS[2], 'h', fmt(low)) end
if low < hint or low <= now then wake(KEYS[5], tag, low) end
return res
