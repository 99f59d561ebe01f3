-- deletetag: drop a tag's group, in-flight state and counters.
-- KEYS: 1 meta, 2 tags, 3 stream, 4 n, 5 v, 6 p, 7 fa, 8 x, 9 b
-- ARGV: 1 tag
-- Returns: 1. Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[1]
if redis.call('HEXISTS', KEYS[2], tag) == 0 then return notfound(KEYS[1]) end
redis.call('XGROUP', 'DESTROY', KEYS[3], tag)
pelbump(KEYS[1]) -- a receive that read from the destroyed group must not record it
topicclear(KEYS[4])
prioclear(KEYS[4])
redis.call('DEL', KEYS[4], KEYS[5], KEYS[6], KEYS[8], KEYS[9])
redis.call('HDEL', KEYS[2], tag)
redis.call('HDEL', KEYS[7], 'f:' .. tag, 'a:' .. tag, 'm:' .. tag)
return 1
