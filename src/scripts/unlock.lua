-- Compare-and-delete release (seed 002): delete the lock key only if it still holds
-- the caller's token, so a client whose lock expired cannot delete another's lock.
-- KEYS[1] = lock key, ARGV[1] = token. Returns 1 if deleted, 0 otherwise.
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
else
    return 0
end
