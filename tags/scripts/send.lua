-- send: append messages; one call per batch, all or nothing per entry.
-- KEYS: 1 meta, 2 stream, 3 fa, 4 dl, 5 z (sizes), 6 zh
-- ARGV: 1 entry count N, then per entry 4 values: size (bytes counted
--       against max_message_bytes), delay seconds (-1 = queue default),
--       body, attributes JSON ('' = none)
-- Returns: {per entry {id} or {'MESSAGE_TOO_LARGE', limit} or
--           {'QUEUE_FULL'} (a cap with overflow 'reject': this entry and
--           every later one) or {'QUOTA_EXCEEDED', ms to the next second,
--           limit} (write_quota_per_second spent: this entry and every
--           later one), 1 if the queue is now over a cap (overflow
--           'drop': the caller trims its oldest) else 0}.
-- Errors: QUEUE_NOT_FOUND.
local m = redis.call('HMGET', KEYS[1], 'mmb', 'delay', 'cmax', 'bmax', 'ovf', 'rb', 'wq', 'wqs', 'wqn')
if not m[1] then return redis.error_reply('QUEUE_NOT_FOUND') end
local mmb, qdelay = tonumber(m[1]), tonumber(m[2])
local now = nowms()
local wq = tonumber(m[7]) or 0
local qleft = quotaleft(wq, m[8], m[9], now) -- nil: no write quota
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
for i = 1, n do
  local b = 2 + (i - 1) * 4
  local size, delay, body, attrs = tonumber(ARGV[b]), tonumber(ARGV[b + 1]), ARGV[b + 2], ARGV[b + 3]
  if size > mmb then
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
    if attrs ~= '' then
      args[#args + 1] = 'a'
      args[#args + 1] = attrs
    end
    local due = 0
    if delay > 0 then
      due = now + delay * 1000
      args[#args + 1] = 'd'
      args[#args + 1] = fmt(due)
    end
    local id = redis.call('XADD', unpack(args))
    if due > 0 then redis.call('ZADD', KEYS[4], due, id) end
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
sizeadd({meta = KEYS[1], z = KEYS[5], zh = KEYS[6]}, sizes)
flushadmitted(KEYS[3], filters)
local over = 0
if c.drop and ((c.msgs > 0 and len > c.msgs) or (c.bytes > 0 and bytes > c.bytes)) then over = 1 end
return {out, over}
