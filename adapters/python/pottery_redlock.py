"""lockstorm worker: pottery's `Redlock` (pottery.redlock.Redlock).

What the library promises: Redlock over N masters. `SET key uuid NX PX auto_release_time`
on every master in parallel (a thread pool), acquired once more than N/2 said yes while
`auto_release_time - drift - elapsed > 0` (drift = 1% + 2 ms, elapsed on
`timeit.default_timer`, the monotonic clock); otherwise it releases everywhere. Redis
errors count as no (the default `raise_on_redis_errors=False`). Extension re-sets the TTL
on a majority, at most `num_extensions` times per hold. It reports no validity (acquire
returns a bool) and issues no fencing token. Keys are `redlock:<lock>`.

Options used, from the hello (adapters.toml's `options` line shows the choices, and the
matrix prints it beside every cell of this library):
- nodes: one `redis.Redis` per address as `masters`, with redis-py's defaults: no socket
  timeout (a request to a node behind a cut link waits until the link heals) and its
  default retries; `request_timeout_ms` is not passed.
- ttl_ms -> `auto_release_time`; max_extensions (if given) -> `num_extensions`.
- Blocking (a choice, displayed): the library's default acquire blocks without bound
  (`timeout=-1`). lockstorm's acquire is one library acquire with its own retries for the
  scenario's retry window: `acquire(blocking=True, timeout=retry_count x
  retry_delay_ms.max)`, pottery sleeping its own random delay of up to 200 ms between
  tries; with no window `blocking=False`, one try.
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
        self.options = {"auto_release_time": p.ttl_ms / 1000}
        if p.max_extensions is not None:
            self.options["num_extensions"] = int(p.max_extensions)
        self.locks = {}  # lock name -> its Redlock, made on first use and kept
        self.window_s = p.retry_window_s()
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "pottery", "version": version("pottery"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.Redlock(key=name, masters=self.masters, **self.options)
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        if self.window_s > 0:
            acquired = held.acquire(blocking=True, timeout=self.window_s)
        else:
            acquired = held.acquire(blocking=False)
        # pottery keeps the lock's value in a private slot; read only to name the hold.
        return ok(token=getattr(held, "_uuid", None)) if acquired else fail("quorum not achieved")

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
