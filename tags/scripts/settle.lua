-- settle: apply one tag's settlements from consume streams in one call:
-- visibility changes (nacks and extends) first, then dead-letterings, then
-- acks, so a message extended and then acked in the same batch ends acked.
-- Visibility and dead need the handle of the latest receive (generation =
-- receive count); an ack deletes whatever the generation (S3).
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 x, 6 dlo, 7 wk
-- ARGV: 1 queue name, 2 tag, 3 visibility count V, 4 dead count D,
--       5 ack count A, then V quadruples (message id, first receive ms,
--       generation, ms from now), D quintuples (message id, first receive
--       ms, generation, reason, description), A pairs (message id, first
--       receive ms)
-- Returns: per settlement in that order: 1 (applied), 0 (stale, or for an
--          ack: already gone), -1 (dead on a queue without a redrive
--          policy: NOT_A_SOURCE_QUEUE).
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag = ARGV[2]
local h = redis.call('HGET', KEYS[3], 'h')
if not h then return notfound(KEYS[1]) end
local nv, nd, na = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = nowms()
local res = {}
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[5], dlo = KEYS[6]}
local i = 6

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

if nv > 0 then
  local members = {}
  for j = 0, nv - 1 do
    local b = i + j * 4
    members[#members + 1] = vmember(ARGV[b], tonumber(ARGV[b + 1]))
  end
  local cnts = counts(members)
  local zv, changed, low = {}, {}, INF
  for j, m in ipairs(members) do
    local b = i + (j - 1) * 4
    if cnts[j] >= 0 and cnts[j] == tonumber(ARGV[b + 2]) then
      local at = now + tonumber(ARGV[b + 3])
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
    for j, c in ipairs(changed) do
      if xs[j] then
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
  local dlq = redis.call('HGET', KEYS[1], 'rpq')
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
  local members, ids = {}, {}
  for j = 0, na - 1 do
    local b = i + j * 2
    ids[#ids + 1] = ARGV[b]
    members[#members + 1] = vmember(ARGV[b], tonumber(ARGV[b + 1]))
  end
  local held = redis.call('ZMSCORE', KEYS[4], unpack(members))
  local gone, goneids, seen = {}, {}, {}
  for j, m in ipairs(members) do
    if held[j] and not seen[m] then
      seen[m] = true
      gone[#gone + 1] = m
      goneids[#goneids + 1] = ids[j]
      res[#res + 1] = 1
    else
      res[#res + 1] = 0
    end
  end
  if #gone > 0 then
    redis.call('ZREM', KEYS[4], unpack(gone))
    redis.call('ZREM', KEYS[5], unpack(gone))
    vcount(KEYS[3], goneids, -1)
    redis.call('HINCRBY', KEYS[3], 'del', #gone)
  end
end
return res
