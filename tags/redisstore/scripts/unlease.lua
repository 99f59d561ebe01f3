-- unlease: give up a lease held in a string key, if this owner holds it.
-- KEYS: 1 the lease key
-- ARGV: 1 owner
-- Returns: 1 when it was held by owner (and is now free), else 0.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
