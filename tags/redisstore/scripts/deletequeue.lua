-- deletequeue: remove every key of a queue.
-- KEYS: 1 meta, 2 stream, 3 tags, 4 fa, 5 dl, 6 wk, 7 src, 8 dlo, 9 dd, 10 mv, 11 z, 12 zh,
--       13 sd, 14 sdx, 15 r, 16 rs, then per tag: n, v, p, x, b
-- ARGV: every tag name (same order as KEYS)
-- Returns: 1. Errors: QUEUE_NOT_FOUND, TAGS_CHANGED.
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
if not sametags(KEYS[3], 1) then return redis.error_reply('TAGS_CHANGED') end
for i = 17, #KEYS, 5 do -- a topic or priority queue's per-tag keys (lib.lua)
  topicclear(KEYS[i])
  prioclear(KEYS[i])
end
redis.call('DEL', unpack(KEYS))
return 1
