-- testcount.lua: put before lib.lua in the scripts of a store made with
-- Config.TestClock (tests only). While a queue's meta hash (KEYS[1] of
-- the scripts a test counts) has
-- the field test_count, each Redis command a script runs for it adds 1 to
-- the field test_calls: tests count the work a script does (S13: finding a
-- ready topic costs the same whatever the number of blocked ones).
local redis = (function(r)
  -- (pcall: KEYS[1] of a few scripts is not a hash.)
  if not KEYS[1] or r.pcall('HEXISTS', KEYS[1], 'test_count') ~= 1 then return r end
  local w = setmetatable({}, {__index = r})
  w.call = function(...)
    r.call('HINCRBY', KEYS[1], 'test_calls', 1)
    return r.call(...)
  end
  return w
end)(redis)
