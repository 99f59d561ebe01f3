-- movetask: start, lease, cancel and finish move tasks of a DLQ (S10).
-- One task runs at a time per DLQ; a task is worked on by one process at a
-- time (the lease owner), and another takes over when the lease lapses, so
-- a task survives a tagqd restart.
-- KEYS: 1 meta, 2 tasks
-- ARGV: 1 op, then per op:
--   start:  2 task JSON (id, sq, st, rate, total, end)  -> task JSON
--   lease:  2 id, 3 owner, 4 lease ms                   -> task JSON or 0
--   cancel: 2 id                                        -> task JSON
--   finish: 2 id, 3 owner, 4 state, 5 note               -> 1 or 0
-- Errors: QUEUE_NOT_FOUND, MOVE_IN_PROGRESS, MOVE_NOT_FOUND.
if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('QUEUE_NOT_FOUND') end
local now = nowms()
local op = ARGV[1]
if op == 'start' then
  local all = redis.call('HGETALL', KEYS[2])
  local finished = {}
  for i = 1, #all, 2 do
    local t = cjson.decode(all[i + 1])
    if t.state == 'RUNNING' then return redis.error_reply('MOVE_IN_PROGRESS ' .. t.id) end
    finished[#finished + 1] = t
  end
  -- Keep the 20 most recent finished tasks.
  local function newer(a, b)
    if a.created ~= b.created then return a.created > b.created end
    return (a.seq or 0) > (b.seq or 0)
  end
  table.sort(finished, newer)
  for i = 20, #finished do redis.call('HDEL', KEYS[2], finished[i].id) end
  local t = cjson.decode(ARGV[2])
  t.state, t.moved, t.failed, t.created, t.updated, t.cursor = 'RUNNING', 0, 0, now, now, ''
  -- Orders tasks started in the same ms (newest first).
  t.seq = redis.call('HINCRBY', KEYS[1], 'mvseq', 1)
  if t.total == 0 then t.state = 'COMPLETED' end
  local raw = cjson.encode(t)
  redis.call('HSET', KEYS[2], t.id, raw)
  return raw
end
local raw = redis.call('HGET', KEYS[2], ARGV[2])
if not raw then return redis.error_reply('MOVE_NOT_FOUND') end
local t = cjson.decode(raw)
if op == 'lease' then
  if t.state ~= 'RUNNING' then return 0 end
  if t.owner and t.owner ~= ARGV[3] and (tonumber(t['until']) or 0) > now then return 0 end
  t.owner, t['until'] = ARGV[3], now + tonumber(ARGV[4])
elseif op == 'cancel' then
  if t.state == 'RUNNING' then t.state, t.updated = 'CANCELLED', now end
elseif op == 'finish' then
  if t.state ~= 'RUNNING' or t.owner ~= ARGV[3] then return 0 end
  t.state, t.updated = ARGV[4], now
  if ARGV[5] ~= '' then t.failure = ARGV[5] end
end
raw = cjson.encode(t)
redis.call('HSET', KEYS[2], t.id, raw)
if op == 'finish' then return 1 end
return raw
