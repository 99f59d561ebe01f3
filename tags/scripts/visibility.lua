-- visibility: set in-flight deadlines to now + ms for one tag. Only the
-- handle of the latest receive (generation = receive count) may do it.
-- KEYS: 1 meta, 2 n, 3 v, 4 wk, 5 x
-- ARGV: 1 tag, then quadruples: message id, first receive ms, generation,
--       ms from now
-- Returns: per quadruple 1 (changed) or 0 (stale: received again, or gone).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[1]
local h = redis.call('HGET', KEYS[2], 'h')
if not h then return notfound(KEYS[1]) end
local hint = tonumber(h)
local now = nowms()
local low = INF
local members = {}
for i = 2, #ARGV, 4 do members[#members + 1] = vmember(ARGV[i], tonumber(ARGV[i + 1])) end
local scores = redis.call('ZMSCORE', KEYS[3], unpack(members))
local res, zv, changed = {}, {}, {}
for j, m in ipairs(members) do
  local i = 2 + (j - 1) * 4
  local cnt = -1
  if scores[j] then
    local _, c = vdecode(scores[j])
    cnt = c
  end
  if cnt == tonumber(ARGV[i + 2]) then
    local at = now + tonumber(ARGV[i + 3])
    zv[#zv + 1] = vscore(at, cnt)
    zv[#zv + 1] = m
    changed[#changed + 1] = {m, at}
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
  local xs = redis.call('ZMSCORE', KEYS[5], unpack(last))
  local zx = {}
  for k, c in ipairs(changed) do
    if xs[k] then
      zx[#zx + 1] = c[2]
      zx[#zx + 1] = c[1]
    end
  end
  if #zx > 0 then redis.call('ZADD', KEYS[5], unpack(zx)) end
end
if low < hint then redis.call('HSET', KEYS[2], 'h', fmt(low)) end
if low < hint or low <= now then wake(KEYS[4], tag, low) end
return res
