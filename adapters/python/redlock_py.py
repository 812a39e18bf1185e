"""lockstorm worker: redlock-py (package `redlock-py`, module `redlock`, by SPSCommerce), the
Python implementation the canonical Redlock page links.

What the library promises: Redlock over N masters, sequentially: `SET resource value NX
PX ttl` on each master in turn, acquired if at least N/2+1 said yes and the validity
`ttl - elapsed - (1% of ttl + 2 ms)` is positive, elapsed measured on `time.time()` (the
wall clock, so a wall-clock jump moves it). On failure it unlocks everywhere, sleeps a fixed
`retry_delay` and tries again, `retry_count` attempts in all. The returned lock carries that
validity. A quorum reached while some master raised is an exception, not a lock. No
extension, no fencing token.

Options used, from the hello:
- nodes: one connection dict per address, with redis-py's defaults: no socket timeout (a
  request to a node behind a cut link waits until the link heals) and its default
  retries; `request_timeout_ms` is not passed.
- ttl_ms -> `lock(resource, ttl_ms)`.
- retry_count (retries after the first attempt) -> `retry_count + 1` attempts;
  retry_delay_ms.max -> the fixed `retry_delay` (a zero delay becomes the library's
  default, 200 ms: it reads `retry_delay or default`).
Capabilities: validity (the lock's `validity`); no extend, no fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class RedlockPy:
    def hello(self, msg):
        from redlock import Redlock

        p = Params(msg)
        servers = [{"host": host, "port": port} for host, port in p.nodes]
        self.manager = Redlock(servers, retry_count=p.retry_count + 1, retry_delay=p.retry_delay_max_ms / 1000)
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
