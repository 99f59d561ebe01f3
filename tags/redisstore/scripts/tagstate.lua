-- tagstate: a tag's exact counters (S12) at the current time.
-- Deliveries in the tag's PEL whose batch is due move to v first (see
-- lib.lua), at most 50 batches and 500 deliveries a call (the janitor
-- moves due batches too, as many calls as it takes: when more were due at
-- once, those left count as in flight until it has); the rest (pc) are in
-- flight.
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 p, 6 fa, 7 dl, 8 tags, 9 x, 10 b
-- ARGV: 1 tag
-- Returns: {available, in flight, delayed, received, deleted, dead,
--           expired, oldest available send ms (-1 none), now ms, create ms,
--           config JSON}
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[1]
local st = redis.call('HMGET', KEYS[3], 'ct', 'a0', 'init', 'con', 'xb', 'xi', 'rcv', 'del', 'dead', 'flt', 'mvd')
if not st[1] then return notfound(KEYS[1]) end
local now = nowms()
pelexpire({s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[9], b = KEYS[10]}, tag, now,
  tonumber(redis.call('HGET', KEYS[1], 'rpm')) or 0, 50)
local inflight = redis.call('ZCOUNT', KEYS[4], '(' .. vdue(now), '+inf')
  + tonumber(redis.call('HGET', KEYS[3], 'pc') or 0)
-- Due messages at their last receive are dead letters, not available.
local dying = redis.call('ZCOUNT', KEYS[9], '-inf', now)
local availv = redis.call('ZCOUNT', KEYS[4], '-inf', vdue(now)) - dying
local delayedp = redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf')
local availp = redis.call('ZCOUNT', KEYS[5], '-inf', now)
local flt = nil
if st[10] then flt = cjson.decode(st[10]) end
local adm
if flt then
  adm = tonumber(redis.call('HGET', KEYS[6], 'a:' .. tag) or 0)
else
  adm = tonumber(redis.call('HGET', KEYS[1], 'added')) - tonumber(st[2])
end
-- Dead letters moved back to this tag alone.
adm = adm + tonumber(redis.call('HGET', KEYS[6], 'm:' .. tag) or 0)
-- Admitted messages the tag has not read from the stream yet.
-- (mvd: unread dead letters moved back out of this queue, a DLQ.)
local unread = tonumber(st[3]) + adm - tonumber(st[4]) - tonumber(st[5]) - tonumber(st[11] or 0)
local cursor = cursors(KEYS[2])[tag] or '0-0'
local function admitted(id)
  local fields = entry(KEYS[2], id)
  return fields ~= nil and fortag(tag, flt, fieldmap(fields))
end
-- Unread messages that are still delayed.
local delayedu = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '(' .. now, '+inf')) do
  if idlt(cursor, id) and admitted(id) then delayedu = delayedu + 1 end
end
-- Oldest available: among due redeliveries, due parked, and the unread.
local oldest = -1
local function consider(id)
  local ms = idparts(id)
  if oldest < 0 or ms < oldest then oldest = ms end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', vdue(now), 'LIMIT', 0, 1000)) do consider((vparse(m))) end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, 1000)) do consider(id) end
-- A priority queue's held messages (read, not handed out: counted
-- unread): the heads of its lists (each list's first is its oldest but
-- for delayed ones that joined late).
local held = 0
if redis.call('HGET', KEYS[1], 'prq') == '1' then
  local k = priokeys({n = KEYS[3]})
  for p = 1, PRIOMAX do
    local c = tonumber(redis.call('HGET', KEYS[3], 'pq:' .. p) or 0)
    if c > 0 then
      held = held + c
      local h = redis.call('LINDEX', k.pl .. p, 0)
      if h then consider(h) end
    end
  end
end
if unread - delayedu - held > 0 then
  local from = nextid(cursor)
  for _ = 1, 10 do
    local batch = redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', 100)
    local found = false
    for _, e in ipairs(batch) do
      local f = fieldmap(e[2])
      if fortag(tag, flt, f) and (tonumber(f['d']) or 0) <= now then
        consider(e[1])
        found = true
        break
      end
    end
    if found or #batch < 100 then break end
    from = nextid(batch[#batch][1])
  end
end
return {availv + availp + unread - delayedu, inflight, delayedp + delayedu, tonumber(st[7]),
  tonumber(st[8]), tonumber(st[9]), tonumber(st[5]) + tonumber(st[6]), oldest, now, tonumber(st[1]),
  redis.call('HGET', KEYS[8], tag) or '{}'}
