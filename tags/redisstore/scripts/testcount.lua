-- testcount.lua: put before lib.lua in the scripts of a store made with
-- Config.TestClock (tests only). While a queue's meta hash (KEYS[1] of
-- the scripts a test counts) has
-- the field test_count, each Redis command a script runs for it adds 1 to
-- the field test_calls: tests count the work a script does (S13: finding a
-- ready topic costs the same whatever the number of blocked ones). And it
-- adds to test_touched the entries the command touched, as far as its
-- arguments and reply tell: 1, plus the larger of its arguments beyond
-- the key and what its reply holds (the elements of a list reply, the
-- entries of an XREAD(GROUP) reply, the count of a command that removes):
-- tests bound what one script call touches (issue 23 D).
local redis = (function(r)
  -- (pcall: KEYS[1] of a few scripts is not a hash.)
  if not KEYS[1] or r.pcall('HEXISTS', KEYS[1], 'test_count') ~= 1 then return r end
  local removes = {XTRIM = true, XACK = true, XDEL = true, ZREM = true, ZREMRANGEBYSCORE = true, HDEL = true,
    DEL = true, LREM = true, ZREMRANGEBYRANK = true}
  local function touched(args, reply)
    local name = string.upper(args[1])
    local n = 0
    if type(reply) == 'table' then
      n = #reply
      if (name == 'XREAD' or name == 'XREADGROUP') and reply[1] and reply[1][2] then n = #reply[1][2] end
    elseif type(reply) == 'number' and removes[name] then
      n = reply
    end
    return 1 + math.max(n, #args - 2)
  end
  local w = setmetatable({}, {__index = r})
  local function count(args, reply)
    r.call('HINCRBY', KEYS[1], 'test_calls', 1)
    r.call('HINCRBY', KEYS[1], 'test_touched', touched(args, reply))
    return reply
  end
  w.call = function(...) return count({...}, r.call(...)) end
  w.pcall = function(...) return count({...}, r.pcall(...)) end
  return w
end)(redis)
