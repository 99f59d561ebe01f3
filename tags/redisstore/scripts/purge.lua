-- purge: drop every message; attributes, tags and totals stay. Every tag
-- starts again from the (now empty) end of the stream.
-- KEYS: 1 meta, 2 stream, 3 tags, 4 fa, 5 dl, then per tag: n, v, p, x, b,
--       then z (sizes), zh
-- ARGV: every tag name (same order as KEYS)
-- Returns: messages dropped.
-- Errors: QUEUE_NOT_FOUND, TAGS_CHANGED.
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
if not sametags(KEYS[3], 1) then return redis.error_reply('TAGS_CHANGED') end
local len = redis.call('XLEN', KEYS[2])
redis.call('XTRIM', KEYS[2], 'MAXLEN', 0)
redis.call('DEL', KEYS[#KEYS - 1], KEYS[#KEYS])
redis.call('HSET', KEYS[1], 'rb', 0)
local added = redis.call('HGET', KEYS[1], 'added') or 0
pelbump(KEYS[1]) -- the groups go: a receive that read from them must not record it
for i = 1, #ARGV do
  local tag, k = ARGV[i], 5 + (i - 1) * 5
  redis.call('XGROUP', 'DESTROY', KEYS[2], tag)
  redis.call('XGROUP', 'CREATE', KEYS[2], tag, '$', 'MKSTREAM')
  redis.call('DEL', KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5])
  topicclear(KEYS[k + 1])
  prioclear(KEYS[k + 1])
  for _, f in ipairs(redis.call('HKEYS', KEYS[k + 1])) do
    if string.sub(f, 1, 2) == 'w:' then redis.call('HDEL', KEYS[k + 1], f) end
  end
  -- unread = init + admitted - con - xb - mvd must become 0; xb stays (a total).
  local xb = tonumber(redis.call('HGET', KEYS[k + 1], 'xb') or 0) + tonumber(redis.call('HGET', KEYS[k + 1], 'mvd') or 0)
  redis.call('HSET', KEYS[k + 1], 'a0', added, 'init', xb, 'con', 0, 'pc', 0, 'h', fmt(INF))
  if redis.call('HEXISTS', KEYS[4], 'f:' .. tag) == 1 then redis.call('HSET', KEYS[4], 'a:' .. tag, 0) end
  redis.call('HDEL', KEYS[4], 'm:' .. tag)
end
redis.call('DEL', KEYS[5])
return len
