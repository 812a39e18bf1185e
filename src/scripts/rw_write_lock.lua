-- Write lock of the read-write Redlock, exactly as seed 000 gives it.
-- KEYS[1] = r_{LockKey} (readers, sorted set scored by expiry), KEYS[2] = w_{LockKey}.
-- ARGV[1] = token, ARGV[2] = now (ms since the Unix epoch, client's clock), ARGV[3] = ttl (ms).
-- Returns 1 acquired, 2 read-locked, 3 write-locked.
local r_key = KEYS[1]
local w_key = KEYS[2]
local tok = ARGV[1]
local now = tonumber(ARGV[2]) -- milliseconds since Unix epoch
local ttl_ms = tonumber(ARGV[3]) -- in milliseconds

redis.call('ZREMRANGEBYSCORE', r_key, 0, now)
if redis.call('ZCARD', r_key) > 0 then
    return 2 -- key is read-locked
end
if redis.call('GET', w_key) ~= false then
    return 3 -- key is write-locked
end
redis.call('SET', w_key, tok, 'PX', ttl_ms)
return 1 -- write lock acquired
