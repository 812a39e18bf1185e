"""lockstorm worker: pottery's `Redlock` (pottery.redlock.Redlock).

What the library promises: Redlock over N masters. `SET key uuid NX PX auto_release_time`
on every master in parallel (a thread pool), acquired once more than N/2 said yes while
`auto_release_time - drift - elapsed > 0` (drift = 1% + 2 ms, elapsed on
`timeit.default_timer`, the monotonic clock); otherwise it releases everywhere. Redis
errors count as no. Extension re-sets the TTL on a majority, a bounded number of times per
hold. It reports no validity (acquire returns a bool) and issues no fencing token. Keys
are `redlock:<lock>`.

Passed from the hello: one `redis.Redis(host, port)` per address as `masters`, and
`ttl_ms` as `auto_release_time`. Everything else is the library's default, as read from
pottery 3.0.1 and redis-py 8.1.0 (the matrix prints adapters.toml's `options` line beside
every cell; adapters/python/defaults_check.py checks both against the installed libraries):
- Each master's client (redis/client.py, Redis.__init__; the values in
  redis/_defaults.py): a 5 s socket timeout, a 5 s connect timeout, and 10 retries with
  jittered exponential backoff (base 10 ms, cap 1 s) on connection and timeout errors
  (redis/retry.py, Retry.__init__).
- The lock (pottery/redlock.py, Redlock.__init__ and its class constants): Redis errors
  count as no (`raise_on_redis_errors=False`), 3 extensions per hold (`num_extensions =
  _NUM_EXTENSIONS`).
- The acquire (pottery/redlock.py, Redlock.acquire): `blocking=True, timeout=-1`, which
  tries again after a random sleep below 0.2 s (`random.uniform(0, _RETRY_DELAY)`)
  without bound.
The bound (the one choice): that default acquire never gives up, which no workload can
measure. `acquire(blocking=True, timeout=...)` with the hello's retry window
(the scenario's `retry_count x retry_delay_ms.max`; protocol.Params), the patience
lockstorm's own algorithm has in the same scenario, pottery sleeping its own random delays
between tries; a window of 0 is `blocking=False`, one try (pottery's `timeout=0` would
never try).
A fail carries the failed attempt's `token`: pottery draws a new uuid per try
(Redlock._acquire_masters) and keeps the last in its `_uuid` slot, which is also how an
`ok` names the hold.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class PotteryRedlock:
    def hello(self, msg):
        import redis
        from pottery import ExtendUnlockedLock, Redlock, ReleaseUnlockedLock, TooManyExtensions

        self.refusals = (ExtendUnlockedLock, ReleaseUnlockedLock, TooManyExtensions)
        p = Params(msg)
        self.masters = [redis.Redis(host=host, port=port) for host, port in p.nodes]
        self.Redlock = Redlock
        self.ttl_s = p.ttl_ms / 1000
        self.window_s = p.retry_window_s
        self.locks = {}  # lock name -> its Redlock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "pottery", "version": version("pottery"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.Redlock(key=name, masters=self.masters, auto_release_time=self.ttl_s)
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        if self.window_s > 0:
            acquired = held.acquire(blocking=True, timeout=self.window_s)
        else:
            acquired = held.acquire(blocking=False)
        # pottery keeps the lock's value in a private slot; read only to name the attempt.
        token = getattr(held, "_uuid", None) or None
        return ok(token=token) if acquired else fail("quorum not achieved", token=token)

    def release(self, lock):
        try:
            self.lock(lock).release()
        except self.refusals as exc:
            return fail(type(exc).__name__)
        return ok()

    def extend(self, lock):
        try:
            self.lock(lock).extend()
        except self.refusals as exc:
            return fail(type(exc).__name__)
        return ok()


if __name__ == "__main__":
    run(PotteryRedlock())
