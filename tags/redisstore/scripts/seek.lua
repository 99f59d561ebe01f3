-- seek: move a tag's cursor (S22, tags.SeekTarget): to a time (just
-- before the first entry whose id's ms is at or after it; a time at or
-- after now: the end of the stream, as a tag created now) or to a message
-- id (just before that entry, which must be retained).
-- Every delivery of the tag ends: its PEL (the group is made anew at the
-- cursor), its in-flight, nacked, redelivered and parked messages (v, x,
-- p, b), a topic queue's blocked topics and held messages, a priority
-- queue's lists. What lies after the cursor and is for the tag is unread
-- again, counted as tag creation counts a past start (countfor, lib.lua:
-- linear in what follows the cursor, in this one call; XLEN from the
-- oldest on an unfiltered tag); its receive counts start again at 0.
-- The totals (received, deleted, dead, expired), the config, filter,
-- visibility override and read quota stay. Dead letters on their way to
-- the DLQ (the outbox) and moves back are not the tag's deliveries: they
-- go on (a message moved back later lands at the end of the stream).
-- Receipt handles issued before the seek end with it: n's sk (the seek's
-- ms) makes settle.lua take a handle whose first receive is at or before
-- it for one of an earlier tag of the same name (it settles nothing);
-- receive.lua's deliveries in the seek's millisecond count from the next
-- one, so that no later delivery is taken for an earlier one. A
-- receive whose read may have come before the seek hands out none of
-- what it read: n's sp (the PEL epoch the seek set) against the epoch the
-- receive read (receive.lua); what it left in the PEL, read after the
-- seek, the janitor recovers as a stalled read.
-- KEYS: 1 meta, 2 tags, 3 stream, 4 n, 5 fa, 6 v, 7 p, 8 x, 9 b, 10 wk
-- ARGV: 1 tag, 2 'time' or 'id', 3 ms (time; < 1: the oldest retained
--       entry) or the message id, 4 (id) the id just before it
-- Returns: {now ms, entries after the cursor for the tag (available or
--           delayed)}
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND, MESSAGE_NOT_FOUND.
local tag = ARGV[1]
if redis.call('HEXISTS', KEYS[2], tag) == 0 then return notfound(KEYS[1]) end
local now = nowms()
local startid, from = '$', nil -- the end: nothing retained is after it
if ARGV[2] == 'id' then
  if not entry(KEYS[3], ARGV[3]) then return redis.error_reply('MESSAGE_NOT_FOUND') end
  startid, from = ARGV[4], ARGV[3]
else
  local ms = tonumber(ARGV[3])
  if ms < 1 then
    startid, from = '0', '-'
  elseif ms < now then
    startid, from = fmt(ms - 1) .. '-18446744073709551615', fmt(ms) .. '-0'
  end
end
local st = redis.call('HMGET', KEYS[4], 'flt', 'xb', 'mvd')
local flt = nil
if st[1] then flt = cjson.decode(st[1]) end
local n = 0
if from then n = countfor(KEYS[1], KEYS[3], tag, flt, from) end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('XGROUP', 'DESTROY', KEYS[3], tag) end
redis.call('XGROUP', 'CREATE', KEYS[3], tag, startid, 'MKSTREAM')
pelbump(KEYS[1]) -- a receive that read from the destroyed group must not record it
topicclear(KEYS[4])
prioclear(KEYS[4])
redis.call('DEL', KEYS[6], KEYS[7], KEYS[8], KEYS[9])
local drop = {'jpc'} -- the janitor's place in the PEL, and the in-flight counts
for _, f in ipairs(redis.call('HKEYS', KEYS[4])) do
  if string.sub(f, 1, 2) == 'w:' then drop[#drop + 1] = f end
end
redis.call('HDEL', KEYS[4], unpack(drop))
-- unread = init + admitted - con - xb - mvd (tagstate.lua) must be n from
-- here on; xb (part of the expired total) and mvd stay.
local added = redis.call('HGET', KEYS[1], 'added') or 0
redis.call('HSET', KEYS[4], 'a0', added, 'init', n + (tonumber(st[2]) or 0) + (tonumber(st[3]) or 0),
  'con', 0, 'pc', 0, 'h', fmt(INF), 'sk', now, 'sp', redis.call('HGET', KEYS[1], 'pep'))
if flt then redis.call('HSET', KEYS[5], 'a:' .. tag, 0) end
redis.call('HDEL', KEYS[5], 'm:' .. tag)
if n > 0 then wake(KEYS[10], tag, now) end
return {now, n}
