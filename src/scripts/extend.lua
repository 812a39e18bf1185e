-- Lock extension (seed 002): reset the ttl of a string lock (an exclusive lock or the
-- writer key w_{LockKey}) only if it still holds the caller's token.
-- KEYS[1] = lock key, ARGV[1] = token, ARGV[2] = ttl (ms). Returns 1 if extended, 0 otherwise.
if redis.call("get", KEYS[1]) == ARGV[1] then
    redis.call("pexpire", KEYS[1], ARGV[2])
    return 1
else
    return 0
end
