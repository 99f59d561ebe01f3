-- peek: the next messages a receive on this tag would return, without
-- receiving them (no counters, cursors or deadlines change).
-- (Deliveries in the tag's PEL whose batch is due move to v first, which
-- changes how they are kept, not what they are: see lib.lua.)
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 p, 6 x, 7 b
-- ARGV: 1 tag, 2 max, 3 max stream entries to scan
-- Returns: {{id, fields, receive count so far, first receive ms or 0}...}
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag, max = ARGV[1], tonumber(ARGV[2])
local st = redis.call('HMGET', KEYS[3], 'ct', 'flt')
if not st[1] then return notfound(KEYS[1]) end
local now = nowms()
pelexpireall({s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[6], b = KEYS[7]}, tag, now,
  tonumber(redis.call('HGET', KEYS[1], 'rpm')) or 0)
local out = {}
local function add(id, cnt, first)
  local e = redis.call('XRANGE', KEYS[2], id, id)
  if e[1] then out[#out + 1] = {id, e[1][2], cnt, first} end
end
local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', vdue(now), 'WITHSCORES', 'LIMIT', 0, max)
for j = 1, #due, 2 do
  local id, first = vparse(due[j])
  local _, cnt = vdecode(due[j + 1])
  add(id, cnt, first)
end
if #out < max then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, max - #out)) do
    add(id, 0, 0)
  end
end
local flt = nil
if st[2] then flt = cjson.decode(st[2]) end
local from = nextid(cursors(KEYS[2])[tag] or '0-0')
local scanned, limit = 0, tonumber(ARGV[3])
while #out < max and scanned < limit do
  local batch = redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', 100)
  for _, e in ipairs(batch) do
    scanned = scanned + 1
    local f = fieldmap(e[2])
    if fortag(tag, flt, f) and (tonumber(f['d']) or 0) <= now then
      out[#out + 1] = {e[1], e[2], 0, 0}
      if #out >= max then break end
    end
  end
  if #batch < 100 then break end
  from = nextid(batch[#batch][1])
end
return out
