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
local function wfield(id)
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
-- Removes member m (message id) from a tag's in-flight set and last-chance set.
local function vremove(k, m, id)
  if redis.call('ZREM', k.v, m) == 1 then vcount(k.n, {id}, -1) end
  redis.call('ZREM', k.x, m)
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
  redis.call('XADD', unpack(args))
  vremove(k, m, id)
  redis.call('HINCRBY', k.n, 'dead', 1)
end

-- Fields of stream entry id, or nil when it was trimmed.
local function entry(stream, id)
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
