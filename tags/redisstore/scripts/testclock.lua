-- testclock.lua: appended to lib.lua in the scripts of a store made with
-- Config.TestClock (tests only). KEYS[1] is always the queue's meta hash;
-- its test_clock_ms field, when set, replaces TIME, so tests drive a
-- queue's time on a real Redis. Message ids then follow that clock too.
TESTCLOCK = true
local realnow = nowms
nowms = function()
  local fixed = redis.call('HGET', KEYS[1], 'test_clock_ms')
  if fixed then return tonumber(fixed) end
  return realnow()
end
