-- Extension of a read lock: move the reader's expiry (its score in r_{LockKey}) to a new
-- exp_at, only if no writer holds w_{LockKey} and the reader is still there and not yet
-- expired at the caller's now. An expired reader is not revived: a writer may already
-- have dropped it on another node.
-- KEYS[1] = r_{LockKey}, KEYS[2] = w_{LockKey}.
-- ARGV[1] = token, ARGV[2] = now (ms), ARGV[3] = exp_at (ms). Returns 1 if extended, 0 otherwise.
if redis.call('GET', KEYS[2]) ~= false then
    return 0
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score == false or tonumber(score) <= tonumber(ARGV[2]) then
    return 0
end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
