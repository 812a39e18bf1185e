-- Fair read lock (see src/algorithm/fair.rs for the design): seed 000's reader script
-- behind the FIFO queue fair_{LockKey}.
-- KEYS[1] = r_{LockKey}, KEYS[2] = w_{LockKey}, KEYS[3] = fair_{LockKey}, KEYS[4] = fairexp_{LockKey}.
-- ARGV[1] = token, ARGV[2] = now (ms), ARGV[3] = exp_at (ms), ARGV[4] = member "r:<ticket>",
-- ARGV[5] = enqueue (1 to join even an empty queue), ARGV[6] = queued_at (ms),
-- ARGV[7] = ticket expiry (ms).
-- Returns 1 acquired, 2 write-locked, 4 queued behind a waiting writer.
local r_key, w_key, q_key, qexp_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local tok, now, exp_at, me = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

for _, m in ipairs(redis.call('ZRANGEBYSCORE', qexp_key, 0, now)) do
    redis.call('ZREM', q_key, m)
    redis.call('ZREM', qexp_key, m)
end
if redis.call('ZCARD', q_key) > 0 or ARGV[5] == '1' then
    redis.call('ZADD', q_key, 'NX', ARGV[6], me)
    redis.call('ZADD', qexp_key, ARGV[7], me)
    -- A reader goes once every waiter ahead of it is a reader too: readers at the head
    -- of the queue share the lock.
    local rank = redis.call('ZRANK', q_key, me)
    if rank > 0 then
        for _, m in ipairs(redis.call('ZRANGE', q_key, 0, rank - 1)) do
            if string.sub(m, 1, 2) == 'w:' then
                return 4
            end
        end
    end
end

if redis.call('GET', w_key) ~= false then
    return 2
end
redis.call('ZADD', r_key, exp_at, tok)
redis.call('ZREM', q_key, me)
redis.call('ZREM', qexp_key, me)
return 1
