-- send: append messages; one call per batch, all or nothing per entry.
-- Deduplication: an entry with a deduplication id the queue stored a
-- message under less than the window ago (sdx: id -> window end ms; sd:
-- id -> message id) stores nothing, whatever the queue's limits, and
-- answers with that message's id; a stored entry with an id records it
-- for the window (from now: a duplicate does not extend it). Entries are
-- taken in order, so a second entry of the batch with the id of a first
-- is its duplicate. An entry refused (too large, queue full) records
-- nothing. Calls with ids first prune up to N+100 ids past their window.
-- Topic (S13): stored as field tp; an entry needs one on a topic queue
-- and may have none elsewhere (else refused: TOPIC_REQUIRED,
-- TOPIC_NOT_ALLOWED; the caller checked, but against a cached flag).
-- Priority (priority queues): stored as field pr when not the default 8;
-- an entry with one on another queue is refused (PRIORITY_NOT_ALLOWED).
-- The caller checked the range.
-- KEYS: 1 meta, 2 stream, 3 fa, 4 dl, 5 z (sizes), 6 zh, 7 sd, 8 sdx
-- ARGV: 1 entry count N, 2 deduplication window ms, 3 '1' when the caller
--       made content-based ids (it knows the queue has
--       content_based_deduplication) else '0', then per entry 7 values:
--       size (bytes counted against max_message_bytes), delay seconds
--       (-1 = queue default), body, attributes JSON ('' = none),
--       deduplication id ('' = none), topic ('' = none), priority (0 = none)
-- Returns: {per entry {id} or {'DUPLICATE', id of the message first
--           stored under its deduplication id} or {'MESSAGE_TOO_LARGE',
--           limit} or {'QUEUE_FULL'} (a cap with overflow 'reject': this
--           entry and every later one not a duplicate) or
--           {'QUOTA_EXCEEDED', ms to the next second, limit} or
--           {'TOPIC_REQUIRED'} or {'TOPIC_NOT_ALLOWED'} or {'PRIORITY_NOT_ALLOWED'}
--           (write_quota_per_second spent: this entry and every later one
--           not a duplicate), 1 if the queue is now over a cap (overflow
--           'drop': the caller trims its oldest) else 0}.
-- Errors: QUEUE_NOT_FOUND; STALE_LIMITS (the queue's
--         content_based_deduplication is not what ARGV[3] says: nothing
--         stored, the caller reads the queue again).
local m = redis.call('HMGET', KEYS[1], 'mmb', 'delay', 'cmax', 'bmax', 'ovf', 'rb', 'cbd', 'wq', 'topic', 'prq')
local tq = m[9] == '1'
local pq = m[10] == '1'
if not m[1] then return redis.error_reply('QUEUE_NOT_FOUND') end
if (m[7] == '1') ~= (ARGV[3] == '1') then return redis.error_reply('STALE_LIMITS') end
local mmb, qdelay = tonumber(m[1]), tonumber(m[2])
local now = nowms()
local wq = tonumber(m[8]) or 0
local qleft = quotaleft(KEYS[1], 'wqs', 'wqn', wq, now) -- nil: no write quota
local left0 = qleft
local id0 = idarg(KEYS[1], now)
-- Filtered tags count what they admit, so their counters stay exact.
local filters = loadfilters(KEYS[3])
local c = capsof(m, 3)
local len = 0
if c.msgs > 0 then len = redis.call('XLEN', KEYS[2]) end
local bytes = c.rb
local full = false
local out, added, sizes = {}, 0, {}
local n = tonumber(ARGV[1])
local window, dups = tonumber(ARGV[2]), 0
for i = 1, n do
  if ARGV[8 + (i - 1) * 7] ~= '' then
    local past = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', now, 'LIMIT', 0, n + 100)
    if #past > 0 then
      redis.call('ZREM', KEYS[8], unpack(past))
      redis.call('HDEL', KEYS[7], unpack(past))
    end
    break
  end
end
for i = 1, n do
  local b = 4 + (i - 1) * 7
  local size, delay, body, attrs, did = tonumber(ARGV[b]), tonumber(ARGV[b + 1]), ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]
  local topic, prio = ARGV[b + 5], tonumber(ARGV[b + 6]) or 0
  local first = nil
  if did ~= '' then
    local ends = redis.call('ZSCORE', KEYS[8], did)
    if ends and tonumber(ends) > now then first = redis.call('HGET', KEYS[7], did) end
  end
  if tq and topic == '' then
    out[i] = {'TOPIC_REQUIRED'}
  elseif not tq and topic ~= '' then
    out[i] = {'TOPIC_NOT_ALLOWED'}
  elseif not pq and prio ~= 0 then
    out[i] = {'PRIORITY_NOT_ALLOWED'}
  elseif first then
    out[i] = {'DUPLICATE', first}
    dups = dups + 1
  elseif size > mmb then
    out[i] = {'MESSAGE_TOO_LARGE', mmb}
  elseif full or (not c.drop and ((c.msgs > 0 and len + 1 > c.msgs) or (c.bytes > 0 and bytes + size > c.bytes))) then
    full = true
    out[i] = {'QUEUE_FULL'}
  elseif qleft and qleft <= 0 then
    out[i] = {'QUOTA_EXCEEDED', quotaretry(now), wq}
  else
    if qleft then qleft = qleft - 1 end
    if delay < 0 then delay = qdelay end
    local args = {KEYS[2], id0, 'b', body}
    if topic ~= '' then
      args[#args + 1] = 'tp'
      args[#args + 1] = topic
    end
    if attrs ~= '' then
      args[#args + 1] = 'a'
      args[#args + 1] = attrs
    end
    if prio ~= 0 and prio ~= PRIODEF then
      args[#args + 1] = 'pr'
      args[#args + 1] = fmt(prio)
    end
    local due = 0
    if delay > 0 then
      due = now + delay * 1000
      args[#args + 1] = 'd'
      args[#args + 1] = fmt(due)
    end
    local id = redis.call('XADD', unpack(args))
    if due > 0 then redis.call('ZADD', KEYS[4], due, id) end
    if did ~= '' then
      redis.call('ZADD', KEYS[8], fmt(now + window), did)
      redis.call('HSET', KEYS[7], did, id)
    end
    countadmitted(filters, attrs)
    added = added + 1
    sizes[#sizes + 1] = size
    len = len + 1
    bytes = bytes + size
    out[i] = {id}
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'added', added)
  if qleft then quotacharge(KEYS[1], 'wqs', 'wqn', now, wq, left0, added) end
end
if dups > 0 then
  redis.call('HINCRBY', KEYS[1], 'ddn', dups)
end
sizeadd({meta = KEYS[1], z = KEYS[5], zh = KEYS[6]}, sizes)
flushadmitted(KEYS[3], filters)
local over = 0
if c.drop and ((c.msgs > 0 and len > c.msgs) or (c.bytes > 0 and bytes > c.bytes)) then over = 1 end
return {out, over}
