-- moveadd: the source side of moving a dead letter back (S10). Appends it
-- for one tag only (field only): the tag it died in receives it again, with
-- a fresh receive count; tags that processed it never see it. Deduplicated
-- by key, so a move repeated after a crash adds it once.
-- Never refused for the queue's caps (see dlqadd.lua).
-- KEYS: 1 meta, 2 stream, 3 dd, 4 fa, 5 tags, 6 z, 7 zh (all of the source queue)
-- ARGV: 1 dedupe key, 2 tag, 3 body, 4 attributes JSON ('' none),
--       5 original message id, 6 times moved back (this move included),
--       7 size (as max_message_bytes counts it), 8 topic ('' none: the
--       dead letter's, kept so a topic queue orders it again, S13),
--       9 priority ('' none: the dead letter's, kept so a priority queue
--       hands it out by it again)
-- Returns: 1 added, 0 already added, -1 no such queue, -2 no such tag.
local ret = redis.call('HGET', KEYS[1], 'ret')
if not ret then return -1 end
if redis.call('HEXISTS', KEYS[5], ARGV[2]) == 0 then return -2 end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
local now = nowms()
local args = {KEYS[2], idarg(KEYS[1], now), 'b', ARGV[3], 'only', ARGV[2], 'oi', ARGV[5], 'mv', ARGV[6]}
if ARGV[4] ~= '' then
  args[#args + 1] = 'a'
  args[#args + 1] = ARGV[4]
end
if ARGV[8] and ARGV[8] ~= '' then
  args[#args + 1] = 'tp'
  args[#args + 1] = ARGV[8]
end
if ARGV[9] and ARGV[9] ~= '' then
  args[#args + 1] = 'pr'
  args[#args + 1] = ARGV[9]
end
redis.call('XADD', unpack(args))
redis.call('HSET', KEYS[1], 'mvb', 1)
sizeadd({meta = KEYS[1], z = KEYS[6], zh = KEYS[7]}, {tonumber(ARGV[7])})
redis.call('HINCRBY', KEYS[4], 'm:' .. ARGV[2], 1)
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ret) * 1000)
return 1
