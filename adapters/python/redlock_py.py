"""lockstorm worker: redlock-py (package `redlock-py`, module `redlock`, by SPSCommerce), the
Python implementation the canonical Redlock page links.

What the library promises: Redlock over N masters, sequentially: `SET resource value NX
PX ttl` on each master in turn, acquired if at least N/2+1 said yes and the validity
`ttl - elapsed - (1% of ttl + 2 ms)` is positive, elapsed measured on `time.time()` (the
wall clock, so a wall-clock jump moves it). On failure it unlocks everywhere, sleeps a fixed
`retry_delay` and tries again, `retry_count` tries in all. The returned lock carries that
validity. A quorum reached while some master raised is an exception, not a lock. No
extension, no fencing token.

Passed from the hello: one `{"host", "port"}` connection dict per address (the library
makes `redis.StrictRedis(**dict)` of each) and `ttl_ms` to `lock(resource, ttl_ms)`.
Everything else is the library's default, as read from redlock-py 1.0.8 and redis-py 8.1.0
(the matrix prints adapters.toml's `options` line beside every cell;
adapters/python/defaults_check.py checks both against the installed libraries):
- Each master's client (redis/client.py, Redis.__init__; the values in
  redis/_defaults.py): a 5 s socket timeout, a 5 s connect timeout, and 10 retries with
  jittered exponential backoff (base 10 ms, cap 1 s) on connection and timeout errors
  (redis/retry.py, Retry.__init__).
- The lock manager (redlock/__init__.py, Redlock.__init__: `retry_count or
  default_retry_count`, `retry_delay or default_retry_delay`): 3 tries, a 0.2 s sleep
  after each failed try, the last one included (Redlock.lock).
Its acquire is bounded by its own tries; the adapter adds none.
No `token` on a fail: Redlock.lock draws the value inside the call and returns it only in
the lock.
Capabilities: validity (the lock's `validity`); no extend, no fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class RedlockPy:
    def hello(self, msg):
        from redlock import Redlock

        p = Params(msg)
        self.manager = Redlock([{"host": host, "port": port} for host, port in p.nodes])
        self.ttl_ms = p.ttl_ms
        self.holds = {}  # lock name -> the library's Lock of the current hold
        capabilities = {"extend": False, "validity": True, "fencing": False, "modes": ["exclusive"]}
        return {"library": "redlock-py", "version": version("redlock-py"), "capabilities": capabilities}

    def acquire(self, lock, mode):
        held = self.manager.lock(lock, self.ttl_ms)
        if not held:
            return fail("not acquired")
        self.holds[lock] = held
        return ok(validity_ms=held.validity, token=held.key.decode())

    def release(self, lock):
        held = self.holds.pop(lock, None)
        if held is None:
            return fail("no hold of this lock to release")
        self.manager.unlock(held)
        return ok()


if __name__ == "__main__":
    run(RedlockPy())
