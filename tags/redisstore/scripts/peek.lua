-- peek: the next messages a receive on this tag would return, without
-- receiving them (no counters, cursors or deadlines change).
-- (Deliveries in the tag's PEL whose batch is due move to v first, which
-- changes how they are kept, not what they are: see lib.lua; at most 20
-- batches a call, as receive.lua moves them.)
-- Pages: what a receive would return comes in three parts, in order: due
-- redeliveries (v, by due time), due delayed messages the tag read early
-- (p), then stream entries past the tag's cursor. On a priority queue, a
-- part 'h' comes before the stream: the messages the tag holds, by
-- priority and FIFO within one (a receive reads the stream's into its
-- lists before it chooses, and hands out every 10th by age: the listing
-- is not exactly the order receives follow). A page starts at a
-- position {part, where}: 'v'/'p'/'h' and an offset into that part's
-- members, or 's' and the last stream id already shown; the reply says
-- where the next page starts when this one is full. (Offsets shift when
-- members come and go between pages: a listing, not a snapshot.)
-- KEYS: 1 meta, 2 stream, 3 n, 4 v, 5 p, 6 x, 7 b
-- ARGV: 1 tag, 2 max, 3 max stream entries to scan, 4 part ('v', 'p', 'h'
--       or 's'), 5 where (an offset, or for 's' a stream id, '' = the cursor)
-- Returns: {{{id, fields, receive count so far, first receive ms or 0}...},
--           next part ('' = no further page), next where}
-- Errors: QUEUE_NOT_FOUND, TAG_NOT_FOUND.
local tag, max = ARGV[1], tonumber(ARGV[2])
local part, where = ARGV[4], ARGV[5]
local st = redis.call('HMGET', KEYS[3], 'ct', 'flt')
if not st[1] then return notfound(KEYS[1]) end
local now = nowms()
pelexpire({s = KEYS[2], n = KEYS[3], v = KEYS[4], x = KEYS[6], b = KEYS[7]}, tag, now,
  tonumber(redis.call('HGET', KEYS[1], 'rpm')) or 0, 20)
local out = {}
local function add(id, cnt, first)
  local fields = entry(KEYS[2], id)
  if fields then out[#out + 1] = {id, fields, cnt, first} end
end
-- Each part: members at offsets off.. are taken; when the page fills, the
-- next page starts past the last one taken.
local nextpart, nextwhere = '', ''
if part == 'v' then
  local off = tonumber(where) or 0
  local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', vdue(now), 'WITHSCORES', 'LIMIT', off, max + 1)
  for j = 1, #due, 2 do
    if #out == max then
      nextpart, nextwhere = 'v', fmt(off + (j - 1) / 2)
      break
    end
    local id, first = vparse(due[j])
    local _, cnt = vdecode(due[j + 1])
    add(id, cnt, first)
  end
  part, where = 'p', '0'
end
if part == 'p' and nextpart == '' then
  local off = tonumber(where) or 0
  local due = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', off, max - #out + 1)
  for j, id in ipairs(due) do
    if #out == max then
      nextpart, nextwhere = 'p', fmt(off + j - 1)
      break
    end
    add(id, 0, 0)
  end
  part, where = 'h', '0'
end
if part == 'h' and nextpart == '' then
  -- A priority queue's held messages (lib.lua), by priority, FIFO within
  -- one; where: how many of them the pages before showed.
  if redis.call('HGET', KEYS[1], 'prq') == '1' then
    local k = priokeys({n = KEYS[3]})
    local off = tonumber(where) or 0
    local skip, shown, total = off, 0, 0
    for p = 1, PRIOMAX do
      local len = tonumber(redis.call('HGET', KEYS[3], 'pq:' .. p) or 0)
      total = total + len
      if #out < max and len > skip then
        for _, id in ipairs(redis.call('LRANGE', k.pl .. p, skip, skip + max - #out - 1)) do
          add(id, 0, 0)
          shown = shown + 1
        end
      end
      skip = math.max(skip - len, 0)
    end
    if #out >= max and off + shown < total then nextpart, nextwhere = 'h', fmt(off + shown) end
  end
  part, where = 's', ''
end
if nextpart ~= '' then return {out, nextpart, nextwhere} end
local flt = nil
if st[2] then flt = cjson.decode(st[2]) end
local from = cursors(KEYS[2])[tag] or '0-0'
if where ~= '' and idlt(from, where) then from = where end
from = nextid(from)
if #out >= max then -- filled by the parts before: the stream, if anything, is the next page's
  if redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', 1)[1] then return {out, 's', where} end
  return {out, '', ''}
end
local scanned, limit, last = 0, tonumber(ARGV[3]), nil
while #out < max and scanned < limit do
  local batch = redis.call('XRANGE', KEYS[2], from, '+', 'COUNT', 100)
  for _, e in ipairs(batch) do
    scanned = scanned + 1
    last = e[1]
    local f = fieldmap(e[2])
    if fortag(tag, flt, f) and (tonumber(f['d']) or 0) <= now then
      out[#out + 1] = {e[1], e[2], 0, 0}
      if #out >= max then break end
    end
  end
  if #out >= max or #batch < 100 then break end
  from = nextid(batch[#batch][1])
end
if last and (#out >= max or scanned >= limit) then
  -- Full (or the scan's bound reached): the next page goes on past last,
  -- if the stream has anything past it.
  if redis.call('XRANGE', KEYS[2], nextid(last), '+', 'COUNT', 1)[1] then nextpart, nextwhere = 's', last end
end
return {out, nextpart, nextwhere}
