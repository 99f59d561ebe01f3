-- send: append messages; one call per batch, all or nothing per entry.
-- KEYS: 1 meta, 2 stream, 3 fa, 4 dl
-- ARGV: 1 entry count N, then per entry 4 values: size (bytes counted
--       against max_message_bytes), delay seconds (-1 = queue default),
--       body, attributes JSON ('' = none)
-- Returns: per entry {id} or {'MESSAGE_TOO_LARGE', limit}.
-- Errors: QUEUE_NOT_FOUND.
local m = redis.call('HMGET', KEYS[1], 'mmb', 'delay')
if not m[1] then return redis.error_reply('QUEUE_NOT_FOUND') end
local mmb, qdelay = tonumber(m[1]), tonumber(m[2])
local now = nowms()
local id0 = idarg(KEYS[1], now)
-- Filtered tags count what they admit, so their counters stay exact.
local filters = loadfilters(KEYS[3])
local out, added = {}, 0
local n = tonumber(ARGV[1])
for i = 1, n do
  local b = 2 + (i - 1) * 4
  local size, delay, body, attrs = tonumber(ARGV[b]), tonumber(ARGV[b + 1]), ARGV[b + 2], ARGV[b + 3]
  if size > mmb then
    out[i] = {'MESSAGE_TOO_LARGE', mmb}
  else
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
    out[i] = {id}
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'added', added)
end
flushadmitted(KEYS[3], filters)
return out
