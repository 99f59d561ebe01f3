-- rates: one sample of a queue's counters for its rates over time
-- (rates.go): the messages added to it and, per tag, the messages
-- admitted to the tag, received (deliveries), deleted and dead-lettered.
-- When any moved since the last sample (rs), pushes the differences onto
-- the series (r, newest first, at most ARGV[3] samples, expiring ARGV[4]
-- ms after the last push) and keeps the counters in rs; when none moved
-- it writes nothing (a gap in the series is a zero rate). A sample covers
-- (max(last sample, previous visit), tick]. A counter lower than before,
-- or a tag made anew (another create time), counts from 0, so a
-- difference is never negative. A queue without rs (new, or sampled for
-- the first time) only records its counters, but one created since the
-- previous visit counts from 0. A tick not after the last sample writes
-- nothing (a second sampler on the same tick, or a late one).
-- Every key of the tags is named here from ARGV[5], in the queue's slot.
-- KEYS: 1 meta, 2 tags, 3 fa, 4 r, 5 rs
-- ARGV: 1 tick ms, 2 the queue's previous visit, the tick ms (0: unknown), 3 max samples,
--       4 series ttl ms, 5 key base ("<prefix>:{Q}:")
-- Returns: {partitions (1 when not partitioned; 0 when the queue does not
--          exist), 1 when it pushed a sample (the counters moved), else 0}.
local meta = redis.call('HMGET', KEYS[1], 'ct', 'added', 'np')
if not meta[1] then return {0, 0} end
local tick, prev = tonumber(ARGV[1]), tonumber(ARGV[2])
local parts = tonumber(meta[3]) or 1
local added = tonumber(meta[2]) or 0
-- The counters now, as one string: "added;tag ct in rcv del dead;...".
local names = redis.call('HKEYS', KEYS[2])
table.sort(names)
local cur = {}
local sig = {tostring(added)}
for _, tag in ipairs(names) do
  local st = redis.call('HMGET', ARGV[5] .. 't:' .. tag .. ':n', 'ct', 'a0', 'rcv', 'del', 'dead', 'flt')
  if st[1] then
    local fa = redis.call('HMGET', KEYS[3], 'a:' .. tag, 'm:' .. tag)
    local adm
    if st[6] then adm = tonumber(fa[1]) or 0 else adm = added - (tonumber(st[2]) or 0) end
    adm = adm + (tonumber(fa[2]) or 0)
    local c = {tag, st[1], adm, tonumber(st[3]) or 0, tonumber(st[4]) or 0, tonumber(st[5]) or 0}
    cur[#cur + 1] = c
    sig[#sig + 1] = table.concat(c, ' ')
  end
end
local now = table.concat(sig, ';')
local last = redis.call('HMGET', KEYS[5], 't', 's')
local lastt = tonumber(last[1])
if lastt and lastt >= tick then return {parts, 0} end
if last[2] == now then return {parts, 0} end
local was, wasadded, from = {}, 0, nil
if last[2] then
  local first = true
  for part in string.gmatch(last[2], '[^;]+') do
    if first then
      wasadded, first = tonumber(part), false
    else
      local f = {}
      for w in string.gmatch(part, '%S+') do f[#f + 1] = w end
      was[f[1]] = f
    end
  end
  from = lastt
else
  local ct = tonumber(meta[1])
  if prev > 0 and ct and ct > prev and ct < tick then
    from = ct -- new since the previous tick: everything counts
  end
end
redis.call('HSET', KEYS[5], 't', tick, 's', now)
if not from then return {parts, 0} end
if prev > from then from = prev end
local function diff(new, old)
  old = tonumber(old) or 0
  if new < old then return new end
  return new - old
end
local dadded = diff(added, wasadded)
local out = {tostring(tick) .. ' ' .. tostring(math.max(tick - from, 1)) .. ' ' .. tostring(dadded)}
local moved = dadded > 0
for _, c in ipairs(cur) do
  local o = was[c[1]]
  if o and o[2] ~= c[2] then o = nil end -- the tag was made anew
  o = o or {}
  local d = {diff(c[3], o[3]), diff(c[4], o[4]), diff(c[5], o[5]), diff(c[6], o[6])}
  if d[1] + d[2] + d[3] + d[4] > 0 then
    out[#out + 1] = c[1] .. ' ' .. table.concat(d, ' ')
    moved = true
  end
end
if moved then
  redis.call('LPUSH', KEYS[4], table.concat(out, ';'))
  redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[3]) - 1)
  redis.call('PEXPIRE', KEYS[4], ARGV[4])
  return {parts, 1}
end
return {parts, 0}
