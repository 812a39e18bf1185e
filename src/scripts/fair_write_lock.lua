-- Fair write lock (see src/algorithm/fair.rs for the design): seed 000's writer script
-- behind a FIFO queue fair_{LockKey} that is used while it is non-empty or once the
-- caller has waited too long.
-- KEYS[1] = r_{LockKey}, KEYS[2] = w_{LockKey}, KEYS[3] = fair_{LockKey}, KEYS[4] = fairexp_{LockKey}.
-- ARGV[1] = token, ARGV[2] = now (ms), ARGV[3] = ttl (ms), ARGV[4] = member "w:<ticket>",
-- ARGV[5] = enqueue (1 to join even an empty queue), ARGV[6] = queued_at (ms, the queue
-- position), ARGV[7] = ticket expiry (ms).
-- Returns 1 acquired, 2 read-locked, 3 write-locked, 4 queued behind other waiters.
local r_key, w_key, q_key, qexp_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local tok, now, ttl_ms, me = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

-- Drop the tickets of waiters that stopped refreshing them (crashed or gave up).
for _, m in ipairs(redis.call('ZRANGEBYSCORE', qexp_key, 0, now)) do
    redis.call('ZREM', q_key, m)
    redis.call('ZREM', qexp_key, m)
end
if redis.call('ZCARD', q_key) > 0 or ARGV[5] == '1' then
    redis.call('ZADD', q_key, 'NX', ARGV[6], me)
    redis.call('ZADD', qexp_key, ARGV[7], me)
    -- A writer goes only from the head of the queue.
    if redis.call('ZRANGE', q_key, 0, 0)[1] ~= me then
        return 4
    end
end

redis.call('ZREMRANGEBYSCORE', r_key, 0, now)
if redis.call('ZCARD', r_key) > 0 then
    return 2
end
if redis.call('GET', w_key) ~= false then
    return 3
end
redis.call('SET', w_key, tok, 'PX', ttl_ms)
redis.call('ZREM', q_key, me)
redis.call('ZREM', qexp_key, me)
return 1
