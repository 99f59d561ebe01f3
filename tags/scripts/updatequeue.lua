-- updatequeue: set queue attributes.
-- KEYS: 1 meta
-- ARGV: field/value pairs
-- Returns: the meta hash (HGETALL). Errors: QUEUE_NOT_FOUND.
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
local args = {KEYS[1], 'ut', nowms()}
for i = 1, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', unpack(args))
return redis.call('HGETALL', KEYS[1])
