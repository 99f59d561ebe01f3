-- delete: acknowledge messages for one tag. A message the tag no longer
-- holds (deleted before, or expired) is not an error. Any receipt handle of
-- the message deletes it (S3): every handle names the same v member.
-- KEYS: 1 meta, 2 n, 3 v, 4 x
-- ARGV: 1 tag, then pairs: message id, first receive ms
-- Returns: per pair 1 (deleted now) or 0 (already gone).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
if redis.call('EXISTS', KEYS[2]) == 0 then return notfound(KEYS[1]) end
local members, ids = {}, {}
for i = 2, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  members[#members + 1] = vmember(ARGV[i], tonumber(ARGV[i + 1]))
end
local held = redis.call('ZMSCORE', KEYS[3], unpack(members))
local res, gone, goneids, seen = {}, {}, {}, {}
for i, m in ipairs(members) do
  if held[i] and not seen[m] then
    seen[m] = true
    gone[#gone + 1] = m
    goneids[#goneids + 1] = ids[i]
    res[i] = 1
  else
    res[i] = 0
  end
end
if #gone > 0 then
  redis.call('ZREM', KEYS[3], unpack(gone))
  redis.call('ZREM', KEYS[4], unpack(gone))
  vcount(KEYS[2], goneids, -1)
  redis.call('HINCRBY', KEYS[2], 'del', #gone)
end
return res
