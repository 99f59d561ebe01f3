-- createtag: a consumer group at the start point plus the tag's state.
-- KEYS: 1 meta, 2 tags, 3 stream, 4 n, 5 fa, 6 v, 7 p, 8 x, 9 b
-- ARGV: 1 tag, 2 config JSON, 3 start kind (0 now, 1 oldest, 2 at),
--       4 start ms (kind 2, >= 1), 5 filter JSON or '', 6 visibility ms or -1,
--       7 max tags, 8 read quota per second overriding the queue's (-1:
--       the queue's; 0: none for this tag)
-- Returns: create time (ms).
-- Errors: QUEUE_NOT_FOUND, TAG_ALREADY_EXISTS, TOO_MANY_TAGS.
--
-- State fields of n: ct create ms; vis visibility override ms (-1 none);
-- flt filter JSON; a0 the queue's "added" at creation; init admitted
-- messages retained beyond the start at creation; con messages read from
-- the stream (admitted); xb admitted messages expired before being read;
-- xi read messages expired before being deleted; rcv receives; del deletes;
-- dead dead-letters; h lower bound of the earliest score in v and p;
-- mvd unread dead letters moved back out (the queue is a DLQ); pc
-- deliveries in the PEL (see lib.lua); rq the read quota override (unset:
-- the queue's), rqs and rqn its second and count (quota.go); xm the
-- max receive count the tag's x set was built for; w:<s> in-flight
-- messages whose id is in second s (see lib.lua).
local tag = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
if redis.call('HEXISTS', KEYS[2], tag) == 1 then return redis.error_reply('TAG_ALREADY_EXISTS') end
if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[7]) then return redis.error_reply('TOO_MANY_TAGS') end
local now = nowms()
local kind = tonumber(ARGV[3])
local startid, from = '$', nil
if kind == 1 then
  startid, from = '0', '-'
elseif kind == 2 then
  local ms = tonumber(ARGV[4])
  startid, from = fmt(ms - 1) .. '-18446744073709551615', fmt(ms) .. '-0'
end
local flt = nil
if ARGV[5] ~= '' then flt = cjson.decode(ARGV[5]) end
topicclear(KEYS[4])
prioclear(KEYS[4])
redis.call('DEL', KEYS[4], KEYS[6], KEYS[7], KEYS[8], KEYS[9])
redis.call('HDEL', KEYS[5], 'm:' .. tag)
redis.call('XGROUP', 'CREATE', KEYS[3], tag, startid, 'MKSTREAM')
local init = 0
-- XLEN counts every retained entry: right unless some are moved-back
-- dead letters meant for one tag only (then count by scanning).
if kind == 1 and not flt and not redis.call('HGET', KEYS[1], 'mvb') then
  init = redis.call('XLEN', KEYS[3])
elseif kind ~= 0 then
  while true do
    local batch = redis.call('XRANGE', KEYS[3], from, '+', 'COUNT', 1000)
    for _, e in ipairs(batch) do
      if fortag(tag, flt, fieldmap(e[2])) then init = init + 1 end
    end
    if #batch < 1000 then break end
    from = nextid(batch[#batch][1])
  end
end
local added = redis.call('HGET', KEYS[1], 'added') or 0
redis.call('HSET', KEYS[4], 'ct', now, 'a0', added, 'init', init, 'con', 0, 'xb', 0, 'xi', 0,
  'rcv', 0, 'del', 0, 'dead', 0, 'pc', 0, 'h', fmt(INF), 'vis', ARGV[6])
if tonumber(ARGV[8]) >= 0 then redis.call('HSET', KEYS[4], 'rq', ARGV[8]) end
if flt then
  redis.call('HSET', KEYS[4], 'flt', ARGV[5])
  redis.call('HSET', KEYS[5], 'f:' .. tag, ARGV[5], 'a:' .. tag, 0)
end
redis.call('HSET', KEYS[2], tag, ARGV[2])
return now
