-- dlqadd: the dead-letter queue side of the outbox relay. Adds one dead
-- letter unless its dedupe key was added before (checked and set in this
-- same script), so relaying an outbox entry twice adds it once (S9).
-- Dead letters are never refused for the DLQ's caps: they count, and an
-- overflow 'drop' DLQ drops its oldest at the janitor's next pass.
-- KEYS: 1 meta, 2 stream, 3 dd, 4 fa, 5 z, 6 zh (all of the DLQ)
-- ARGV: 1 dedupe key, 2 body, 3 attributes JSON ('' = none), 4 dead-letter JSON,
--       5 size (as max_message_bytes counts it; kept in field z, for movestep),
--       6 topic ('' none: kept in field tp, S13), 7 priority ('' none: kept
--       in field pr, so a DLQ that is a priority queue, and a move back,
--       keep it)
-- Returns: 1 added, 0 already added, -1 the DLQ does not exist.
local ret = redis.call('HGET', KEYS[1], 'ret')
if not ret then return -1 end
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
local now = nowms()
local args = {KEYS[2], idarg(KEYS[1], now), 'b', ARGV[2], 'x', ARGV[4], 'z', ARGV[5]}
if ARGV[3] ~= '' then
  args[#args + 1] = 'a'
  args[#args + 1] = ARGV[3]
end
if ARGV[6] and ARGV[6] ~= '' then
  args[#args + 1] = 'tp'
  args[#args + 1] = ARGV[6]
end
if ARGV[7] and ARGV[7] ~= '' then
  args[#args + 1] = 'pr'
  args[#args + 1] = ARGV[7]
end
redis.call('XADD', unpack(args))
redis.call('HINCRBY', KEYS[1], 'added', 1)
sizeadd({meta = KEYS[1], z = KEYS[5], zh = KEYS[6]}, {tonumber(ARGV[5])})
local filters = loadfilters(KEYS[4])
countadmitted(filters, ARGV[3])
flushadmitted(KEYS[4], filters)
redis.call('ZADD', KEYS[3], now, ARGV[1])
-- A key is needed only while its outbox entry may be relayed again; keep
-- keys as long as the DLQ keeps messages.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ret) * 1000)
return 1
