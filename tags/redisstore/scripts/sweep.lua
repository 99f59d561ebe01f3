-- sweep: dead-letter, for every tag, the messages it received
-- max_receive_count times whose visibility deadline has passed (S7, eager:
-- no receive needed). Atomic, so several processes sweeping at once move a
-- message once. Keeps each tag's x set right when the policy changed.
-- With max_receive_count 1, deliveries still in a tag's PEL whose batch
-- is due move to v first (see lib.lua), so they are found here too.
-- On a topic queue a message dead-lettered unblocks its topic for that
-- tag (S13), and receives waiting on the tag are woken (the queue's wk).
-- KEYS: 1 meta, 2 stream, 3 dlo, 4 tags, then per tag: n, v, x, b
-- One process at a time sweeps a queue: the sweeper lease (meta field
-- 'lw', see lease in lib.lua).
-- ARGV: 1 queue name, 2 max messages a call, 3 lease owner ('' = none:
--       sweep regardless), 4 lease ms, 5.. every tag name
-- Every call is bounded (below): what is left makes the third element 1,
-- and the caller calls again.
-- Returns: {messages dead-lettered, ms left on another owner's lease (0:
--           this call swept), 1 when a bound left work for another call}.
-- Errors: TAGS_CHANGED.
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0, 0} end
if not sametags(KEYS[4], 5) then return redis.error_reply('TAGS_CHANGED') end
local now = nowms()
local held = lease(KEYS[1], 'lw', ARGV[3], tonumber(ARGV[4]), now)
if held > 0 then return {0, held, 0} end
local m = redis.call('HMGET', KEYS[1], 'rpq', 'rpm', 'topic')
local maxrc = tonumber(m[2]) or 0
local limit = tonumber(ARGV[2])
local moved, more = 0, 0
-- Work a call does at most, beyond limit messages a tag: XPAGE members of
-- v a tag when the policy changed, PELBATCHES due PEL batches a tag.
local XPAGE, PELBATCHES = 500, 20
for i = 5, #ARGV do
  local tag, b = ARGV[i], 4 + (i - 5) * 4
  local k = {s = KEYS[2], dlo = KEYS[3], n = KEYS[b + 1], v = KEYS[b + 2], x = KEYS[b + 3], b = KEYS[b + 4]}
  if m[3] == '1' then topickeys(k) end
  local ready = true -- x is right for the policy
  if maxrc == 0 then
    redis.call('DEL', k.x)
  elseif redis.call('HGET', k.n, 'xm') ~= tostring(maxrc) then
    -- The policy changed: rebuild the set of messages at their last
    -- receive, a page of v a call (n's xmc/xmo: the score reached, and
    -- how many members of that score are done), then sweep by it.
    ready = false
    local c = redis.call('HMGET', k.n, 'xmc', 'xmo')
    local from, off = c[1], tonumber(c[2]) or 0
    if not from then
      redis.call('DEL', k.x)
      from, off = '-inf', 0
    end
    local page = redis.call('ZRANGEBYSCORE', k.v, from, '+inf', 'WITHSCORES', 'LIMIT', off, XPAGE)
    local zx, same = {}, 0
    for j = 1, #page, 2 do
      local at, cnt = vdecode(page[j + 1])
      if cnt >= maxrc then
        zx[#zx + 1] = at
        zx[#zx + 1] = page[j]
      end
      if page[j + 1] == page[#page] then same = same + 1 end
    end
    if #zx > 0 then redis.call('ZADD', k.x, unpack(zx)) end
    if #page < 2 * XPAGE then
      redis.call('HSET', k.n, 'xm', maxrc)
      redis.call('HDEL', k.n, 'xmc', 'xmo')
    else
      if page[#page] == from then same = same + off end
      redis.call('HSET', k.n, 'xmc', page[#page], 'xmo', same)
    end
    more = 1 -- the next call rebuilds on, or sweeps by it
  end
  if maxrc > 0 and ready then
    if maxrc == 1 and pelexpire(k, tag, now, maxrc, PELBATCHES) then more = 1 end
    for _, mem in ipairs(redis.call('ZRANGEBYSCORE', k.x, '-inf', now, 'LIMIT', 0, math.max(limit - moved, 0))) do
      local sc = redis.call('ZSCORE', k.v, mem)
      local at, cnt = -1, -1
      if sc then at, cnt = vdecode(sc) end
      local id = vparse(mem)
      if cnt >= maxrc and at <= now then
        local fields = entry(k.s, id)
        if fields then
          todeadletter(k, ARGV[1], tag, id, mem, fields, cnt, 'MAX_RECEIVE_COUNT_EXCEEDED', '', now, m[1])
          moved = moved + 1
        else -- trimmed under us
          vremove(k, mem, id)
        end
      else
        redis.call('ZREM', k.x, mem)
        if cnt >= maxrc then redis.call('ZADD', k.x, at, mem) end
      end
    end
  end
  if (k.released or 0) > 0 then wake(wakekey(KEYS[1]), tag, now) end
end
return {moved, 0, more}
