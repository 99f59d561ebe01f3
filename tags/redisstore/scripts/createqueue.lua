-- createqueue: a queue with its default tag, reading from now on, or with
-- no tag at all.
-- KEYS: 1 meta, 2 tags, 3 stream, 4 default tag state (n), 5 z, 6 zh
-- ARGV: 1 default tag name ('' = none), 2 default tag config JSON, 3.. meta
--       field/value pairs
-- Returns: create time (ms). Errors: QUEUE_ALREADY_EXISTS.
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.error_reply('QUEUE_ALREADY_EXISTS') end
local now = nowms()
local args = {KEYS[1], 'ct', now, 'ut', now, 'added', 0, 'rb', 0, 'dropped', 0}
for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', unpack(args))
redis.call('DEL', KEYS[3], KEYS[5], KEYS[6])
if ARGV[1] == '' then
  -- The stream must exist (sends add with NOMKSTREAM): make it with a
  -- group, then drop the group.
  redis.call('XGROUP', 'CREATE', KEYS[3], 'new', '$', 'MKSTREAM')
  redis.call('XGROUP', 'DESTROY', KEYS[3], 'new')
  return now
end
redis.call('XGROUP', 'CREATE', KEYS[3], ARGV[1], '$', 'MKSTREAM')
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[4], 'ct', now, 'a0', 0, 'init', 0, 'con', 0, 'xb', 0, 'xi', 0,
  'rcv', 0, 'del', 0, 'dead', 0, 'h', fmt(INF), 'vis', -1)
return now
