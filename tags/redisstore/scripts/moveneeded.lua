-- moveneeded: which dead letters some tag of the DLQ still needs (holds,
-- or has yet to read and its filter admits): only those are moved back. A
-- dead letter every DLQ tag has received and deleted is done with, even
-- before the janitor trims it. A DLQ without tags needs all of them. (A
-- tag holds a letter in v, in p, or in its PEL; on a topic queue, also
-- held behind its topic: S13, lib.lua; on a priority queue, held in its
-- priority's list.)
-- KEYS: 1 stream, 2 tags, then per tag: n, v, p
-- ARGV: 1 number of tags N, 2..N+1 every tag name (same order as KEYS),
--       then triples: id, attributes JSON ('' none), only ('' none)
-- Returns: per triple 1 (needed) or 0.
-- Errors: TAGS_CHANGED.
local n = tonumber(ARGV[1])
if redis.call('HLEN', KEYS[2]) ~= n then return redis.error_reply('TAGS_CHANGED') end
local cur = cursors(KEYS[1])
local tags = {}
for i = 1, n do
  local name, b = ARGV[1 + i], 2 + (i - 1) * 3
  if redis.call('HEXISTS', KEYS[2], name) == 0 then return redis.error_reply('TAGS_CHANGED') end
  local flt = redis.call('HGET', KEYS[b + 1], 'flt')
  tags[i] = {name = name, n = KEYS[b + 1], v = KEYS[b + 2], p = KEYS[b + 3], cursor = cur[name] or '0-0',
    flt = flt and cjson.decode(flt)}
end
local out = {}
for i = n + 2, #ARGV, 3 do
  local id = ARGV[i]
  local f = {a = ARGV[i + 1] ~= '' and ARGV[i + 1] or nil, only = ARGV[i + 2] ~= '' and ARGV[i + 2] or nil}
  local needed = n == 0
  for _, t in ipairs(tags) do
    if idlt(t.cursor, id) then
      if fortag(t.name, t.flt, f) then needed = true end
    elseif redis.call('ZSCORE', t.p, id) or (mayhold(t.n, id) and vfind(t.v, id))
        or #redis.call('XPENDING', KEYS[1], t.name, id, id, 1) > 0 then
      needed = true
    elseif mayhold(t.n, id) then
      -- Held behind its topic? (Counted in w but in no v.)
      local k = topickeys({n = t.n})
      local e = entry(KEYS[1], id)
      local f = e and fieldmap(e)
      local tp = f and f['tp']
      if tp and redis.call('LPOS', k.th .. tp, id) then needed = true end
      -- Held in its priority's list (a priority queue)?
      if f and not needed and redis.call('LPOS', priokeys({n = t.n}).pl .. prioof(f), id) then needed = true end
    end
    if needed then break end
  end
  out[#out + 1] = needed and 1 or 0
end
return out
