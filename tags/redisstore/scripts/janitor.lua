-- janitor: trim the head of a queue's stream. An entry goes when its
-- retention has expired (counted from when it became visible), or — unless
-- the queue retains acknowledged messages — when no tag needs it any more
-- (every tag has read it and deleted it, or its filter never admitted it).
-- Trimming stops at the first entry that must stay, so one slow message
-- holds back the trimming of later ones (of the same second of ids) until
-- it is done or expires.
-- Expired entries a tag had not finished are counted in that tag's state
-- (xb: never read, xi: read but not deleted), never dropped silently. (An
-- entry in a tag's PEL that none of the tag's 1000 earliest batches
-- covers, when it has more, stops the trimming until it left the PEL:
-- within the stalled read.)
-- A queue over a cap with overflow 'drop' loses its oldest entries the
-- same way, as if expired, until it is within its caps (counted in the
-- meta's 'dropped' too).
-- It also recovers entries a receive read into a tag's PEL and never
-- recorded (its tagqd stopped between the two steps): visible again at
-- once, receive count 0, as receive.lua leaves entries it cannot hand out,
-- and the tag's waiting receives on every process are woken (S21). It
-- moves PEL deliveries whose batch is due to v first (see lib.lua; then
-- every PEL entry idle longer than ARGV 2 is a stalled read).
-- Deliveries in the PEL (recorded in b, see lib.lua) are the tag's in
-- flight: trimming stops at the second of the PEL's first id.
-- Every call is bounded: at most 20 due batches moved (and no more once
-- 500 deliveries moved: pelexpire), 100 PEL entries a
-- tag looked at, 1,000 entries trimmed below the tags' low-water mark
-- (on the embedded store 500, fewer when their bodies pass 4 MiB), ARGV 1
-- entries examined from the stream's head, 8 scans of a tag's v for
-- expired messages in it (vfind); what is left is for the next call (the
-- second element of the reply).
-- On a topic queue (S13, lib.lua) a tag's held messages count as held
-- (n's w:<second>): kept; when they expire they leave their topic's list
-- (counted xb: never handed out), and an expiring blocker unblocks its
-- topic (waiting receives are woken). On a priority queue (lib.lua) the
-- same: held ids are kept, leave their priority's list when they expire
-- (counted xb), and a recovered stalled read joins its list.
-- It prunes up to 1000 send deduplication ids past their window too (send.lua
-- prunes only when sent ids; this bounds what a queue that stopped keeps).
-- KEYS: 1 meta, 2 stream, 3 tags, 4 fa, 5 dl, then per tag: n, v, p, x, b,
--       then z (sizes), zh, sd, sdx
-- One process at a time does this for a queue: the janitor lease (meta
-- field 'lj', see lease in lib.lua). A call that finds another owner's
-- lease does nothing and says how long it has left.
-- ARGV: 1 max entries to examine, 2 ms a PEL entry must be idle to be
--       recovered (the stalled read and a slack), 3 lease owner ('' =
--       none: run regardless), 4 lease ms, 5.. every tag name (same order
--       as KEYS)
-- Returns: {entries removed, 1 if a bound was reached (call again) else
--           0, ms left on another owner's lease (0: this call did the
--           work), ms until a PEL entry may be a stalled read (0: none)}
-- Errors: TAGS_CHANGED when ARGV does not list exactly the queue's tags.
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, 0, 0} end
if not sametags(KEYS[3], 5) then return redis.error_reply('TAGS_CHANGED') end
local now = nowms()
local held = lease(KEYS[1], 'lj', ARGV[3], tonumber(ARGV[4]), now)
if held > 0 then return {0, 0, held, 0} end
local m = redis.call('HMGET', KEYS[1], 'ret', 'ra', 'cmax', 'bmax', 'ovf', 'rb', 'topic', 'prq', 'rpm')
local tq = m[7] == '1'
local pq = m[8] == '1'
local ret, retain = tonumber(m[1]) * 1000, m[2] == '1'
local q = sizestate({meta = KEYS[1], z = KEYS[#KEYS - 3], zh = KEYS[#KEYS - 2]}, KEYS[2])
local past = redis.call('ZRANGEBYSCORE', KEYS[#KEYS], '-inf', now, 'LIMIT', 0, 1000)
if #past > 0 then
  redis.call('ZREM', KEYS[#KEYS], unpack(past))
  redis.call('HDEL', KEYS[#KEYS - 1], unpack(past))
end
local over = capexcess(capsof(m, 3), KEYS[2])
local cur = cursors(KEYS[2])
local tags = {}
for i = 5, #ARGV do
  local k = 5 + (i - 5) * 5
  local name = ARGV[i]
  local f = redis.call('HGET', KEYS[4], 'f:' .. name)
  tags[#tags + 1] = {name = name, s = KEYS[2], n = KEYS[k + 1], v = KEYS[k + 2], p = KEYS[k + 3], x = KEYS[k + 4],
    b = KEYS[k + 5],
    cursor = cur[name] or '0-0', flt = f and cjson.decode(f),
    w = {}, parked = redis.call('EXISTS', KEYS[k + 3]) == 1}
  if tq then topickeys(tags[#tags]) end
  if pq then priokeys(tags[#tags]) end
end
-- 'unread' (beyond the cursor and admitted), 'held' (read, maybe not
-- deleted: in flight or parked, or in flight counted in the same second) or nil.
local function holds(t, id, f)
  if idlt(t.cursor, id) then
    if fortag(t.name, t.flt, f) then return 'unread' end
    return nil
  end
  if t.pmin and not idlt(id, t.pmin) then return 'held' end -- maybe read into the PEL
  local sec = wfield(id)
  local w = t.w[sec] -- mayhold, cached per second of ids for this pass
  if w == nil then
    w = mayhold(t.n, id)
    t.w[sec] = w
  end
  if w or (t.parked and redis.call('ZSCORE', t.p, id)) then return 'held' end
  return nil
end
-- A tag's earliest batches (by deadline: the oldest reads, which the
-- head of the stream is), at most 1000, as ranges, loaded once a call when
-- needed; and whether they are all of its batches.
local function ranges(t)
  if not t.ranges then
    t.ranges = {}
    for _, m in ipairs(redis.call('ZRANGE', t.b, 0, 999)) do
      local a, b = bparse(m)
      t.ranges[#t.ranges + 1] = {a, b}
    end
    table.sort(t.ranges, function(x, y) return idlt(x[1], y[1]) end)
    t.allranges = #t.ranges < 1000 or redis.call('ZCARD', t.b) == 1000
  end
  return t.ranges, t.allranges
end
-- Stalled reads. Deliveries of the PEL whose batch is due move to v first
-- (pelexpire; at most JBATCHES batches a call over all tags: more, the
-- next call). Then, PEL ids being read in order, the PEL's head is its
-- oldest read; every delivery in it has a visibility of at most the
-- stalled read (receive.lua), so an entry idle longer than minidle (the
-- stalled read and some slack) is a read whose receive script never ran:
-- visible again at once, receive count 0, as receive.lua leaves entries
-- it cannot hand out, and the tag's waiting receives are woken. At most
-- JPAGE entries a tag a call (more: the next call). Else the head says
-- how soon one may be (soon, for the caller to come back then). Entries a
-- batch of the latest ones covers stay (a receive on a replica with a
-- longer stalled read); they are passed over with a cursor (n's jpc).
local minidle = tonumber(ARGV[2])
local JBATCHES, JPAGE = 20, 100
local maxrc = tonumber(m[9]) or 0
local soon = 0 -- ms until a PEL entry may be a stalled read (0: none)
local function nearer(ms)
  if soon == 0 or ms < soon then soon = ms end
end
local budget = JBATCHES
local pelmore = false
for _, t in ipairs(tags) do
  local left = true -- due batches may be left: the head waits for the next call
  if budget > 0 then
    local n
    left, n = pelexpire(t, t.name, now, maxrc, budget)
    budget = budget - n
  end
  if left then
    pelmore = true
  else
    local pcur = redis.call('HGET', t.n, 'jpc') or '-'
    local page = redis.call('XPENDING', KEYS[2], t.name, pcur, '+', JPAGE)
    local stalled, nextcur, latest, newer = {}, nil, nil, false
    for _, pe in ipairs(page) do
      local idle = tonumber(pe[3])
      if idle < minidle then
        nearer(minidle - idle)
        newer = true -- and so is every later entry
        break
      end
      if not latest then
        latest = {}
        local recs = redis.call('ZREVRANGEBYSCORE', t.b, '+inf', '(' .. now, 'LIMIT', 0, 200)
        for _, r in ipairs(recs) do
          local a, b = bparse(r)
          latest[#latest + 1] = {a, b}
        end
        table.sort(latest, function(x, y) return idlt(x[1], y[1]) end)
      end
      if covers(latest, pe[1]) then
        nextcur = nextid(pe[1])
      else
        stalled[#stalled + 1] = pe[1]
      end
    end
    if newer or #page < JPAGE then
      nextcur = nil -- the whole PEL seen: from its head next time
    else
      pelmore = true
    end
    if nextcur then
      redis.call('HSET', t.n, 'jpc', nextcur)
    elseif pcur ~= '-' then
      redis.call('HDEL', t.n, 'jpc')
    end
    if #stalled > 0 then pelbump(KEYS[1]) end
    for _, id in ipairs(stalled) do
      local fields = entry(KEYS[2], id)
      if fields then
        local f = fieldmap(fields)
        local tp = t.tb and f['tp']
        if fortag(t.name, t.flt, f) and tp and (tonumber(f['d']) or 0) <= now
            and redis.call('HEXISTS', t.tb, 't:' .. tp) == 1 then
          -- A topic queue's entry whose topic is blocked (S13): held.
          redis.call('RPUSH', t.th .. tp, id)
          vcount(t.n, {id}, 1)
        elseif t.pl and fortag(t.name, t.flt, f) and (tonumber(f['d']) or 0) <= now then
          -- A priority queue's entry: joins its priority's list.
          priohold(t, prioof(f), {id})
          t.wakeat = now
        elseif fortag(t.name, t.flt, f) then
          redis.call('HINCRBY', t.n, 'con', 1)
          local due = tonumber(f['d'])
          if due and due > now then
            redis.call('ZADD', t.p, due, id)
          else
            if tp then redis.call('HSET', t.tb, 't:' .. tp, id, 'i:' .. id, tp) end
            redis.call('ZADD', t.v, vscore(now, 0), vmember(id, now))
            vcount(t.n, {id}, 1)
            due = now
          end
          local h = tonumber(redis.call('HGET', t.n, 'h') or INF)
          if due < h then redis.call('HSET', t.n, 'h', fmt(due)) end
          if not t.wakeat or due < t.wakeat then t.wakeat = due end
        end
      end
      redis.call('XACK', KEYS[2], t.name, id)
    end
  end
  local first = redis.call('XPENDING', KEYS[2], t.name, '-', '+', 1)[1]
  if first then t.pmin = secstart(first[1]) end
end
local limit = tonumber(ARGV[1])
local removed = 0
local JTRIM, trimmore = 1000, false
-- First, without reading a single entry (each read costs its body): every
-- entry below every tag's low-water mark is done with. A tag needs
-- nothing at or before its cursor but what it holds: in flight (counted
-- per second of id in n), or parked (a delayed message it read early,
-- sent at most MAXDELAY before it is due).
local MAXDELAY = 900000
if not retain and #tags > 0 then
  local low = nil
  local function lower(id)
    if not low or idlt(id, low) then low = id end
  end
  for _, t in ipairs(tags) do
    lower(nextid(t.cursor))
    if t.pmin then lower(t.pmin) end
    for _, f in ipairs(redis.call('HKEYS', t.n)) do
      local sec = string.match(f, '^w:(%d+)$')
      if sec then lower(fmt(tonumber(sec) * 1000) .. '-0') end
    end
    local p = redis.call('ZRANGE', t.p, 0, 0, 'WITHSCORES')
    if p[2] then lower(fmt(math.max(tonumber(p[2]) - MAXDELAY, 0)) .. '-0') end
  end
  -- At most JTRIM entries a call (more: the next call). Redis trims
  -- whole nodes of the stream (~: what is left below low goes with the
  -- loop below, entry by entry); the embedded store, whose XTRIM MINID
  -- takes time linear in the stream for each entry, counts them (their
  -- bodies within 4 MiB a call) and trims by length.
  local upto = low
  if EMBEDDED then
    -- As many as the head's sizes (z) keep within 4 MiB, 500 at most.
    local most, bytes = 0, 0
    for _, sz in ipairs(redis.call('LRANGE', q.z, 0, 499)) do
      bytes = bytes + tonumber(sz)
      if bytes > 4194304 then break end
      most = most + 1
    end
    most = math.max(most, 1)
    local head = redis.call('XRANGE', KEYS[2], '-', '(' .. low, 'COUNT', most)
    if #head > 0 then
      removed = redis.call('XTRIM', KEYS[2], 'MAXLEN', redis.call('XLEN', KEYS[2]) - #head)
      upto = nextid(head[#head][1])
    end
    if #head == most then trimmore = true end
  else
    removed = redis.call('XTRIM', KEYS[2], 'MINID', '~', low, 'LIMIT', JTRIM)
    local h = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
    if h and idlt(h[1], low) then
      upto = h[1]
      -- Whole nodes may be left (the limit): the next call. What is left
      -- of one goes in the loop below.
      if removed > 0 then trimmore = true end
    end
  end
  over.msgs = over.msgs - removed
  over.bytes = over.bytes - sizetrim(q, removed, upto)
end
-- Then entry by entry from the head, for retention: in chunks that grow
-- from 1, since the head entry usually stays (needed, and not expired).
-- (Not while the trim above left more below the low-water mark: that
-- goes first, in the next calls.)
local chunk, from, stop, slow = 1, '-', trimmore, 0
local VFINDS, vfinds, vmore = 8, 0, false
while not stop and slow < limit do
  local entries = redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', math.min(chunk, limit - slow))
  if #entries == 0 then break end
  from = nextid(entries[#entries][1])
  chunk = chunk * 4
  for _, e in ipairs(entries) do
    local id = e[1]
    local f = fieldmap(e[2])
    local due = tonumber(f['d']) or idparts(id)
    local expired = due + ret <= now
    if expired or over.msgs > 0 or over.bytes > 0 then
      -- First what it takes, before anything changes: at most VFINDS
      -- scans of a tag's v a call (each the size of v); and an entry
      -- still in a tag's PEL must be known for a delivery (a batch covers
      -- it) or not (a read not recorded), from the tag's earliest batches
      -- (ranges): when they are not all of them and none covers it, it
      -- goes once it has left the PEL (within the stalled read).
      local finds, undecided = 0, false
      for _, t in ipairs(tags) do
        if holds(t, id, f) == 'held' then
          if t.pmin and not idlt(id, t.pmin) and #redis.call('XPENDING', KEYS[2], t.name, id, id, 1) > 0 then
            local r, all = ranges(t)
            if not all and not covers(r, id) then undecided = true end
          end
          if mayhold(t.n, id) then finds = finds + 1 end
        end
      end
      if undecided or (vfinds > 0 and vfinds + finds > VFINDS) then
        stop = true
        vmore = not undecided
        break
      end
      vfinds = vfinds + finds
      local needed = retain or #tags == 0
      for _, t in ipairs(tags) do
        local h = holds(t, id, f)
        if h == 'unread' then
          needed = true
          redis.call('HINCRBY', t.n, 'xb', 1)
        elseif h == 'held' then
          local held = redis.call('ZREM', t.p, id) == 1
          local mem = mayhold(t.n, id) and vfind(t.v, id)
          if mem then
            vremove(t, mem, id)
            t.w[wfield(id)] = nil -- its second may hold nothing now
            held = true
          elseif t.tb and f['tp'] and topicunhold(t, f['tp'], id) then
            -- Held behind its topic: never handed out.
            t.w[wfield(id)] = nil
            needed = true
            redis.call('HINCRBY', t.n, 'xb', 1)
          elseif t.pl and priounhold(t, prioof(f), id) then
            -- Held in its priority's list: never handed out.
            t.w[wfield(id)] = nil
            needed = true
            redis.call('HINCRBY', t.n, 'xb', 1)
          elseif redis.call('XACK', KEYS[2], t.name, id) == 1 then
            pelbump(KEYS[1])
            -- The PEL's first entry may have been this one: what the tag
            -- keeps from its second on (holds) follows the PEL as it is now.
            local first = redis.call('XPENDING', KEYS[2], t.name, '-', '+', 1)[1]
            t.pmin = nil
            if first then t.pmin = secstart(first[1]) end
            if covers(ranges(t), id) then
              redis.call('HINCRBY', t.n, 'pc', -1)
              held = true
            else
              redis.call('HINCRBY', t.n, 'xb', 1) -- read, not yet recorded: unread
            end
          end
          if held then
            needed = true
            redis.call('HINCRBY', t.n, 'xi', 1)
          end
        end
      end
      if needed and not expired then redis.call('HINCRBY', KEYS[1], 'dropped', 1) end
    else
      if retain or #tags == 0 then
        stop = true
        break
      end
      for _, t in ipairs(tags) do
        if holds(t, id, f) then
          stop = true
          break
        end
      end
      if stop then break end
    end
    slow = slow + 1
    over.msgs = over.msgs - 1
    over.bytes = over.bytes - sizetrim(q, 1, nextid(id))
  end
end
if slow > 0 then
  redis.call('XTRIM', KEYS[2], 'MAXLEN', redis.call('XLEN', KEYS[2]) - slow)
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
for _, t in ipairs(tags) do
  -- Made available here (a read recovered, a topic unblocked): waiting
  -- receives on every process look (S21).
  if (t.released or 0) > 0 then t.wakeat = now end
  if t.wakeat then wake(wakekey(KEYS[1]), t.name, t.wakeat) end
end
local more = 0
if slow == limit or pelmore or trimmore or vmore then more = 1 end
return {removed + slow, more, 0, soon}
