-- sendpost: the second half of a send's fast path (send.go). The XADDs
-- run as plain commands (bodies never pass through Lua, whose strings
-- cost a hash of every byte) in one MULTI with this script after them.
-- It checks the limits the caller assumed and counts what was added. If
-- the queue is gone or its limits changed under the caller, it removes the
-- n entries just added (the stream's last n: nothing else ran between,
-- inside EXEC) and refuses; the caller then sends through send.lua.
-- KEYS: 1 meta, 2 stream, 3 fa
-- ARGV: 1 n entries added, 2 largest size among them, 3 1 = only count
--       (a repair after this script was missing from Redis's cache: the
--       entries stand, count them), then per entry its attributes JSON
--       ('' = none)
-- Returns: 1.
-- Errors: QUEUE_NOT_FOUND, STALE_LIMITS (max_message_bytes or
--         delay_seconds changed), NO_STREAM (nothing was added).
local n = tonumber(ARGV[1])
if ARGV[3] ~= '1' then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
    return redis.error_reply('NO_STREAM')
  end
  local m = redis.call('HMGET', KEYS[1], 'mmb', 'delay')
  if not m[1] or tonumber(ARGV[2]) > tonumber(m[1]) or tonumber(m[2]) ~= 0 then
    local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', n)
    local ids = {}
    for _, e in ipairs(last) do ids[#ids + 1] = e[1] end
    if #ids > 0 then redis.call('XDEL', KEYS[2], unpack(ids)) end
    if not m[1] then return redis.error_reply('QUEUE_NOT_FOUND') end
    return redis.error_reply('STALE_LIMITS')
  end
end
redis.call('HINCRBY', KEYS[1], 'added', n)
local filters = loadfilters(KEYS[3])
if #filters > 0 then
  for i = 4, #ARGV do countadmitted(filters, ARGV[i]) end
  flushadmitted(KEYS[3], filters)
end
return 1
