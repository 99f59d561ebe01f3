-- dead: DeadMessage (S8). For each handle of the tag's latest receive,
-- stage the message in the dead-letter outbox and remove it from the tag
-- (an ACK for that tag alone).
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 x, 6 dlo
-- ARGV: 1 queue name, 2 tag, then quintuples: message id, first receive
--       ms, generation, reason, description
-- Returns: per quintuple 1 (dead-lettered) or 0 (stale: received again,
-- deleted, or expired).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND, NOT_A_SOURCE_QUEUE.
local tag = ARGV[2]
if redis.call('EXISTS', KEYS[3]) == 0 then return notfound(KEYS[1]) end
local dlq = redis.call('HGET', KEYS[1], 'rpq')
if not dlq then return redis.error_reply('NOT_A_SOURCE_QUEUE') end
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[5], dlo = KEYS[6]}
local now = nowms()
local res = {}
for i = 3, #ARGV, 5 do
  local id, gen = ARGV[i], tonumber(ARGV[i + 2])
  local m = vmember(id, tonumber(ARGV[i + 1]))
  local sc = redis.call('ZSCORE', KEYS[4], m)
  local cnt = -1
  if sc then
    local _, c = vdecode(sc)
    cnt = c
  end
  local fields = nil
  if cnt == gen then
    fields = entry(KEYS[2], id)
    if not fields then vremove(k, m, id) end -- trimmed under us
  end
  if fields then
    todeadletter(k, ARGV[1], tag, id, m, fields, cnt, ARGV[i + 3], ARGV[i + 4], now, dlq)
    res[#res + 1] = 1
  else
    res[#res + 1] = 0
  end
end
return res
