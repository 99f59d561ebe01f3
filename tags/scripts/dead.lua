-- dead: DeadMessage (S8). For each handle of the tag's latest receive,
-- stage the message in the dead-letter outbox and remove it from the tag
-- (an ACK for that tag alone).
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 rc, 6 x, 7 dlo
-- ARGV: 1 queue name, 2 tag, then quadruples: message id, generation,
--       reason, description
-- Returns: per quadruple 1 (dead-lettered) or 0 (stale: received again,
-- deleted, or expired).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND, NOT_A_SOURCE_QUEUE.
local tag = ARGV[2]
if redis.call('EXISTS', KEYS[3]) == 0 then return notfound(KEYS[1]) end
local dlq = redis.call('HGET', KEYS[1], 'rpq')
if not dlq then return redis.error_reply('NOT_A_SOURCE_QUEUE') end
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], rc = KEYS[5], x = KEYS[6], dlo = KEYS[7]}
local now = nowms()
local res = {}
for i = 3, #ARGV, 4 do
  local id, gen = ARGV[i], tonumber(ARGV[i + 1])
  local rc = redis.call('HGET', KEYS[5], id)
  local cnt = rc and tonumber(string.match(rc, '^(%d+)|'))
  local fields = nil
  if cnt == gen then
    local c = redis.call('XCLAIM', KEYS[2], tag, 'c', 0, id)
    if c[1] and type(c[1]) == 'table' and type(c[1][2]) == 'table' then fields = c[1][2] end
  end
  if fields then
    todeadletter(k, ARGV[1], tag, id, fields, cnt, ARGV[i + 2], ARGV[i + 3], now, dlq)
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
return res
