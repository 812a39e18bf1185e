-- Leave the fair queue (see src/algorithm/fair.rs).
-- KEYS[1] = fair_{LockKey}, KEYS[2] = fairexp_{LockKey}, ARGV[1] = member ("w:<ticket>" or "r:<ticket>").
-- Returns 1 if the ticket was queued, 0 otherwise.
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
