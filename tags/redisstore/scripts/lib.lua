-- lib.lua: helpers prepended to every script (scripts cannot share code).

-- Redis server time in ms: one clock for every tagqd replica. (A store
-- made with Config.TestClock runs these scripts with testclock.lua after
-- this file, which replaces nowms; production scripts read no test hook.)
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local TESTCLOCK = false

-- "No deadline": larger than any ms timestamp, exact as a Lua double.
local INF = 9007199254740991

local function fmt(n)
  return string.format('%.0f', n)
end

-- Stream id parts; accepts "ms-seq" and "ms" (miniredis keeps ids as given).
local function idparts(id)
  local ms, seq = string.match(id, '^(%d+)-?(%d*)$')
  if not ms then return 0, 0 end
  if seq == '' then seq = '0' end
  return tonumber(ms), tonumber(seq)
end

-- The ms part of a stream id (cheaper than idparts: no pattern).
local function idms(id)
  local dash = string.find(id, '-', 1, true)
  if dash then return tonumber(string.sub(id, 1, dash - 1)) end
  return tonumber(id) or 0
end

local function idlt(a, b)
  local am, as = idparts(a)
  local bm, bs = idparts(b)
  if am ~= bm then return am < bm end
  return as < bs
end

-- The smallest id greater than id.
local function nextid(id)
  local ms, seq = string.match(id, '^(%d+)-?(%d*)$')
  if seq == '18446744073709551615' then return fmt(tonumber(ms) + 1) .. '-0' end
  if seq == '' then seq = '0' end
  return ms .. '-' .. fmt(tonumber(seq) + 1)
end

-- Stream entry fields (flat list) to a table.
local function fieldmap(f)
  local m = {}
  for i = 1, #f, 2 do m[f[i]] = f[i + 1] end
  return m
end

-- Does a tag filter admit a message with these attributes (JSON or nil)?
-- Filter: {o = 1 for OR else AND, c = {{n = name, v = optional value}}}.
-- Attributes: {name = {s = string} | {b = base64}}.
local function admits(flt, attrs)
  if not flt then return true end
  local a = {}
  if attrs and attrs ~= '' then a = cjson.decode(attrs) end
  local anyof = flt.o == 1
  for _, c in ipairs(flt.c) do
    local av = a[c.n]
    local ok = av ~= nil and (c.v == nil or av.s == c.v)
    if anyof and ok then return true end
    if not anyof and not ok then return false end
  end
  return not anyof
end

-- Last-delivered id of every consumer group (tag) of a stream.
local function cursors(stream)
  local out = {}
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local m = fieldmap(g)
    out[m['name']] = m['last-delivered-id']
  end
  return out
end

local function notfound(meta)
  if redis.call('EXISTS', meta) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
  return redis.error_reply('TAG_NOT_FOUND')
end

-- Wake waiting receives of tag on every process: messages become visible at ms.
local function wake(key, tag, at)
  redis.call('XADD', key, 'MAXLEN', '~', 1000, '*', 't', tag, 'at', fmt(at))
end

-- Checks that names (ARGV[first..]) are exactly the queue's tags, so the
-- per-tag KEYS the caller passed are complete.
local function sametags(tagskey, first)
  if redis.call('HLEN', tagskey) ~= #ARGV - first + 1 then return false end
  for i = first, #ARGV do
    if redis.call('HEXISTS', tagskey, ARGV[i]) == 0 then return false end
  end
  return true
end

-- Filtered tags of a queue (from its fa hash), for counting admissions.
local function loadfilters(fakey)
  local filters = {}
  local fa = redis.call('HGETALL', fakey)
  for i = 1, #fa, 2 do
    local name = string.match(fa[i], '^f:(.*)$')
    if name then filters[#filters + 1] = {name = name, flt = cjson.decode(fa[i + 1]), n = 0} end
  end
  return filters
end

local function countadmitted(filters, attrs)
  for _, f in ipairs(filters) do
    if admits(f.flt, attrs) then f.n = f.n + 1 end
  end
end

local function flushadmitted(fakey, filters)
  for _, f in ipairs(filters) do
    if f.n > 0 then redis.call('HINCRBY', fakey, 'a:' .. f.name, f.n) end
  end
end

-- The id argument of an XADD: '*' (Redis's own clock, which TIME reads,
-- never going back). Under a test clock: that clock's ms, never going back
-- either (lms keeps the last one).
local function idarg(meta, now)
  if not TESTCLOCK then return '*' end
  local ms = math.max(now, tonumber(redis.call('HGET', meta, 'lms') or 0) or 0)
  redis.call('HSET', meta, 'lms', fmt(ms))
  return fmt(ms) .. '-*'
end
-- A tag's in-flight messages are one zset (v), the only per-message state
-- a tag keeps for them (no PEL: tags read with NOACK):
--   member "<id>:<d>", d = first receive ms - id ms (fixed while in flight,
--          so every receipt handle of the message names the same member);
--   score  (deadline ms - VEPOCH) * 4096 + receive count (capped at 4095):
--          ordered by deadline, exact below 2^53 until the year 2093.
-- The tag's state hash n counts in-flight members per second of message
-- id ("w:<id seconds>"), so the janitor can tell which entries may be held.
local VEPOCH = 1700000000000
local VCNT = 4096
local function vscore(deadline, cnt)
  return fmt((deadline - VEPOCH) * VCNT + math.min(cnt, VCNT - 1))
end
-- Deadline ms and receive count of a score.
local function vdecode(score)
  score = tonumber(score)
  local cnt = score % VCNT
  return (score - cnt) / VCNT + VEPOCH, cnt
end
-- The largest score due at ms (deadline <= ms).
local function vdue(ms)
  return vscore(ms, VCNT - 1)
end
-- (Numbers below 1e14 concatenate as exact integers, as offsets and
-- seconds are; scores are larger and go through fmt.)
local function vmember(id, first)
  return id .. ':' .. (first - idms(id))
end
-- Message id and first receive ms of a member.
local function vparse(m)
  local id, d = string.match(m, '^(.*):(-?%d+)$')
  return id, idms(id) + tonumber(d)
end
-- "w:" and the id's seconds: its ms digits but the last three (string
-- work only: number formatting is the dearest thing per message here).
local function wfield(id)
  local dash = string.find(id, '-', 1, true)
  if dash and dash > 4 then return 'w:' .. string.sub(id, 1, dash - 4) end
  return 'w:' .. math.floor(idms(id) / 1000)
end
-- Count members entering (+1) or leaving (-1) a tag's v, by id.
local function vcount(n, ids, delta)
  local by = {}
  for _, id in ipairs(ids) do
    local f = wfield(id)
    by[f] = (by[f] or 0) + delta
  end
  for f, d in pairs(by) do
    if redis.call('HINCRBY', n, f, d) <= 0 then redis.call('HDEL', n, f) end
  end
end
-- May tag (state hash n) hold id in v? (true also for other ids of the same second)
local function mayhold(n, id)
  return (tonumber(redis.call('HGET', n, wfield(id))) or 0) > 0
end
-- The v member of id, found by scanning (for the rare callers without a
-- receipt handle: retention expiry and moves out of a DLQ).
local function vfind(v, id)
  local cursor = '0'
  local pat = id .. ':*' -- ids are digits and '-': nothing to escape
  repeat
    local r = redis.call('ZSCAN', v, cursor, 'MATCH', pat, 'COUNT', 1000)
    cursor = r[1]
    if r[2][1] then return r[2][1] end
  until cursor == '0'
  return nil
end
-- Topic queues (S13). Per tag T of a topic queue, keys named after T's
-- state key n ("…t:T:n"; a topic is known only inside a script, so the
-- per-topic lists cannot be KEYS; all share the queue's slot):
--   t:T:tb          hash  "t:<topic>" -> the id that blocks the topic for T
--                         (a member of v: in flight, nacked, or read and
--                         waiting there with receive count 0), or "-" when
--                         none does but messages wait (the topic is in tr);
--                         "i:<id>" -> topic, for every blocking id
--   t:T:tr          list  ready topics: unblocked, with messages held
--   t:T:th:<topic>  list  ids held for the topic, in send order: read from
--                         the stream while the topic was blocked or ready
-- A topic has an entry in tb exactly while it blocks or has held ids, so
-- finding a ready topic is an LPOP, whatever the number of blocked ones.
-- Held ids count in n's w:<second> (the janitor keeps their entries) but
-- not in con (the tag's counters show them available, not yet handed
-- out). Topic queues' tags keep in-flight messages in v only (zset mode).
local function topickeys(k)
  local base = string.sub(k.n, 1, -2)
  k.tb, k.tr, k.th = base .. 'tb', base .. 'tr', base .. 'th:'
  return k
end
-- Blocking id id of tag k left v for good (deleted, dead, expired): its
-- topic unblocks; the next held id of it waits in tr (k.released counts
-- topics made ready, for the caller to wake receivers).
local function topicrelease(k, id)
  local tp = redis.call('HGET', k.tb, 'i:' .. id)
  if not tp then return end
  redis.call('HDEL', k.tb, 'i:' .. id)
  if redis.call('HGET', k.tb, 't:' .. tp) ~= id then return end
  if redis.call('EXISTS', k.th .. tp) == 1 then
    redis.call('HSET', k.tb, 't:' .. tp, '-')
    redis.call('RPUSH', k.tr, tp)
    k.released = (k.released or 0) + 1
  else
    redis.call('HDEL', k.tb, 't:' .. tp)
  end
end
-- Takes id, held for topic tp, out of tag k's held list (it leaves the
-- queue: expired, or a dead letter moved out of its DLQ): true when it was
-- held. The caller counts it.
local function topicunhold(k, tp, id)
  if redis.call('LREM', k.th .. tp, 1, id) == 0 then return false end
  vcount(k.n, {id}, -1)
  if redis.call('EXISTS', k.th .. tp) == 0 and redis.call('HGET', k.tb, 't:' .. tp) == '-' then
    redis.call('LREM', k.tr, 1, tp)
    redis.call('HDEL', k.tb, 't:' .. tp)
  end
  return true
end
-- Removes every topic key of a tag (its state key n).
local function topicclear(n)
  local k = topickeys({n = n})
  for _, f in ipairs(redis.call('HKEYS', k.tb)) do
    local tp = string.match(f, '^t:(.*)$')
    if tp then redis.call('DEL', k.th .. tp) end
  end
  redis.call('DEL', k.tb, k.tr)
end
-- Priority queues (EMQ priority 1-16, 1 highest, default 8). Per tag T
-- of a priority queue, keys named after T's state key n as topic lists are:
--   t:T:pl:<p>  list  ids held for T with priority p, in the order they
--                     were read (stream order, but for delayed messages,
--                     which join when due)
-- and fields of n: "pq:<p>" the length of pl:<p>, absent when 0 (so a receive reads 16
-- counts in one call instead of probing 16 lists), "pk" the messages T
-- handed out from the lists (every PRIOOLD-th is the oldest held one,
-- whatever its priority: the starvation rule). Held ids count in n's
-- w:<second> (the janitor keeps their entries) but not in con (available,
-- not yet handed out), as topic queues' held ids. Its tags run in zset
-- mode and read new entries inside the receive script (up to PRIOREAD a
-- call, fewer past PRIOBYTES: receive.lua), so a new high-priority
-- message passes held ones.
local PRIODEF = 8
local PRIOMAX = 16
local PRIOOLD = 10
local function priokeys(k)
  k.pl = string.sub(k.n, 1, -2) .. 'pl:'
  return k
end
-- The priority of a stream entry's field table.
local function prioof(f)
  local p = tonumber(f['pr'])
  if not p or p < 1 or p > PRIOMAX then return PRIODEF end
  return p
end
-- Holds ids (all of priority p) for tag k, after those held already.
local function priohold(k, p, ids)
  if #ids == 0 then return end
  redis.call('RPUSH', k.pl .. p, unpack(ids))
  redis.call('HINCRBY', k.n, 'pq:' .. p, #ids)
  vcount(k.n, ids, 1)
end
-- Takes id (priority p) out of tag k's held list (it leaves the queue:
-- expired, or a dead letter moved out of its DLQ): true when it was held.
-- The caller counts it.
local function priounhold(k, p, id)
  if redis.call('LREM', k.pl .. p, 1, id) == 0 then return false end
  if redis.call('HINCRBY', k.n, 'pq:' .. p, -1) <= 0 then redis.call('HDEL', k.n, 'pq:' .. p) end
  vcount(k.n, {id}, -1)
  return true
end
-- Removes every priority list of a tag (its state key n) and their counts.
local function prioclear(n)
  local k = priokeys({n = n})
  local keys, fields = {}, {}
  for p = 1, PRIOMAX do
    keys[p] = k.pl .. p
    fields[p] = 'pq:' .. p
  end
  redis.call('DEL', unpack(keys))
  redis.call('HDEL', n, unpack(fields))
end
-- The wake stream of the queue whose meta key is meta.
local function wakekey(meta)
  return string.sub(meta, 1, -2) .. 'wk'
end

-- Removes member m (message id) from a tag's in-flight set and last-chance set.
local function vremove(k, m, id)
  if redis.call('ZREM', k.v, m) == 1 then
    vcount(k.n, {id}, -1)
    if k.tb then topicrelease(k, id) end
  end
  redis.call('ZREM', k.x, m)
end

-- Stream deliveries stay in the tag's PEL (where XREADGROUP put them)
-- until settled or due: each has receive count 1, and the receive that
-- handed them out recorded its batch once in the tag's b zset:
--   member "<first id> <last id> <first receive ms>" (the ids the batch's
--          XREADGROUP read: consecutive entries, so batches never overlap;
--          those not handed out were acknowledged at once),
--   score  the batch's visibility deadline ms.
-- n's pc counts these deliveries. A settlement takes one out with XACK
-- (into v, under member vmember(id, first receive ms), when it stays in
-- flight); once its batch is due, pelexpire moves what is left into v, so
-- redeliveries, dead-lettering and counting see one representation.
-- (PEL idle times follow Redis's wall clock, which neither a nack's delay
-- nor a test clock can set: XCLAIM clamps a future TIME to now.)
local function brecord(first, last, fms)
  return first .. ' ' .. last .. ' ' .. fms
end
local function bparse(m)
  local a, b, f = string.match(m, '^(%S+) (%S+) (%S+)$')
  return a, b, tonumber(f)
end
-- Ids pending in tag's PEL between first and last.
local function pelids(s, tag, first, last, cap)
  local out = {}
  for _, p in ipairs(redis.call('XPENDING', s, tag, first, last, cap)) do out[#out + 1] = p[1] end
  return out
end
-- Moves the deliveries of up to limit batches due at now from the PEL
-- into v (receive count 1, the batch's deadline; x too when the max
-- receive count is 1), and no more batches once PELMOVE deliveries moved
-- (a batch holds at most 100). k: s, n, v, x, b. True when more may be
-- due, and the batches moved.
local PELMOVE = 500
local function pelexpire(k, tag, now, maxrc, limit)
  local due = redis.call('ZRANGEBYSCORE', k.b, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  local moved, done = 0, 0
  for j = 1, #due, 2 do
    if moved >= PELMOVE then return true, done end
    local first, last, fms = bparse(due[j])
    local at = tonumber(due[j + 1])
    local ids = pelids(k.s, tag, first, last, 1000)
    if #ids > 0 then
      redis.call('XACK', k.s, tag, unpack(ids))
      local zv, zx, sc = {}, {}, vscore(at, 1)
      for _, id in ipairs(ids) do
        local m = vmember(id, fms)
        zv[#zv + 1] = sc
        zv[#zv + 1] = m
        if maxrc == 1 then
          zx[#zx + 1] = at
          zx[#zx + 1] = m
        end
      end
      redis.call('ZADD', k.v, unpack(zv))
      if #zx > 0 then redis.call('ZADD', k.x, unpack(zx)) end
      vcount(k.n, ids, 1)
      redis.call('HINCRBY', k.n, 'pc', -#ids)
    end
    redis.call('ZREM', k.b, due[j])
    moved, done = moved + #ids, done + 1
  end
  return #due == 2 * limit, done
end
-- A tag's batches as ranges sorted by first id, for covers (rare paths:
-- telling deliveries from reads whose receive script never ran).
local function branges(bkey)
  local r = {}
  for _, m in ipairs(redis.call('ZRANGE', bkey, 0, -1)) do
    local a, b = bparse(m)
    r[#r + 1] = {a, b}
  end
  table.sort(r, function(x, y) return idlt(x[1], y[1]) end)
  return r
end
-- Is id in one of the ranges (a delivery, counted in pc)?
local function covers(ranges, id)
  local lo, hi, best = 1, #ranges, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if idlt(id, ranges[mid][1]) then
      hi = mid - 1
    else
      best = mid
      lo = mid + 1
    end
  end
  return best ~= nil and not idlt(ranges[best][2], id)
end
-- Retry backoff (tags/policy.go has the rule): ms a message that a tag
-- received cnt times waits before it is available again, for a queue
-- whose meta holds a retry policy (rbo: "<min s> <max s>"), nil when it
-- holds none (rbo absent). Drawn from [b, min(max, 2b)] s, b = min(max,
-- min*2^(cnt-1)), by a hash of key (the v member and the time: no random
-- source in scripts), so messages that fail together spread.
local function backoffms(rbo, cnt, key)
  if not rbo then return nil end
  local lo, hi = string.match(rbo, '^(%d+) (%d+)$')
  if not lo then return nil end
  local rbx = tonumber(hi)
  local b = tonumber(lo)
  local i = 1
  while i < cnt and b < rbx do
    b = b * 2
    i = i + 1
  end
  if b > rbx then b = rbx end
  hi = math.min(2 * b, rbx)
  if hi <= b then return b * 1000 end
  local h = 5381
  for j = 1, #key do h = (h * 33 + string.byte(key, j)) % 2147483647 end
  h = (h * 48271) % 2147483647
  h = (h * 48271) % 2147483647
  return b * 1000 + h % ((hi - b) * 1000 + 1)
end
-- A queue's lease on one kind of background work (janitor, sweeper): the
-- meta hash's field holds "owner expiry-ms" (server time, nowms). Held by
-- another owner until its expiry: returns the ms left, and the caller
-- does nothing. Otherwise (free, lapsed, or owner's own) it is taken or
-- renewed for ms and 0 returned. Owner '' (a pass a caller asked for
-- explicitly) neither checks nor takes it.
local function lease(meta, field, owner, ms, now)
  if owner == '' then return 0 end
  local cur = redis.call('HGET', meta, field)
  if cur then
    local o, exp = string.match(cur, '^(%S+) (%d+)$')
    if o and o ~= owner and tonumber(exp) > now then return tonumber(exp) - now end
  end
  redis.call('HSET', meta, field, owner .. ' ' .. fmt(now + ms))
  return 0
end
-- Something took entries out of a tag's PEL that a receive may have read
-- and not yet recorded (see receive.lua's epoch).
local function pelbump(meta)
  redis.call('HINCRBY', meta, 'pep', 1)
end
-- The start of the second of id: in-flight entries are known to the
-- janitor per second of id (v's counts in n), PEL ones likewise.
local function secstart(id)
  return fmt(math.floor(idms(id) / 1000) * 1000) .. '-0'
end

-- Stages a message in the queue's dead-letter outbox and removes it from
-- the tag (an ACK for that tag). fields are the stream entry's fields; m
-- is its member of the tag's v.
local function todeadletter(k, qname, tag, id, m, fields, cnt, reason, desc, now, dlq)
  local f = fieldmap(fields)
  local args = {k.dlo, '*', 'b', f['b'] or '', 'sq', qname, 'st', tag, 'id', id, 'oi', f['oi'] or id,
    'rc', cnt, 'r', reason, 'ts', fmt(now), 'dq', dlq}
  if f['a'] then
    args[#args + 1] = 'a'
    args[#args + 1] = f['a']
  end
  if desc and desc ~= '' then
    args[#args + 1] = 'ds'
    args[#args + 1] = desc
  end
  if f['mv'] then
    args[#args + 1] = 'mv'
    args[#args + 1] = f['mv']
  end
  if f['tp'] then
    args[#args + 1] = 'tp'
    args[#args + 1] = f['tp']
  end
  if f['pr'] then
    args[#args + 1] = 'pr'
    args[#args + 1] = f['pr']
  end
  redis.call('XADD', unpack(args))
  vremove(k, m, id)
  redis.call('HINCRBY', k.n, 'dead', 1)
end

-- The embedded store (miniredis, Config.Embedded) finds a stream entry by
-- id, and what lies after an id, by scanning the stream from its start:
-- scripts built for it (EMBEDDED set true after this file) use commands
-- that it does in log time instead.
local EMBEDDED = false

-- Fields of stream entry id, or nil when it was trimmed. (XRANGE id id:
-- log time on Redis. On the embedded store, XCLAIM FORCE on a group no
-- tag reads, ':get', then XACK: it finds the entry by id.)
local function entry(stream, id)
  if EMBEDDED then
    local r = redis.pcall('XCLAIM', stream, ':get', 'c', 0, id, 'FORCE')
    if r.err then -- no such group yet (or no stream: no entry)
      if redis.pcall('XGROUP', 'CREATE', stream, ':get', '$').err then return nil end
      r = redis.call('XCLAIM', stream, ':get', 'c', 0, id, 'FORCE')
    end
    redis.call('XACK', stream, ':get', id)
    if r[1] and r[1][1] == id then return r[1][2] end
    return nil
  end
  local e = redis.call('XRANGE', stream, id, id)
  if e[1] then return e[1][2] end
  return nil
end

-- Is an entry (its field table) for this tag? A moved-back dead letter
-- (field only) is for the tag it died in alone; others by the filter.
local function fortag(tag, flt, f)
  if f['only'] then return f['only'] == tag end
  return admits(flt, f['a'])
end

-- Retained entries of stream from id from on ('-': the oldest) that are
-- for tag (filter flt): XLEN when that is all of them (from the oldest,
-- no filter, no moved-back dead letter in the queue: meta's mvb), else
-- counted page by page, 1,000 entries a page, all in this call (linear
-- in what lies after from: tag creation from a past start, seeks).
local function countfor(meta, stream, tag, flt, from)
  if from == '-' and not flt and not redis.call('HGET', meta, 'mvb') then
    return redis.call('XLEN', stream)
  end
  local n = 0
  while true do
    local batch = redis.call('XRANGE', stream, from, '+', 'COUNT', 1000)
    for _, e in ipairs(batch) do
      if fortag(tag, flt, fieldmap(e[2])) then n = n + 1 end
    end
    if #batch < 1000 then return n end
    from = nextid(batch[#batch][1])
  end
end

-- Retained bytes and caps. A queue's z list holds the size of each stream
-- entry in stream order (every XADD to the stream appends one; sizes as
-- max_message_bytes counts them); meta 'rb' is their sum. An entry
-- deleted out of order (a dead letter moved out of its DLQ) stays in z
-- and is noted in zh as "id:size" (score: the id's ms), its size already
-- taken off rb, so that trims of the head stay aligned with z. Entries
-- older than the bookkeeping (a queue made before it) have no size: z
-- holds fewer sizes than the stream entries, and trims of those take
-- nothing off (q.unknown counts them; see sizestate).
-- q: {meta, z, zh} keys.

-- Notes sizes (a table of numbers, in stream order) of entries just added.
local function sizeadd(q, sizes)
  if #sizes == 0 then return end
  local total = 0
  for _, v in ipairs(sizes) do total = total + v end
  redis.call('RPUSH', q.z, unpack(sizes))
  redis.call('HINCRBY', q.meta, 'rb', total)
end

-- Counts the head entries of stream that have no size in z (q.unknown)
-- and the holes (q.holes), for sizetrim; call it before the stream is
-- trimmed.
local function sizestate(q, stream)
  q.holes = redis.call('ZCARD', q.zh)
  q.unknown = math.max(redis.call('XLEN', stream) + q.holes - redis.call('LLEN', q.z), 0)
  return q
end

-- Takes n entries trimmed from the head of the stream, every one with an
-- id below upto, off z and rb; returns their bytes. q went through
-- sizestate first.
local function sizetrim(q, n, upto)
  local nosize = math.min(n, q.unknown)
  q.unknown = q.unknown - nosize
  n = n - nosize
  if n <= 0 then return 0 end
  local skip, holed = 0, 0
  if q.holes > 0 then
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', q.zh, '-inf', idms(upto))) do
      local id, sz = string.match(m, '^(.*):(%d+)$')
      if idlt(id, upto) then
        redis.call('ZREM', q.zh, m)
        q.holes = q.holes - 1
        skip = skip + 1
        holed = holed + tonumber(sz)
      end
    end
  end
  local sum = 0
  for _, v in ipairs(redis.call('LPOP', q.z, n + skip) or {}) do sum = sum + tonumber(v) end
  sum = math.max(sum - holed, 0)
  if sum > 0 then redis.call('HINCRBY', q.meta, 'rb', -sum) end
  return sum
end

-- Notes entry id (of size sz, in z) deleted out of order.
local function sizehole(q, id, sz)
  redis.call('ZADD', q.zh, idms(id), id .. ':' .. fmt(sz))
  if sz > 0 then redis.call('HINCRBY', q.meta, 'rb', -sz) end
end

-- A queue's caps as its meta holds them: {msgs = max messages (0 none),
-- bytes = max bytes (0 none), drop = overflow drops the oldest, rb = bytes
-- retained}, from the values of an HMGET of 'cmax', 'bmax', 'ovf', 'rb'
-- starting at m[i] (read with other fields in one call).
local function capsof(m, i)
  return {msgs = tonumber(m[i]) or 0, bytes = tonumber(m[i + 1]) or 0, drop = m[i + 2] == 'drop',
    rb = tonumber(m[i + 3]) or 0}
end

-- How far a queue (caps c, stream) that drops its oldest is over its
-- caps: {msgs, bytes} (<= 0: within; always so when it does not drop).
local function capexcess(c, stream)
  local over = {msgs = 0, bytes = 0}
  if not c.drop then return over end
  if c.msgs > 0 then over.msgs = redis.call('XLEN', stream) - c.msgs end
  if c.bytes > 0 then over.bytes = c.rb - c.bytes end
  return over
end

-- Rate quotas (quota.go): a count per second of the scripts' clock, kept
-- as two fields of a hash (key): the second (secfield) and the count in it
-- (cntfield), both absent before the first charge. What is left of limit
-- (0 or nil: no quota, and the result is nil) in now's second. The fields
-- are read only when there is a quota: a field a small hash lacks costs a
-- scan of all of it.
local function quotaleft(key, secfield, cntfield, limit, now)
  limit = tonumber(limit) or 0
  if limit <= 0 then return nil end
  local c = redis.call('HMGET', key, secfield, cntfield)
  if tonumber(c[1]) ~= math.floor(now / 1000) then return limit end
  return math.max(limit - (tonumber(c[2]) or 0), 0)
end
-- Charges n to a quota that had left of limit in now's second.
local function quotacharge(key, secfield, cntfield, now, limit, left, n)
  if n <= 0 then return end
  redis.call('HSET', key, secfield, fmt(math.floor(now / 1000)), cntfield, fmt(limit - left + n))
end
-- ms until now's second ends.
local function quotaretry(now)
  return 1000 - now % 1000
end
