-- sendpost: the second half of a send's fast path (send.go). The XADDs
-- run as plain commands (bodies never pass through Lua, whose strings
-- cost a hash of every byte) in one MULTI with this script after them.
-- It checks the limits the caller assumed and counts what was added. If
-- the queue is gone or its limits changed under the caller, it removes the
-- n entries just added (the stream's last n: nothing else ran between,
-- inside EXEC) and refuses; the caller then sends through send.lua.
-- Caps (max_retained_messages/bytes): with overflow 'reject' the entries
-- beyond the first that does not fit are removed the same way (bodies
-- read only then) and reported; with 'drop' all stay and the reply says
-- the queue is over, for the caller to trim its oldest (janitor.lua).
-- KEYS: 1 meta, 2 stream, 3 fa, 4 z (sizes), 5 zh
-- ARGV: 1 n entries added, 2 largest size among them, 3 1 = only count
--       (a repair after this script was missing from Redis's cache: the
--       entries stand, count them), 4 their sizes' sum, then the n sizes,
--       then the n attributes JSONs ('' = none). Without caps or a write
--       quota to check, the script does no work per entry (the sizes go to
--       z as they come) but for a queue with filtered tags.
-- write_quota_per_second: the entries beyond what is left of it this
-- second are removed the same way, and reported.
-- Returns: {entries kept (the first k; the others were refused as over a
--           cap or the write quota), 1 if the queue is now over a cap
--           (overflow 'drop') else 0, messages still free under the cap
--           (-1: no cap; -2: over it), bytes still free (the same), 1 if
--           the entries refused were refused by the write quota (else 0),
--           messages the write quota still takes this second (-1: no
--           quota), ms to the next second, the quota}.
-- Errors: QUEUE_NOT_FOUND, STALE_LIMITS (max_message_bytes or
--         delay_seconds changed, or content_based_deduplication is on, or
--         it is a topic or priority queue: their sends go through send.lua), NO_STREAM
--         (nothing was added).
local n = tonumber(ARGV[1])
local m = redis.call('HMGET', KEYS[1], 'mmb', 'delay', 'cmax', 'bmax', 'ovf', 'rb', 'cbd', 'wq', 'topic', 'prq')
local function unadd(count)
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', count)
  local ids = {}
  for _, e in ipairs(last) do ids[#ids + 1] = e[1] end
  if #ids > 0 then redis.call('XDEL', KEYS[2], unpack(ids)) end
end
if ARGV[3] ~= '1' then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
    return redis.error_reply('NO_STREAM')
  end
  if not m[1] or tonumber(ARGV[2]) > tonumber(m[1]) or tonumber(m[2]) ~= 0 or m[7] == '1' or m[9] == '1' or m[10] == '1' then
    unadd(n)
    if not m[1] then return redis.error_reply('QUEUE_NOT_FOUND') end
    return redis.error_reply('STALE_LIMITS')
  end
end
local q = {meta = KEYS[1], z = KEYS[4], zh = KEYS[5]}
local c = capsof(m, 3)
local len = 0
if c.msgs > 0 then len = redis.call('XLEN', KEYS[2]) end
local wq = tonumber(m[8]) or 0
local now, qleft = 0, nil -- qleft nil: no write quota (and no TIME read)
if wq > 0 then
  now = nowms()
  qleft = quotaleft(KEYS[1], 'wqs', 'wqn', wq, now)
end
local keep, bytes, byquota = n, c.rb, 0
if ARGV[3] ~= '1' and (qleft or (not c.drop and (c.msgs > 0 or c.bytes > 0))) then
  for i = 1, n do
    local sz = tonumber(ARGV[4 + i])
    if not c.drop and ((c.msgs > 0 and len - n + i > c.msgs) or (c.bytes > 0 and bytes + sz > c.bytes)) then
      keep = i - 1
      break
    end
    if qleft and i > qleft then
      keep, byquota = i - 1, 1
      break
    end
    bytes = bytes + sz
  end
end
if keep < n then
  unadd(n - keep)
  len = len - (n - keep)
end
if keep == n then
  if n > 0 then
    redis.call('RPUSH', KEYS[4], unpack(ARGV, 5, 4 + n))
    redis.call('HINCRBY', KEYS[1], 'rb', ARGV[4])
  end
  bytes = c.rb + tonumber(ARGV[4])
else
  local sizes = {}
  bytes = c.rb
  for i = 1, keep do
    sizes[i] = tonumber(ARGV[4 + i])
    bytes = bytes + sizes[i]
  end
  sizeadd(q, sizes)
end
local qafter = -1
if qleft then
  quotacharge(KEYS[1], 'wqs', 'wqn', now, wq, qleft, keep)
  qafter = math.max(qleft - keep, 0)
end
if keep > 0 then
  redis.call('HINCRBY', KEYS[1], 'added', keep)
  local filters = loadfilters(KEYS[3])
  if #filters > 0 then
    for i = 1, keep do countadmitted(filters, ARGV[4 + n + i]) end
    flushadmitted(KEYS[3], filters)
  end
end
local over, freem, freeb = 0, -1, -1
if c.msgs > 0 then freem = c.msgs - len end
if c.bytes > 0 then freeb = c.bytes - bytes end
if c.drop and (freem < 0 and c.msgs > 0 or freeb < 0 and c.bytes > 0) then over = 1 end
if c.msgs > 0 and freem < 0 then freem = -2 end
if c.bytes > 0 and freeb < 0 then freeb = -2 end
local retry = 0
if qleft then retry = quotaretry(now) end
return {keep, over, freem, freeb, byquota, qafter, retry, wq}
