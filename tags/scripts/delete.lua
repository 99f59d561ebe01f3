-- delete: acknowledge messages for one tag. An id the tag no longer holds
-- (deleted before, or expired) is not an error.
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 rc, 6 x
-- ARGV: 1 tag, 2.. message ids
-- Returns: per id 1 (deleted now) or 0 (already gone).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[1]
if redis.call('EXISTS', KEYS[3]) == 0 then return notfound(KEYS[1]) end
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
local held = redis.call('HMGET', KEYS[5], unpack(ids))
local res, gone, seen = {}, {}, {}
for i, id in ipairs(ids) do
  if held[i] and not seen[id] then
    seen[id] = true
    gone[#gone + 1] = id
    res[i] = 1
  else
    res[i] = 0
  end
end
if #gone > 0 then
  redis.call('HDEL', KEYS[5], unpack(gone))
  redis.call('ZREM', KEYS[4], unpack(gone))
  redis.call('ZREM', KEYS[6], unpack(gone))
  redis.call('XACK', KEYS[2], tag, unpack(gone))
  redis.call('HINCRBY', KEYS[3], 'del', #gone)
end
return res
