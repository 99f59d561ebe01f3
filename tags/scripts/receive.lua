-- receive: hand out up to max messages to a tag. Due redeliveries first
-- (visibility expired or nacked), then parked delayed messages now due,
-- then new stream entries. A due message this tag already received
-- max_receive_count times is dead-lettered instead (S7), never handed out
-- again. Never blocks; the caller waits outside Lua.
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 p, 6 wk, 7 x, 8 dlo
-- ARGV: 1 tag, 2 max, 3 visibility ms override (-1 none), 4 max stream
--       entries to scan (bounds the work of a filtered tag), 5 queue name,
--       6 '' or the queue's default tag name as the caller believes it
--       (checked: the caller caches it)
-- Returns: {now ms, hint ms, more (1 = scan limit hit, call again),
--           the queue's receive_wait_seconds, dead-lettered count,
--           {{id, fields, receive count, first receive ms}...}}
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND, DEFAULT_TAG_CHANGED.
local tag, max = ARGV[1], tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[3], 'ct', 'vis', 'flt', 'h')
if not st[1] then return notfound(KEYS[1]) end
local qm = redis.call('HMGET', KEYS[1], 'vis', 'wait', 'rpq', 'rpm', 'dtag')
if ARGV[6] ~= '' and qm[5] ~= ARGV[6] then return redis.error_reply('DEFAULT_TAG_CHANGED') end
local maxrc = tonumber(qm[4]) or 0
local k = {s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[7], dlo = KEYS[8]}
local vis = tonumber(ARGV[3])
if vis < 0 then vis = tonumber(st[2]) end
if vis < 0 then vis = tonumber(qm[1]) * 1000 end
local now = nowms()
local deadline = now + vis
local hint = tonumber(st[4]) or INF
local newhint = hint
local out = {}
local dead = 0

-- Deliveries are written in one ZADD per batch (each redis.call costs
-- more than the work it does); flush before v is read again. Work per
-- message is kept to the least: it is most of this script's cost.
local zv, zx, fresh = {}, {}, {}
local score1 = vscore(deadline, 1) -- every first delivery's score
local function deliver(id, m, fields, cnt, first)
  cnt = math.min(cnt, VCNT - 1)
  zv[#zv + 1] = cnt == 1 and score1 or vscore(deadline, cnt)
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

if hint <= now then
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
        todeadletter(k, ARGV[5], tag, id, m, fields, cnt, 'MAX_RECEIVE_COUNT_EXCEEDED', '', now, qm[3])
        dead = dead + 1
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
      if fields then deliverfirst(id, fields) end
    end
    exhausted = exhausted and #pd < want
  else
    exhausted = false
  end
  flush()
  if exhausted then
    newhint = INF
    local a = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
    if a[2] then newhint = math.min(newhint, (vdecode(a[2]))) end
    local b = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
    if b[2] then newhint = math.min(newhint, tonumber(b[2])) end
  end
end

local flt = nil
if st[3] then flt = cjson.decode(st[3]) end
local limit = tonumber(ARGV[4])
local scanned, con, more = 0, 0, 0
while #out < max do
  if scanned >= limit then
    more = 1
    break
  end
  local r = redis.call('XREADGROUP', 'GROUP', tag, 'c', 'COUNT', max - #out, 'NOACK', 'STREAMS', KEYS[2], '>')
  if not r or not r[1] or #r[1][2] == 0 then break end
  for _, e in ipairs(r[1][2]) do
    scanned = scanned + 1
    local id, fields = e[1], e[2]
    -- Most entries are b (and a) alone: no table of fields for them.
    local plain = fields[1] == 'b' and (fields[3] == nil or (fields[3] == 'a' and fields[5] == nil))
    local f = nil
    if not plain then f = fieldmap(fields) end
    local ok
    if plain then
      ok = not flt or admits(flt, fields[3] and fields[4])
    else
      ok = fortag(tag, flt, f)
    end
    if ok then
      con = con + 1
      local due = f and tonumber(f['d'])
      if due and due > now then
        redis.call('ZADD', KEYS[5], due, id)
        if due < newhint then newhint = due end
      else
        deliverfirst(id, fields)
      end
    end
  end
end

flush()
if #out > 0 and deadline < newhint then newhint = deadline end
if con > 0 then redis.call('HINCRBY', KEYS[3], 'con', con) end
if #out > 0 then redis.call('HINCRBY', KEYS[3], 'rcv', #out) end
if newhint ~= hint then
  redis.call('HSET', KEYS[3], 'h', fmt(newhint))
  if newhint < hint then wake(KEYS[6], tag, newhint) end
end
return {now, fmt(newhint), more, tonumber(qm[2]), dead, out}
