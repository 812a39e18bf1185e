-- Read lock of the read-write Redlock, exactly as seed 000 gives it.
-- KEYS[1] = r_{LockKey}, KEYS[2] = w_{LockKey}.
-- ARGV[1] = token, ARGV[2] = exp_at = now + ttl (ms since the Unix epoch, client's clock).
-- Returns 1 acquired, 2 write-locked. Release is ZREM r_{LockKey} token.
local r_key = KEYS[1]
local w_key = KEYS[2]
local tok = ARGV[1]
local exp_at = tonumber(ARGV[2]) -- now + ttl, expressed as milliseconds since Unix epoch
local get_result = redis.call('GET', w_key)
if get_result ~= false then
    return 2 -- key is write-locked
end
redis.call('ZADD', r_key, exp_at, tok)
return 1 -- read lock acquired
