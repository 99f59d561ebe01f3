-- movestep: the dead-letter queue side of a move task's step (S10).
-- Records the outcome for one dead letter in the task and, when it was
-- moved, removes it from the DLQ: from every DLQ tag that holds it or has
-- yet to read it (counted as mvd, so counters stay exact).
-- Also advances the task's cursor past entries it skipped.
-- A DLQ that is a topic queue (S13, lib.lua): a dead letter held behind
-- its topic leaves the held list (counted mvd, as unread); one that
-- blocks its topic unblocks it. A DLQ that is a priority queue: a dead
-- letter held in its priority's list leaves it (counted mvd, as unread).
-- KEYS: 1 meta, 2 stream, 3 tasks, 4 tags, then per tag: n, v, p, x, b,
--       then zh (out-of-order deletions, see sizehole)
-- ARGV: 1 task id, 2 lease owner, 3 cursor (last DLQ id examined),
--       4 outcome ('moved', 'failed' or 'skip'), 5 failure note,
--       6.. every DLQ tag name
-- Returns: 1, or 0 when the task is no longer running or leased to
-- another owner (nothing changed).
-- Errors: TAGS_CHANGED.
if not sametags(KEYS[4], 6) then return redis.error_reply('TAGS_CHANGED') end
local raw = redis.call('HGET', KEYS[3], ARGV[1])
if not raw then return 0 end
local task = cjson.decode(raw)
if task.state ~= 'RUNNING' or task.owner ~= ARGV[2] then return 0 end
local now = nowms()
local id, outcome = ARGV[3], ARGV[4]
if outcome == 'moved' then
  local fields = entry(KEYS[2], id)
  if fields then
    local f = fieldmap(fields)
    local cur = cursors(KEYS[2])
    local tq = redis.call('HGET', KEYS[1], 'topic') == '1'
    local pq = redis.call('HGET', KEYS[1], 'prq') == '1'
    for i = 6, #ARGV do
      local tag, b = ARGV[i], 4 + (i - 6) * 5
      local n, v, p, x, bk = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4], KEYS[b + 5]
      if idlt(cur[tag] or '0-0', id) then
        local flt = redis.call('HGET', n, 'flt')
        if fortag(tag, flt and cjson.decode(flt), f) then redis.call('HINCRBY', n, 'mvd', 1) end
      else
        redis.call('ZREM', p, id)
        local mem = mayhold(n, id) and vfind(v, id)
        local k = {n = n, v = v, x = x}
        if tq then topickeys(k) end
        if pq then priokeys(k) end
        if mem then
          vremove(k, mem, id)
          if (k.released or 0) > 0 then wake(wakekey(KEYS[1]), tag, now) end
        elseif tq and f['tp'] and topicunhold(k, f['tp'], id) then
          redis.call('HINCRBY', n, 'mvd', 1)
        elseif pq and priounhold(k, prioof(f), id) then
          redis.call('HINCRBY', n, 'mvd', 1)
        elseif redis.call('XACK', KEYS[2], tag, id) == 1 then
          -- In the tag's PEL: a delivery (pc), or a read not yet recorded
          -- (not yet counted as read: counted as moved out unread).
          pelbump(KEYS[1])
          if covers(branges(bk), id) then
            redis.call('HINCRBY', n, 'pc', -1)
          else
            redis.call('HINCRBY', n, 'mvd', 1)
          end
        end
      end
    end
    redis.call('XDEL', KEYS[2], id)
    if f['z'] then -- else older than the size bookkeeping: no size in z
      sizehole({meta = KEYS[1], zh = KEYS[#KEYS]}, id, tonumber(f['z']))
    end
  end
  task.moved = task.moved + 1
elseif outcome == 'failed' then
  task.failed = task.failed + 1
  task.failure = ARGV[5]
end
task.cursor = id
task.updated = now
redis.call('HSET', KEYS[3], ARGV[1], cjson.encode(task))
return 1
