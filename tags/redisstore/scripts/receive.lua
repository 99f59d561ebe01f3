-- receive: hand out up to max messages to a tag. Due redeliveries first
-- (visibility expired or nacked), then parked delayed messages now due,
-- then the new stream entries the caller read just before into the tag's
-- PEL (XREADGROUP without NOACK: their bodies go straight to the caller,
-- never through Lua, whose strings cost a hash of every byte). In PEL
-- mode the new entries handed out stay in the PEL, recorded once per
-- batch in b (see lib.lua: no work per message here); otherwise (zset
-- mode) they go into v one by one. Entries not for the tag, or delayed,
-- are taken out of the PEL; any over max wait in v, visible, with
-- receive count 0. A due message this tag already received
-- max_receive_count times is dead-lettered instead (S7), never handed
-- out again. Never blocks; the caller waits outside Lua.
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 p, 6 wk, 7 x, 8 dlo, 9 b
-- ARGV: 1 tag, 2 max, 3 visibility ms override (-1 none), 4 queue name,
--       5 '' or the queue's default tag name as the caller believes it
--       (checked: the caller caches it), 6 1 to hand out due messages
--       from v, b and p first (0 on a call's later reads: what it handed
--       out with visibility 0 is due again, and must not come twice),
--       7 N, the new entries read (-1: read new entries here, for small
--       reads, in chunks whose bodies fit in PRIOBYTES), 8 0 for zset
--       mode, else PEL mode for a visibility of at most this many ms (the
--       stalled read: a PEL delivery is due before the janitor could take
--       it for a stalled read; a longer one goes into v, as in zset mode,
--       after the new entries read by the caller are found with
--       XPENDING), 9 the queue's pep (PEL epoch) read before
--       the XREADGROUP ('' unknown: check every entry is still pending),
--       10 first and 11 last id read, then
--       quintuples: id, due ms ('' = not delayed), the tag it is only for
--       ('' = any), attributes JSON ('' = none), topic ('' = none); in
--       zset mode one per new entry, in PEL mode only for entries with
--       any of the four (the others are plain: no delay, for any tag, no
--       attributes, no topic)
-- Returns: {now ms, hint ms, the queue's receive_wait_seconds,
--           dead-lettered count, {{id, fields, receive count, first
--           receive ms}...} (from v and p, and new entries read here),
--           {ids of the new entries read by the caller that were not
--           handed out (the rest were: receive count 1, first receive
--           now)}, the visibility deadline ms of what this call handed
--           out, 1 when N = -1 and the read here was full but handed out
--           fewer than max (read again), 1 when element 6 lists instead
--           the ids that were handed out (else 0), what the tag's read
--           quota still takes this second (-1: no quota), the quota, ms to
--           the next second}
-- A read quota (read_quota_per_second: the tag's rq, else the queue's)
-- lowers max to what is left of it this second; new entries read beyond
-- that wait in v, visible, with receive count 0, as any over max.
-- Topic queues (S13, keys in lib.lua): always zset mode (PEL mode asked
-- for: TOPIC_QUEUE, nothing done). A new or due parked message whose topic
-- is blocked for the tag (or has messages held already) is held behind it
-- instead of handed out; else it blocks its topic while in v. Ready
-- topics (their blocker gone) hand out their next held message, after
-- due redeliveries and before new entries, in every call. New entries
-- are read here (N = -1), and read on while they are held, up to
-- TOPICREAD entries a call, or until their bodies pass PRIOBYTES (read in
-- chunks that max_message_bytes keeps within it).
-- Priority queues (keys in lib.lua): always zset mode too (PEL mode asked
-- for: PRIORITY_QUEUE, nothing done). New entries are read here (N = -1),
-- whatever max, up to PRIOREAD a call (fewer when their bodies pass
-- PRIOBYTES), into the tag's per-priority lists;
-- a due parked message joins its list. After due redeliveries, the call
-- hands out from the lists: highest priority first, FIFO within one,
-- except that every PRIOOLD-th message the tag hands out from them (n's
-- pk counts) is the oldest held one (lowest id among the lists' heads).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND, DEFAULT_TAG_CHANGED, TOPIC_QUEUE,
-- PRIORITY_QUEUE.
local tag, max = ARGV[1], tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[3], 'ct', 'vis', 'flt', 'h', 'rq', 'sp', 'sk')
if not st[1] then return notfound(KEYS[1]) end
local qm = redis.call('HMGET', KEYS[1], 'vis', 'wait', 'rpq', 'rpm', 'dtag', 'rq', 'topic', 'prq', 'mmb', 'rbo')
if ARGV[5] ~= '' and qm[5] ~= ARGV[5] then return redis.error_reply('DEFAULT_TAG_CHANGED') end
local tq = qm[7] == '1'
local pelmax = tonumber(ARGV[8])
if tq and pelmax > 0 then return redis.error_reply('TOPIC_QUEUE') end
local pq = qm[8] == '1'
if pq and pelmax > 0 then return redis.error_reply('PRIORITY_QUEUE') end
local maxrc = tonumber(qm[4]) or 0
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[7], dlo = KEYS[8], b = KEYS[9]}
if tq then topickeys(k) end
if pq then priokeys(k) end
local pelmode = pelmax > 0
local vis = tonumber(ARGV[3])
if vis < 0 then vis = tonumber(st[2]) end
if vis < 0 then vis = tonumber(qm[1]) * 1000 end
-- A visibility longer than the stalled read: what is handed out goes
-- into v (longvis), so that every PEL entry idle that long is due.
-- So does everything on a queue with a retry policy (rp: each message's
-- deadline has its own backoff, which a batch record cannot hold).
local rp = qm[10] ~= false
local longvis = pelmode and (vis > pelmax or rp)
if longvis then pelmode = false end
local now = nowms()
-- In the millisecond of the tag's last seek (sk, seek.lua) this call acts
-- at the next one, so that what it hands out has a first receive after
-- the seek: a handle from before the seek (first receive <= sk) names none
-- of its deliveries (settle.lua).
if st[7] and now <= tonumber(st[7]) then now = tonumber(st[7]) + 1 end
local deadline = now + vis
local rq = tonumber(st[5]) or tonumber(qm[6]) or 0 -- the tag's override, else the queue's
local rleft = quotaleft(KEYS[3], 'rqs', 'rqn', rq, now) -- nil: no read quota
if rleft and rleft < max then max = rleft end
local hint = tonumber(st[4]) or INF
local newhint = hint
local out = {}
local dead = 0
local topiccon = 0 -- con's change from held messages: held ones are not counted read
local heldids = {} -- ids held behind their topic by this call
local TOPICREAD = 100 -- entries a topic queue's read here may take in one call (held ones included)
-- Topic tp of message id, admitted for the tag (topic queues): true when
-- it is held behind its topic, else it now blocks the topic.
local function topichold(tp, id)
  if redis.call('HEXISTS', k.tb, 't:' .. tp) == 1 then
    redis.call('RPUSH', k.th .. tp, id)
    heldids[#heldids + 1] = id
    return true
  end
  redis.call('HSET', k.tb, 't:' .. tp, id, 'i:' .. id, tp)
  return false
end
-- Priority queues: ids to hold, per priority, in order (written by
-- prflush), and the fields of entries read here (no second read).
local PRIOREAD = 1000 -- new entries a priority queue's read here takes in one call, at most
local PRIOCHUNK = 100 -- read in chunks of at most this many (fewer for large messages)
local PRIOBYTES = 4194304 -- and stops after a chunk that takes the bytes read to this
-- A chunk's bodies fit in PRIOBYTES whatever their size: its count is what
-- the queue's largest message allows (100 of 40 KiB or less, 4 of 1 MiB),
-- so the bound holds per chunk, not only after one.
local MOSTREAD = math.max(1, math.floor(PRIOBYTES / (tonumber(qm[9]) or PRIOBYTES)))
local prbuf, seen = {}, {}
local function prhold(id, fields)
  if not fields then fields = entry(KEYS[2], id) end
  if not fields then return end
  seen[id] = fields
  local p = prioof(fieldmap(fields))
  if not prbuf[p] then prbuf[p] = {} end
  local b = prbuf[p]
  b[#b + 1] = id
end
local function prflush()
  for p, ids in pairs(prbuf) do priohold(k, p, ids) end
  prbuf = {}
end

-- Deliveries are written in one ZADD per batch (each redis.call costs
-- more than the work it does); flush before v is read again. Work per
-- message is kept to the least: it is most of this script's cost.
local zv, zx, fresh, stale = {}, {}, {}, {}
local score1 = vscore(deadline, 1) -- every first delivery's score
-- With a retry policy, the deadline of a delivery (member m, receive
-- count cnt) includes the backoff that follows its visibility: it is
-- available again once both passed. Not at the max receive count: it is
-- dead-lettered then (S7), not backed off.
local function rpscore(m, cnt)
  if maxrc > 0 and cnt >= maxrc then return vscore(deadline, cnt) end
  return vscore(deadline + backoffms(qm[10], cnt, m .. now), cnt)
end
local function deliver(id, m, fields, cnt, first)
  cnt = math.min(cnt, VCNT - 1)
  if rp then
    zv[#zv + 1] = rpscore(m, cnt)
  else
    zv[#zv + 1] = cnt == 1 and score1 or vscore(deadline, cnt)
  end
  zv[#zv + 1] = m
  if maxrc > 0 and cnt >= maxrc then
    zx[#zx + 1] = deadline
    zx[#zx + 1] = m
  end
  out[#out + 1] = {id, fields, cnt, first}
end
-- A first delivery: new in v.
local function deliverfirst(id, fields)
  fresh[#fresh + 1] = id
  deliver(id, vmember(id, now), fields, 1, now)
end
local function flush()
  if #stale > 0 then
    redis.call('ZREM', KEYS[4], unpack(stale))
    stale = {}
  end
  if #zv > 0 then
    redis.call('ZADD', KEYS[4], unpack(zv))
    zv = {}
  end
  if #zx > 0 then
    redis.call('ZADD', KEYS[7], unpack(zx))
    zx = {}
  end
  if #fresh > 0 then
    vcount(KEYS[3], fresh, 1)
    fresh = {}
  end
end

if hint <= now and ARGV[6] == '1' then
  -- PEL deliveries now due join v first (bounded: more left keeps the hint due).
  local pelmore = pelexpire(k, tag, now, maxrc, 20)
  local exhausted = false
  while #out < max do
    local want = max - #out
    local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', vdue(now), 'WITHSCORES', 'LIMIT', 0, want)
    for j = 1, #due, 2 do
      local m = due[j]
      local _, cnt = vdecode(due[j + 1])
      local id, first = vparse(m)
      local fields = entry(KEYS[2], id)
      if not fields then
        vremove(k, m, id) -- trimmed under us
      elseif maxrc > 0 and cnt >= maxrc then
        todeadletter(k, ARGV[4], tag, id, m, fields, cnt, 'MAX_RECEIVE_COUNT_EXCEEDED', '', now, qm[3])
        dead = dead + 1
      elseif cnt == 0 then
        -- Read before but never handed out: a first delivery now (a new
        -- member: its first receive is now; same id, so w is unchanged).
        stale[#stale + 1] = m
        deliver(id, vmember(id, now), fields, 1, now)
      else
        deliver(id, m, fields, cnt + 1, first)
      end
    end
    flush()
    if #due < 2 * want then
      exhausted = true
      break
    end
  end
  local want = max - #out
  if want > 0 then
    local pd = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, want)
    for _, id in ipairs(pd) do
      redis.call('ZREM', KEYS[5], id)
      local fields = entry(KEYS[2], id)
      if fields then
        local tp = tq and fieldmap(fields)['tp']
        if tp and topichold(tp, id) then
          topiccon = topiccon - 1 -- counted read when parked
        elseif pq then
          prhold(id, fields) -- joins its priority's list
          topiccon = topiccon - 1 -- counted read when parked
        else
          deliverfirst(id, fields)
        end
      end
    end
    exhausted = exhausted and #pd < want
  else
    exhausted = false
  end
  flush()
  if exhausted and not pelmore then
    newhint = INF
    local a = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
    if a[2] then newhint = math.min(newhint, (vdecode(a[2]))) end
    local c = redis.call('ZRANGE', KEYS[9], 0, 0, 'WITHSCORES')
    if c[2] then newhint = math.min(newhint, tonumber(c[2])) end
    local b = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
    if b[2] then newhint = math.min(newhint, tonumber(b[2])) end
  end
end

-- Ready topics hand out their next held message (every call: a topic
-- unblocks by a delete on any process, which no hint follows).
if tq then
  while #out < max do
    local tp = redis.call('LPOP', k.tr)
    if not tp then break end
    local id, fields = nil, nil
    repeat
      id = redis.call('LPOP', k.th .. tp)
      if id then
        vcount(k.n, {id}, -1)
        fields = entry(KEYS[2], id)
      end
    until fields or not id
    if id then
      redis.call('HSET', k.tb, 't:' .. tp, id, 'i:' .. id, tp)
      topiccon = topiccon + 1
      deliverfirst(id, fields)
    else
      redis.call('HDEL', k.tb, 't:' .. tp)
    end
  end
  flush()
end

local flt = nil
if st[3] then flt = cjson.decode(st[3]) end
-- The new entries: in PEL mode those handed out stay in the PEL (one
-- batch record for all), the rest leave it; in zset mode all leave it.
local nnew = tonumber(ARGV[7])
local con, nfresh, pel, inmore = 0, 0, 0, 0
local pelfirst, pellast = nil, nil -- the ids read (PEL mode: the batch's record)
local rej = {} -- new entries to take out of the PEL
local parked = {} -- new entries over max: visible in v at once, count 0
local skipped, handedids = {}, nil -- caller-read entries not handed out (or, when listed, those handed out)
-- A new entry admitted for the tag: park it when delayed, else hand it
-- out (fields: read here), or keep it for later when over max. False when
-- not handed out.
local function admitted(id, due, fields, tp)
  con = con + 1
  due = tonumber(due)
  if due and due > now then
    redis.call('ZADD', KEYS[5], due, id)
    if due < newhint then newhint = due end
    rej[#rej + 1] = id
    return false
  end
  if tq and tp and tp ~= '' and topichold(tp, id) then
    con = con - 1
    return false
  end
  if pq then
    prhold(id, fields)
    con = con - 1
    return false
  end
  if #out + nfresh >= max then
    parked[#parked + 1] = id
    rej[#rej + 1] = id
    return false
  end
  if fields then
    if pelmode then
      out[#out + 1] = {id, fields, 1, now}
      pel = pel + 1
    else
      deliverfirst(id, fields)
    end
    return true
  end
  nfresh = nfresh + 1
  if handedids then handedids[#handedids + 1] = id end
  if pelmode then
    pel = pel + 1
  else
    fresh[#fresh + 1] = id
    local m = vmember(id, now)
    zv[#zv + 1] = rp and rpscore(m, 1) or score1
    zv[#zv + 1] = m
    if maxrc == 1 then
      zx[#zx + 1] = deadline
      zx[#zx + 1] = zv[#zv]
    end
  end
  return true
end
if nnew < 0 and pq then
  -- A priority queue: everything new goes to the lists first, so what is
  -- handed out below is the highest priority the tag holds; in chunks, up
  -- to PRIOREAD entries or PRIOBYTES of bodies and attributes a call (the
  -- bodies pass through Lua: a bound on the memory one call takes).
  if #out < max then
    local nread, bytes = 0, 0
    local chunk = math.min(PRIOCHUNK, MOSTREAD)
    while true do
      local r = redis.call('XREADGROUP', 'GROUP', tag, 'c', 'COUNT', chunk, 'NOACK', 'STREAMS', KEYS[2], '>')
      local entries = (r and r[1] and r[1][2]) or {}
      for _, e in ipairs(entries) do
        local f = fieldmap(e[2])
        bytes = bytes + #(f['b'] or '') + #(f['a'] or '')
        if fortag(tag, flt, f) then admitted(e[1], f['d'], e[2], nil) end
      end
      nread = nread + #entries
      if #entries < chunk then break end
      if nread >= PRIOREAD or bytes >= PRIOBYTES then
        inmore = 1 -- more may wait: the caller reads again
        break
      end
    end
  end
elseif nnew < 0 then
  -- Small reads (the caller's choice: one round trip matters more than
  -- the bodies' cost in Lua when few messages come at a time): read here.
  -- A topic queue's read goes on while what it reads is held behind
  -- blocked topics, within TOPICREAD entries a call: the next message of
  -- an unblocked topic may lie beyond them, and a round trip per step
  -- would keep what the call has meanwhile (see receive.go).
  -- Chunks are sized as a priority queue's are (what max_message_bytes
  -- allows within PRIOBYTES), and the read stops once the bodies read
  -- pass PRIOBYTES (more: the caller reads again): they go through Lua.
  local want = max - #out
  local budget = want
  local chunk, bytes = nil, 0
  if tq then
    budget = math.max(want, TOPICREAD)
    chunk = math.min(TOPICREAD, MOSTREAD)
  elseif want > MOSTREAD then
    chunk = MOSTREAD
  end
  while want > 0 do
    if chunk and want > chunk then want = chunk end
    local r
    if pelmode then
      r = redis.call('XREADGROUP', 'GROUP', tag, 'c', 'COUNT', want, 'STREAMS', KEYS[2], '>')
    else
      r = redis.call('XREADGROUP', 'GROUP', tag, 'c', 'COUNT', want, 'NOACK', 'STREAMS', KEYS[2], '>')
    end
    local entries = (r and r[1] and r[1][2]) or {}
    for _, e in ipairs(entries) do
      local id, fields = e[1], e[2]
      local f = fieldmap(fields)
      if chunk then bytes = bytes + #(f['b'] or '') + #(f['a'] or '') end
      if fortag(tag, flt, f) then
        admitted(id, f['d'], fields, f['tp'])
      elseif pelmode then
        rej[#rej + 1] = id
      end
    end
    if #entries > 0 then pelfirst, pellast = pelfirst or entries[1][1], entries[#entries][1] end
    if #entries < want or #out >= max then break end
    budget = budget - #entries
    if budget <= 0 or bytes >= PRIOBYTES then
      inmore = 1
      break
    end
    want = max - #out
  end
elseif nnew > 0 and st[6] and (ARGV[9] == '' or tonumber(ARGV[9]) < tonumber(st[6])) then
  -- The caller's read may have come before the tag's last seek (seek.lua):
  -- none of it is handed out, nothing of the PEL is touched (what is
  -- pending was read after the seek, by this read or another: its own
  -- receive, or the janitor, takes it).
  handedids = {}
elseif nnew > 0 then
  pelfirst, pellast = ARGV[10], ARGV[11]
  -- Entries listed in ARGV (every entry in zset mode, else those not plain).
  local listed = {}
  for b = 12, #ARGV, 5 do listed[ARGV[b]] = b end
  local plainok = not flt or admits(flt, nil)
  local function consider(id)
    local b = listed[id]
    local ok, due, tp = plainok, nil, nil
    if b then
      local only, attrs = ARGV[b + 2], ARGV[b + 3]
      if only ~= '' then
        ok = only == tag
      else
        ok = not flt or admits(flt, attrs ~= '' and attrs or nil)
      end
      due, tp = ARGV[b + 1], ARGV[b + 4]
    end
    if not (ok and admitted(id, due, nil, tp)) then
      skipped[#skipped + 1] = id
      if not ok then rej[#rej + 1] = id end
    end
  end
  -- Unless something took entries out of the PEL since the caller read
  -- (the epoch changed: a purge, or the janitor recovered a stalled read),
  -- every entry read is pending; else only the pending ones are handed out.
  local all = ARGV[9] ~= '' and ARGV[9] == (redis.call('HGET', KEYS[1], 'pep') or '0')
  if longvis then
    -- Read for PEL mode (plain entries not listed): the pending ones are
    -- what was read; tell the caller what was handed out.
    handedids = {}
    local ids = pelids(KEYS[2], tag, pelfirst, pellast, nnew)
    for _, id in ipairs(ids) do consider(id) end
    if #ids > 0 then redis.call('XACK', KEYS[2], tag, unpack(ids)) end
  elseif not pelmode then
    local pending = nil
    if not all then
      pending = {}
      for _, id in ipairs(pelids(KEYS[2], tag, pelfirst, pellast, nnew)) do pending[id] = true end
    end
    local ids = {}
    for b = 12, #ARGV, 5 do
      local id = ARGV[b]
      ids[#ids + 1] = id
      if not pending or pending[id] then
        consider(id)
      else
        skipped[#skipped + 1] = id
      end
    end
    redis.call('XACK', KEYS[2], tag, unpack(ids))
  elseif all and plainok and nnew <= max - #out then
    local nlisted = 0
    for b = 12, #ARGV, 5 do
      nlisted = nlisted + 1
      consider(ARGV[b])
    end
    -- The plain entries: admitted, due, and (the read took at most max)
    -- within max.
    con = con + nnew - nlisted
    nfresh = nfresh + nnew - nlisted
    pel = pel + nnew - nlisted
  else
    -- The caller knows only what it read: tell it what was handed out.
    handedids = {}
    for _, id in ipairs(pelids(KEYS[2], tag, pelfirst, pellast, nnew)) do consider(id) end
  end
end
if pq then
  -- Hand out from the lists: by priority, but every PRIOOLD-th the
  -- oldest held message (the starvation rule, lib.lua).
  prflush()
  if #out < max then
    local flds = {'pk'}
    for p = 1, PRIOMAX do flds[p + 1] = 'pq:' .. p end
    local cs = redis.call('HMGET', KEYS[3], unpack(flds))
    local pk0 = tonumber(cs[1]) or 0
    local pk = pk0
    local c, total = {}, 0
    for p = 1, PRIOMAX do
      c[p] = tonumber(cs[p + 1]) or 0
      total = total + c[p]
    end
    local taken, popped = {}, {}
    while #out < max and total > 0 do
      local p = nil
      if (pk + 1) % PRIOOLD == 0 then
        local best = nil
        for q = 1, PRIOMAX do
          if c[q] > 0 then
            local h = redis.call('LINDEX', k.pl .. q, 0)
            if h and (not best or idlt(h, best)) then best, p = h, q end
          end
        end
      else
        for q = 1, PRIOMAX do
          if c[q] > 0 then
            p = q
            break
          end
        end
      end
      if not p then break end
      local id = redis.call('LPOP', k.pl .. p)
      if id then
        c[p], total = c[p] - 1, total - 1
        taken[p] = (taken[p] or 0) + 1
        popped[#popped + 1] = id
        local fields = seen[id] or entry(KEYS[2], id)
        if fields then
          pk = pk + 1
          topiccon = topiccon + 1
          deliverfirst(id, fields)
        else
          redis.call('HINCRBY', KEYS[3], 'xb', 1) -- gone unread (counters stay exact)
        end
      else
        -- The count was out of step with the (empty) list: set it right.
        total = total - c[p]
        c[p], taken[p] = 0, nil
        redis.call('HDEL', KEYS[3], 'pq:' .. p)
      end
    end
    for p, t in pairs(taken) do
      if redis.call('HINCRBY', KEYS[3], 'pq:' .. p, -t) <= 0 then redis.call('HDEL', KEYS[3], 'pq:' .. p) end
    end
    if #popped > 0 then vcount(KEYS[3], popped, -1) end
    if pk ~= pk0 then redis.call('HSET', KEYS[3], 'pk', pk) end
  end
end
if #rej > 0 and pelmode then redis.call('XACK', KEYS[2], tag, unpack(rej)) end
if #parked > 0 then
  -- Over max: visible in v at once, never received (count 0).
  local score0 = vscore(now, 0)
  for _, id in ipairs(parked) do
    fresh[#fresh + 1] = id
    zv[#zv + 1] = score0
    zv[#zv + 1] = vmember(id, now)
  end
  if now < newhint then newhint = now end
end
if pel > 0 then
  redis.call('ZADD', KEYS[9], deadline, brecord(pelfirst, pellast, now))
  redis.call('HINCRBY', KEYS[3], 'pc', pel)
end

flush()
if #heldids > 0 then vcount(KEYS[3], heldids, 1) end -- the janitor keeps them
con = con + topiccon
local handed = #out + nfresh
if handed > 0 and deadline < newhint then newhint = deadline end
if con ~= 0 then redis.call('HINCRBY', KEYS[3], 'con', con) end
if handed > 0 then redis.call('HINCRBY', KEYS[3], 'rcv', handed) end
local qafter, retry = -1, 0
if rleft then
  quotacharge(KEYS[3], 'rqs', 'rqn', now, rq, rleft, handed)
  qafter, retry = rleft - handed, quotaretry(now)
end
local woken = false
if newhint ~= hint then
  redis.call('HSET', KEYS[3], 'h', fmt(newhint))
  if newhint < hint then
    wake(KEYS[6], tag, newhint)
    woken = true
  end
end
if (k.released or 0) > 0 and not woken and redis.call('LLEN', k.tr) > 0 then
  -- Dead-lettering here unblocked topics this call did not hand out
  -- (it was full): receives waiting elsewhere take them (S21).
  wake(KEYS[6], tag, now)
end
if handedids then return {now, fmt(newhint), tonumber(qm[2]), dead, out, handedids, deadline, inmore, 1, qafter, rq, retry} end
return {now, fmt(newhint), tonumber(qm[2]), dead, out, skipped, deadline, inmore, 0, qafter, rq, retry}
