-- Second round of fencing-token issue (see src/algorithm/fencing.rs): raise the counter
-- fence_{LockKey} to at least the token just issued, so that any later INCR on a majority
-- returns a larger value. KEYS[1] = fence_{LockKey}, ARGV[1] = token. Returns the stored value.
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local want = tonumber(ARGV[1])
if v < want then
    redis.call('SET', KEYS[1], want)
    v = want
end
return v
