-- janitor: trim the head of a queue's stream. An entry goes when its
-- retention has expired (counted from when it became visible), or — unless
-- the queue retains acknowledged messages — when no tag needs it any more
-- (every tag has read it and deleted it, or its filter never admitted it).
-- Trimming stops at the first entry that must stay, so one slow message
-- holds back the trimming of later ones (of the same second of ids) until
-- it is done or expires.
-- Expired entries a tag had not finished are counted in that tag's state
-- (xb: never read, xi: read but not deleted), never dropped silently.
-- It also recovers entries a receive read into a tag's PEL and never took
-- out (its tagqd stopped between the two steps): visible again at once,
-- receive count 0, as receive.lua leaves entries it cannot hand out.
-- KEYS: 1 meta, 2 stream, 3 tags, 4 fa, 5 dl, then per tag: n, v, p, x
-- ARGV: 1 max entries to examine, 2 ms a PEL entry must be idle to be
--       recovered, 3.. every tag name (same order as KEYS)
-- Returns: {entries removed, 1 if the limit was reached else 0}
-- Errors: TAGS_CHANGED when ARGV does not list exactly the queue's tags.
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
if not sametags(KEYS[3], 3) then return redis.error_reply('TAGS_CHANGED') end
local m = redis.call('HMGET', KEYS[1], 'ret', 'ra')
local ret, retain = tonumber(m[1]) * 1000, m[2] == '1'
local now = nowms()
local cur = cursors(KEYS[2])
local tags = {}
for i = 3, #ARGV do
  local k = 5 + (i - 3) * 4
  local name = ARGV[i]
  local f = redis.call('HGET', KEYS[4], 'f:' .. name)
  tags[#tags + 1] = {name = name, n = KEYS[k + 1], v = KEYS[k + 2], p = KEYS[k + 3], x = KEYS[k + 4],
    cursor = cur[name] or '0-0', flt = f and cjson.decode(f),
    w = {}, parked = redis.call('EXISTS', KEYS[k + 3]) == 1}
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
-- Stalled reads: recover, and until then keep them (low water below).
local minidle = tonumber(ARGV[2])
for _, t in ipairs(tags) do
  local pend = redis.call('XPENDING', KEYS[2], t.name)
  if tonumber(pend[1]) > 0 then
    for _, pe in ipairs(redis.call('XPENDING', KEYS[2], t.name, 'IDLE', minidle, '-', '+', 100)) do
      local id = pe[1]
      local fields = entry(KEYS[2], id)
      if fields then
        local f = fieldmap(fields)
        if fortag(t.name, t.flt, f) then
          redis.call('HINCRBY', t.n, 'con', 1)
          local due = tonumber(f['d'])
          if due and due > now then
            redis.call('ZADD', t.p, due, id)
          else
            redis.call('ZADD', t.v, vscore(now, 0), vmember(id, now))
            vcount(t.n, {id}, 1)
            due = now
          end
          local h = tonumber(redis.call('HGET', t.n, 'h') or INF)
          if due < h then redis.call('HSET', t.n, 'h', fmt(due)) end
        end
      end
      redis.call('XACK', KEYS[2], t.name, id)
    end
    pend = redis.call('XPENDING', KEYS[2], t.name)
    if tonumber(pend[1]) > 0 then t.pmin = pend[2] end
  end
end
local limit = tonumber(ARGV[1])
local removed = 0
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
  removed = redis.call('XTRIM', KEYS[2], 'MINID', low)
end
-- Then entry by entry from the head, for retention: in chunks that grow
-- from 1, since the head entry usually stays (needed, and not expired).
local chunk, from, stop, slow = 1, '-', false, 0
while not stop and slow < limit do
  local entries = redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', math.min(chunk, limit - slow))
  if #entries == 0 then break end
  from = nextid(entries[#entries][1])
  chunk = chunk * 4
  for _, e in ipairs(entries) do
    local id = e[1]
    local f = fieldmap(e[2])
    local due = tonumber(f['d']) or idparts(id)
    if due + ret <= now then
      for _, t in ipairs(tags) do
        local h = holds(t, id, f)
        if h == 'unread' then
          redis.call('HINCRBY', t.n, 'xb', 1)
        elseif h == 'held' then
          local held = redis.call('ZREM', t.p, id) == 1
          local mem = mayhold(t.n, id) and vfind(t.v, id)
          if mem then
            vremove(t, mem, id)
            held = true
          end
          if held then redis.call('HINCRBY', t.n, 'xi', 1) end
        end
      end
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
  end
end
if slow > 0 then
  redis.call('XTRIM', KEYS[2], 'MAXLEN', redis.call('XLEN', KEYS[2]) - slow)
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
local more = 0
if slow == limit then more = 1 end
return {removed + slow, more}
