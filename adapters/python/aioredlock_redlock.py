"""lockstorm worker: aioredlock's `Aioredlock` lock manager (asyncio, on aioredis 1.3).

What the library promises: Redlock over N masters, in parallel: a Lua script sets the key
(if absent or already ours) with `PX lock_timeout` on every master; acquired if at least
N/2+1 succeeded and `lock_timeout - elapsed - (1% + 2 ms) > 0`, elapsed on
`time.monotonic()`. It tries `retry_count` times with a random delay in
[retry_delay_min, retry_delay_max] between tries; a failed acquire raises `LockError` and
schedules an unlock everywhere. Extension runs the same acquire again on the held key. It
reports no validity and issues no fencing token. aioredis has no command timeout, so a cut
link blocks a request until the link heals.

Passed from the hello: one `{"host", "port"}` connection dict per address and `ttl_ms`
as `lock(resource, lock_timeout=ttl)` (with an explicit lock_timeout the library starts no
auto-extension watchdog, and extend reuses it). Everything else is the library's default,
as read from aioredlock 0.7.3 and aioredis 1.3.1 (the matrix prints adapters.toml's
`options` line beside every cell; adapters/python/defaults_check.py checks both against the
installed libraries):
- The lock manager (aioredlock/algorithm.py, the `Aioredlock` attrs fields; the tries in
  Aioredlock._set_lock): 3 tries, a random delay of 0.1 to 0.3 s between them.
- Each node's pool (aioredlock/redis.py, Instance.connect: `minsize` 1, `maxsize` 100;
  aioredis/commands/__init__.py, create_redis_pool): no connect timeout (`timeout=None`),
  and aioredis has no command timeout at all, so a request to a node behind a cut link
  waits until the link heals.
Its acquire is bounded by its own tries; the adapter adds none.
No `token` on a fail: Aioredlock.lock draws the identifier inside the call and the
LockError does not carry it.
The event loop runs in its own thread for the worker's whole life, as in an asyncio
service, so the library's background tasks (the unlock after a failed acquire) run when the
library schedules them, not at the next request.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

import asyncio
import threading
from importlib.metadata import version

from protocol import Params, fail, ok, run


class AioredlockRedlock:
    def hello(self, msg):
        from aioredlock import Aioredlock, LockError

        self.LockError = LockError
        p = Params(msg)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.ttl_s = p.ttl_ms / 1000
        self.manager = Aioredlock(redis_connections=[{"host": host, "port": port} for host, port in p.nodes])
        self.holds = {}  # lock name -> the library's Lock of the current hold
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "aioredlock", "version": version("aioredlock"), "capabilities": capabilities}

    def call(self, coroutine):
        """Runs one library call on the loop thread and waits for it."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def acquire(self, lock, mode):
        try:
            held = self.call(self.manager.lock(lock, lock_timeout=self.ttl_s))
        except self.LockError as exc:
            return fail(f"{type(exc).__name__}: {exc}")
        self.holds[lock] = held
        return ok(token=held.id)

    def release(self, lock):
        held = self.holds.pop(lock, None)
        if held is None:
            return fail("no hold of this lock to release")
        try:
            self.call(self.manager.unlock(held))
        except self.LockError as exc:
            return fail(f"{type(exc).__name__}: {exc}")
        return ok()

    def extend(self, lock):
        held = self.holds.get(lock)
        if held is None:
            return fail("no hold of this lock to extend")
        try:
            self.call(self.manager.extend(held))
        except self.LockError as exc:  # the library has unlocked it: the hold is over
            self.holds.pop(lock, None)
            return fail(f"{type(exc).__name__}: {exc}")
        return ok()


if __name__ == "__main__":
    run(AioredlockRedlock())
