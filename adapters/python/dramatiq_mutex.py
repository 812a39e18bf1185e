"""lockstorm worker: dramatiq's distributed mutex, a `ConcurrentRateLimiter` of limit 1 over
its `RedisBackend` (single instance).

What the library promises: "You can use a concurrent rate limiter of size 1 to get a
distributed mutex" (dramatiq/rate_limits/concurrent.py, ConcurrentRateLimiter). The slot
is a counter: acquire is `SET key 1 PX ttl NX`, else a WATCH/MULTI increment of the
counter if that keeps it at most the limit; release is a WATCH/MULTI decrement that keeps
it at least 0 (dramatiq/rate_limits/backends/redis.py, RedisBackend.add, incr, decr),
both re-setting the TTL. There is no owner: a release decrements whoever's count is there.
No quorum, no validity of its own (the key's TTL is the only clock), no extension, no
fencing token, no token at all.

Passed from the hello: the first node's address (on a Sentinel deployment
`RedisBackend(client=Sentinel(sentinels).master_for(name))`), as the backend's client
(`RedisBackend(host=..., port=...)`, which builds `redis.Redis(**parameters)`), and
`ttl_ms` as the limiter's `ttl` (milliseconds). Everything else is the library's default,
as read from dramatiq 2.2.1 and redis-py 8.1.0 (the matrix prints adapters.toml's
`options` line beside every cell; adapters/python/defaults_check.py checks both against
the installed libraries):
- The client (redis/client.py, Redis.__init__; the values in redis/_defaults.py): a 5 s
  socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential backoff
  (base 10 ms, cap 1 s) on connection and timeout errors (redis/retry.py, Retry.__init__).
- The limiter (dramatiq/rate_limits/concurrent.py, ConcurrentRateLimiter.__init__):
  limit 1 (its default, the mutex).
- The acquire (dramatiq/rate_limits/rate_limiter.py, RateLimiter.acquire): a context
  manager that makes one try, `raise_on_failure=True` (RateLimitExceeded when the slot is
  taken, answered `fail`); its exit releases if it acquired. One try: no bound of ours.
The adapter enters the context manager on acquire and exits it on release, as a `with`
block around the hold would; it keeps the entered manager per lock name for the hold. The
library reports nothing from its exit (the decrement's result is dropped), so a release
the adapter has a hold for answers ok; a release without one answers fail.
Capabilities: no extend, no validity (lockstorm counts the ttl), no fencing; exclusive
only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class DramatiqMutex:
    def hello(self, msg):
        from dramatiq.rate_limits import ConcurrentRateLimiter, RateLimitExceeded
        from dramatiq.rate_limits.backends import RedisBackend

        self.ConcurrentRateLimiter = ConcurrentRateLimiter
        self.RateLimitExceeded = RateLimitExceeded
        p = Params(msg)
        if p.sentinels:
            self.backend = RedisBackend(client=p.redis())
        else:
            host, port = p.nodes[0]
            self.backend = RedisBackend(host=host, port=port)
        self.ttl_ms = p.ttl_ms
        self.limiters = {}  # lock name -> its limiter, made on first use and kept
        self.holds = {}  # lock name -> the entered acquire() context of the current hold
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "dramatiq", "version": version("dramatiq"), "capabilities": capabilities}

    def limiter(self, name):
        if name not in self.limiters:
            self.limiters[name] = self.ConcurrentRateLimiter(self.backend, name, ttl=self.ttl_ms)
        return self.limiters[name]

    def acquire(self, lock, mode):
        context = self.limiter(lock).acquire()
        try:
            context.__enter__()
        except self.RateLimitExceeded as exc:
            return fail(str(exc))
        self.holds[lock] = context
        return ok()

    def release(self, lock):
        context = self.holds.pop(lock, None)
        if context is None:
            return fail("no hold of this lock to release")
        context.__exit__(None, None, None)
        return ok()


if __name__ == "__main__":
    run(DramatiqMutex())
