-- Deletes a grant.
-- KEYS[1] grants hash, KEYS[2] version
-- ARGV[1] grant field ("<principal>/<queue pattern>")
-- returns 1 when deleted, 0 when there was none
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('INCR', KEYS[2])
return 1
