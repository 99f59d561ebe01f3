-- settle: apply one tag's settlements from consume streams in one call:
-- visibility changes (nacks and extends) first, then dead-letterings, then
-- acks, so a message extended and then acked in the same batch ends acked.
-- Visibility and dead need the handle of the latest receive (generation =
-- receive count); an ack deletes whatever the generation (S3). A delivery
-- still in the tag's PEL (receive count 1, see lib.lua) is taken out with
-- XACK; one that stays in flight (a nack or an extend) moves to v under
-- the member its handle names.
-- Batch records of the PEL whose deliveries are all settled go at once
-- (among the oldest few, those below the PEL's first entry), so their
-- deadlines wake nobody.
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 x, 6 dlo, 7 wk, 8 b
-- ARGV: 1 queue name, 2 tag, 3 visibility count V, 4 dead count D,
--       5 ack count A, 6 the least first receive ms of the acks, 7 the
--       acks' first receive ms, comma-separated in order (read only when
--       v holds messages), then V quadruples (message id, first receive
--       ms, generation, ms from now, -1: the queue's retry backoff, or -2 - ms: an
--       extend by ms that the backoff follows),
--       D quintuples (message id, first
--       receive ms, generation, reason, description), A message ids
-- On a topic queue (S13, lib.lua) a message acked or dead-lettered
-- unblocks its topic for the tag: the topic's next held message is ready
-- (waiting receives are woken); a visibility change keeps it blocked.
-- Returns: the count of topics made ready, then per settlement in that
--          order: 1 (applied), 0 (stale, or for an ack: already gone, or
--          taken out of the PEL: no error either way), -1 (dead on a
--          queue without a redrive policy: NOT_A_SOURCE_QUEUE); the 0s
--          after the last other value may be left out (acks of the PEL:
--          no work per ack here).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[2]
local st = redis.call('HMGET', KEYS[3], 'h', 'ct', 'pc', 'del', 'sk')
local h = st[1]
if not h then return notfound(KEYS[1]) end
-- Handles from before the tag was made, or from before its last seek (a
-- first receive at or before sk, seek.lua: receive.lua's deliveries after
-- it come later), name deliveries that no longer exist.
local ct = math.max(tonumber(st[2]), (tonumber(st[5]) or -1) + 1)
local nv, nd, na = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = 0 -- Redis time, read only when needed (acks need none)
if nv > 0 or nd > 0 then now = nowms() end
local res = {}
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[5], dlo = KEYS[6]}
-- Whether it is a topic queue is read only when a message leaves v (acks
-- of the PEL, the usual case on streams, need not know). dlq: the redrive
-- policy's queue, read with it.
local known, dlq = false, nil
local function learn()
  if known then return end
  known = true
  local mq = redis.call('HMGET', KEYS[1], 'topic', 'rpq')
  if mq[1] == '1' then topickeys(k) end
  dlq = mq[2]
end
local i = 8
local pelgone = 0 -- deliveries taken out of the PEL
local deleted = 0 -- messages the acks deleted

-- Takes a delivery of this tag (first received at first ms, so not of an
-- earlier tag of the same name) out of the PEL: true when it was there.
local function pelout(id, first)
  if first < ct or redis.call('XACK', KEYS[2], tag, id) == 0 then return false end
  pelgone = pelgone + 1
  return true
end

-- The receive count a member holds in v, or -1 when it is not in flight.
local function counts(members)
  local out = {}
  if #members == 0 then return out end
  local scores = redis.call('ZMSCORE', KEYS[4], unpack(members))
  for j = 1, #members do
    out[j] = -1
    if scores[j] then
      local _, c = vdecode(scores[j])
      out[j] = c
    end
  end
  return out
end

-- A nack that asks for the retry policy (ms -1): the backoff after the
-- cnt-th receive (lib.lua), 0 when the queue has no policy or the
-- message is at its max receive count (S7: dead-lettered, not backed off).
local rpol = nil
local function retryms(m, cnt)
  if not rpol then rpol = redis.call('HMGET', KEYS[1], 'rbo', 'rpm') end
  local maxrc = tonumber(rpol[2]) or 0
  if maxrc > 0 and cnt >= maxrc then return 0 end
  return backoffms(rpol[1] or nil, cnt, m .. now) or 0
end

if nv > 0 then
  local members = {}
  for j = 0, nv - 1 do
    local b = i + j * 4
    members[#members + 1] = vmember(ARGV[b], tonumber(ARGV[b + 1]))
  end
  local cnts = counts(members)
  local zv, changed, low, frompel = {}, {}, INF, {}
  for j, m in ipairs(members) do
    local b = i + (j - 1) * 4
    if cnts[j] < 0 and ARGV[b + 2] == '1' then
      if frompel[ARGV[b]] then
        cnts[j] = 1 -- taken out of the PEL by an earlier change in this batch
      elseif pelout(ARGV[b], tonumber(ARGV[b + 1])) then
        cnts[j] = 1
        frompel[#frompel + 1] = ARGV[b]
        frompel[ARGV[b]] = true
      end
    end
    if cnts[j] >= 0 and cnts[j] == tonumber(ARGV[b + 2]) then
      local ms = tonumber(ARGV[b + 3])
      if ms == -1 then
        ms = retryms(m, cnts[j])
      elseif ms < 0 then -- an extend (-2 - ms): ms, then the backoff
        ms = -2 - ms + retryms(m, cnts[j])
      end
      local at = now + ms
      zv[#zv + 1] = vscore(at, cnts[j])
      zv[#zv + 1] = m
      changed[#changed + 1] = {m, at}
      if at < low then low = at end
      res[#res + 1] = 1
    else
      res[#res + 1] = 0
    end
  end
  if #zv > 0 then
    redis.call('ZADD', KEYS[4], unpack(zv))
    local last = {}
    for _, c in ipairs(changed) do last[#last + 1] = c[1] end
    local xs = redis.call('ZMSCORE', KEYS[5], unpack(last))
    local zx = {}
    local maxrc1 = #frompel > 0 and redis.call('HGET', KEYS[1], 'rpm') == '1'
    if #frompel > 0 then vcount(KEYS[3], frompel, 1) end
    for j, c in ipairs(changed) do
      if xs[j] or (maxrc1 and frompel[(vparse(c[1]))]) then
        zx[#zx + 1] = c[2]
        zx[#zx + 1] = c[1]
      end
    end
    if #zx > 0 then redis.call('ZADD', KEYS[5], unpack(zx)) end
  end
  local hint = tonumber(h)
  if low < hint then redis.call('HSET', KEYS[3], 'h', fmt(low)) end
  if low < hint or low <= now then wake(KEYS[7], tag, low) end
  i = i + nv * 4
end

if nd > 0 then
  learn()
  for j = 0, nd - 1 do
    local b = i + j * 5
    local id, gen = ARGV[b], tonumber(ARGV[b + 2])
    if not dlq then
      res[#res + 1] = -1
    else
      local m = vmember(id, tonumber(ARGV[b + 1]))
      local sc = redis.call('ZSCORE', KEYS[4], m)
      local fields = nil
      if sc then
        local _, c = vdecode(sc)
        if c == gen then
          fields = entry(KEYS[2], id)
          if not fields then vremove(k, m, id) end -- trimmed under us
        end
      elseif gen == 1 and pelout(id, tonumber(ARGV[b + 1])) then
        fields = entry(KEYS[2], id) -- out of the PEL: todeadletter finds it in no v
      end
      if fields then
        todeadletter(k, ARGV[1], tag, id, m, fields, gen, ARGV[b + 3], ARGV[b + 4], now, dlq)
        res[#res + 1] = 1
      else
        res[#res + 1] = 0
      end
    end
  end
  i = i + nd * 5
end

if na > 0 then
  local gone, goneids, pel = {}, {}, {}
  local allpel = false -- every ack is for the PEL: ARGV[i..] as they are
  if redis.call('ZCARD', KEYS[4]) == 0 then
    -- Nothing in v (the usual case on streams): every ack is for the PEL,
    -- unless its handle is older than the tag (then all go one by one).
    if tonumber(ARGV[6]) >= ct then
      allpel = true
    else
      local firsts = {}
      for f in string.gmatch(ARGV[7], '[^,]+') do firsts[#firsts + 1] = tonumber(f) end
      for j = 1, na do
        if firsts[j] >= ct then pel[#pel + 1] = ARGV[i + j - 1] end
      end
    end
  else
    local members, firsts = {}, {}
    for f in string.gmatch(ARGV[7], '[^,]+') do firsts[#firsts + 1] = tonumber(f) end
    for j = 1, na do
      members[j] = vmember(ARGV[i + j - 1], firsts[j])
    end
    local held = redis.call('ZMSCORE', KEYS[4], unpack(members))
    local seen = {}
    for j, m in ipairs(members) do
      local id = ARGV[i + j - 1]
      if held[j] and not seen[m] then
        seen[m] = true
        gone[#gone + 1] = m
        goneids[#goneids + 1] = id
        res[#res + 1] = 1
      else
        if not held[j] and firsts[j] >= ct then
          pel[#pel + 1] = id -- in the PEL, or already gone
        end
        res[#res + 1] = 0
      end
    end
  end
  local del = #gone
  if #gone > 0 then
    learn()
    redis.call('ZREM', KEYS[4], unpack(gone))
    redis.call('ZREM', KEYS[5], unpack(gone))
    vcount(KEYS[3], goneids, -1)
    if k.tb then
      for _, id in ipairs(goneids) do topicrelease(k, id) end
    end
  end
  local n = 0
  if allpel then
    n = redis.call('XACK', KEYS[2], tag, unpack(ARGV, i, i + na - 1))
  elseif #pel > 0 then
    n = redis.call('XACK', KEYS[2], tag, unpack(pel))
  end
  pelgone = pelgone + n
  deleted = del + n
end
-- The counters in one write (read above; nothing else here changes them).
if pelgone > 0 and deleted > 0 then
  redis.call('HSET', KEYS[3], 'pc', (tonumber(st[3]) or 0) - pelgone, 'del', (tonumber(st[4]) or 0) + deleted)
elseif deleted > 0 then
  redis.call('HSET', KEYS[3], 'del', (tonumber(st[4]) or 0) + deleted)
elseif pelgone > 0 then
  redis.call('HSET', KEYS[3], 'pc', (tonumber(st[3]) or 0) - pelgone)
end
if pelgone > 0 then
  -- Settled in order, as usual: a record wholly below the PEL's first
  -- entry has nothing pending (others go when due, see pelexpire).
  local p = redis.call('XPENDING', KEYS[2], tag, '-', '+', 1)
  local gone = {}
  for _, m in ipairs(redis.call('ZRANGE', KEYS[8], 0, 3)) do
    local _, last = bparse(m)
    if not p[1] or idlt(last, p[1][1]) then gone[#gone + 1] = m end
  end
  if #gone > 0 then redis.call('ZREM', KEYS[8], unpack(gone)) end
end
local released = k.released or 0
if released > 0 then
  if now == 0 then now = nowms() end
  wake(KEYS[7], tag, now)
end
table.insert(res, 1, released)
return res
