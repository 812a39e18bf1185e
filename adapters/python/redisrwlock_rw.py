"""lockstorm worker: redisrwlock's `RwlockClient` (a reader-writer lock on one instance, no
expiry).

What the library promises: a "distributed reader-writer lock (rwlock) for python using
redis". A Lua script grants a lock if no other owner holds a conflicting grant (readers
share, a writer is alone): the resource's set `rsrc:<name>` gets `<mode>:<owner>`, the
owner's set `owner:<owner>` gets `<mode>:<name>`, and `lock:<name>:<mode>:<owner>` keeps a
reference count (the same owner may lock again); unlock is a Lua script that counts down
and removes the grant at zero. The owner is `node/pid`. No key has a TTL: a lock lives
until it is unlocked, or until `gc()` (run by the user, or its monitor `python -m
redisrwlock`) removes the grants of owners whose named connection is gone. Waiting
acquires detect deadlocks on a wait-for graph. No quorum, no validity, no extension, no
fencing token.

Passed from the hello: the first node's address (on a Sentinel deployment redis-py's
`Sentinel(sentinels).master_for(name, redis_class=StrictRedis)`), as the client
(`RwlockClient(redis=redis.StrictRedis(host=..., port=...))`). No ttl: the library takes
none (`"expires": false`; `ttl_ms` is not passed). Mode: `read` is `Rwlock.READ`, `write`
and `exclusive` are `Rwlock.WRITE`. Everything else is the library's default, as read from
redisrwlock 0.1.2 and redis-py 8.1.0 (the matrix prints adapters.toml's `options` line
beside every cell; adapters/python/defaults_check.py checks both against the installed
libraries):
- The client (redis/client.py, Redis.__init__; the values in redis/_defaults.py): a 5 s
  socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential backoff
  (base 10 ms, cap 1 s) on connection and timeout errors (redis/retry.py, Retry.__init__).
- The owner (redisrwlock/redisrwlock.py, RwlockClient.__init__): node 'localhost', pid
  this process's pid: each worker is an owner of its own.
- The acquire (RwlockClient.lock): timeout=0, one try ("no-wait, no-retry"), status
  FAIL when a conflicting grant is there, answered `fail`. No bound of ours.
One acquire's Rwlock is kept per lock name for the hold and unlocked on release; its key
name, `lock:<name>:<mode>:<owner>`, is the `token` on ok and fail (one per owner, mode and
lock: the same for every acquisition of this worker).
Capabilities: no extend, no validity (`"expires": false`), no fencing; modes exclusive,
read and write.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class RedisRwlock:
    def hello(self, msg):
        import redis
        import redisrwlock

        self.Rwlock = redisrwlock.Rwlock
        self.modes = {"exclusive": redisrwlock.Rwlock.WRITE, "write": redisrwlock.Rwlock.WRITE, "read": redisrwlock.Rwlock.READ}
        p = Params(msg)
        self.client = redisrwlock.RwlockClient(redis=p.redis(redis.StrictRedis))
        self.holds = {}  # lock name -> the Rwlock of the current hold
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive", "read", "write"]}
        return {"library": "redisrwlock", "version": version("redisrwlock"), "capabilities": capabilities}

    def acquire(self, lock, mode):
        held = self.client.lock(lock, self.modes[mode])
        if held.status != self.Rwlock.OK:
            return fail(f"status {held.status}", token=str(held))
        self.holds[lock] = held
        return ok(expires=False, token=str(held))

    def release(self, lock):
        held = self.holds.pop(lock, None)
        if held is None:
            return fail("no hold of this lock to release")
        if self.client.unlock(held):
            return ok()
        return fail("not unlocked: the grant is gone")


if __name__ == "__main__":
    run(RedisRwlock())
