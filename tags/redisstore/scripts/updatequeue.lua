-- updatequeue: set and remove queue attributes, optionally only when a
-- field still has a given value (a compare-and-set guard).
-- KEYS: 1 meta
-- ARGV: 1 guard field ('' = none), 2 guard value, 3 count N of fields to
--       remove, 4..3+N those fields, then field/value pairs to set
-- Returns: 1, or 0 when the guard did not hold (nothing changed).
-- Errors: QUEUE_NOT_FOUND.
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
local n = tonumber(ARGV[3])
if n > 0 then
  local del = {KEYS[1]}
  for i = 4, 3 + n do del[#del + 1] = ARGV[i] end
  redis.call('HDEL', unpack(del))
end
local args = {KEYS[1], 'ut', nowms()}
for i = 4 + n, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('HSET', unpack(args))
return 1
