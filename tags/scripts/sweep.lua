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
-- ARGV: 1 queue name, 2 max messages per tag, 3 lease owner ('' = none:
--       sweep regardless), 4 lease ms, 5.. every tag name
-- Returns: {messages dead-lettered, ms left on another owner's lease (0:
--           this call swept)}. Errors: TAGS_CHANGED.
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
if not sametags(KEYS[4], 5) then return redis.error_reply('TAGS_CHANGED') end
local now = nowms()
local held = lease(KEYS[1], 'lw', ARGV[3], tonumber(ARGV[4]), now)
if held > 0 then return {0, held} end
local m = redis.call('HMGET', KEYS[1], 'rpq', 'rpm', 'topic')
local maxrc = tonumber(m[2]) or 0
local limit = tonumber(ARGV[2])
local moved = 0
for i = 5, #ARGV do
  local tag, b = ARGV[i], 4 + (i - 5) * 4
  local k = {s = KEYS[2], dlo = KEYS[3], n = KEYS[b + 1], v = KEYS[b + 2], x = KEYS[b + 3], b = KEYS[b + 4]}
  if m[3] == '1' then topickeys(k) end
  if maxrc == 0 then
    redis.call('DEL', k.x)
  else
    if redis.call('HGET', k.n, 'xm') ~= tostring(maxrc) then
      -- The policy changed: rebuild the set of messages at their last receive.
      redis.call('DEL', k.x)
      local all = redis.call('ZRANGE', k.v, 0, -1, 'WITHSCORES')
      for j = 1, #all, 2 do
        local at, cnt = vdecode(all[j + 1])
        if cnt >= maxrc then redis.call('ZADD', k.x, at, all[j]) end
      end
      redis.call('HSET', k.n, 'xm', maxrc)
    end
    if maxrc == 1 then pelexpireall(k, tag, now, maxrc) end
    for _, mem in ipairs(redis.call('ZRANGEBYSCORE', k.x, '-inf', now, 'LIMIT', 0, limit)) do
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
return {moved, 0}
