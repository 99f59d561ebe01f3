-- sweep: dead-letter, for every tag, the messages it received
-- max_receive_count times whose visibility deadline has passed (S7, eager:
-- no receive needed). Atomic, so several processes sweeping at once move a
-- message once. Keeps each tag's x set right when the policy changed.
-- KEYS: 1 meta, 2 stream, 3 dlo, 4 tags, then per tag: n, v, rc, x
-- ARGV: 1 queue name, 2 max messages per tag, 3.. every tag name
-- Returns: messages dead-lettered. Errors: TAGS_CHANGED.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not sametags(KEYS[4], 3) then return redis.error_reply('TAGS_CHANGED') end
local m = redis.call('HMGET', KEYS[1], 'rpq', 'rpm')
local maxrc = tonumber(m[2]) or 0
local now = nowms()
local limit = tonumber(ARGV[2])
local moved = 0
for i = 3, #ARGV do
  local tag, b = ARGV[i], 4 + (i - 3) * 4
  local k = {s = KEYS[2], dlo = KEYS[3], n = KEYS[b + 1], v = KEYS[b + 2], rc = KEYS[b + 3], x = KEYS[b + 4]}
  if maxrc == 0 then
    redis.call('DEL', k.x)
  else
    if redis.call('HGET', k.n, 'xm') ~= tostring(maxrc) then
      -- The policy changed: rebuild the set of messages at their last receive.
      redis.call('DEL', k.x)
      local all = redis.call('HGETALL', k.rc)
      for j = 1, #all, 2 do
        if tonumber(string.match(all[j + 1], '^(%d+)|')) >= maxrc then
          local sc = redis.call('ZSCORE', k.v, all[j])
          if sc then redis.call('ZADD', k.x, sc, all[j]) end
        end
      end
      redis.call('HSET', k.n, 'xm', maxrc)
    end
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', k.x, '-inf', now, 'LIMIT', 0, limit)) do
      local rc = redis.call('HGET', k.rc, id)
      local cnt = rc and tonumber(string.match(rc, '^(%d+)|'))
      local sc = tonumber(redis.call('ZSCORE', k.v, id))
      if cnt and cnt >= maxrc and sc and sc <= now then
        local c = redis.call('XCLAIM', k.s, tag, 'c', 0, id)
        if c[1] and type(c[1]) == 'table' and type(c[1][2]) == 'table' then
          todeadletter(k, ARGV[1], tag, id, c[1][2], cnt, 'MAX_RECEIVE_COUNT_EXCEEDED', '', now, m[1])
          moved = moved + 1
        else -- trimmed under us
          redis.call('XACK', k.s, tag, id)
          redis.call('ZREM', k.v, id)
          redis.call('ZREM', k.x, id)
          redis.call('HDEL', k.rc, id)
        end
      else
        redis.call('ZREM', k.x, id)
        if cnt and cnt >= maxrc and sc then redis.call('ZADD', k.x, sc, id) end
      end
    end
  end
end
return moved
