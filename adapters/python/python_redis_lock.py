"""lockstorm worker: python-redis-lock's `redis_lock.Lock` (single instance, SET NX + BLPOP).

What the library promises: a lock on one Redis server. `SET lock:<name> id NX EX expire`;
a blocking acquire waits on `BLPOP lock-signal:<name>`, which a release pushes to, so a
waiter wakes when the holder releases. Release and extend are Lua compare-and-act on the id.
Expiry is in whole seconds. No quorum, no validity of its own (the key's TTL on the server
is the only clock), no fencing token. Each Lock object has one id for its life, so the
adapter makes a new Lock per acquire, as `with redis_lock.Lock(conn, name, expire=...)` does.

Options used, from the hello (adapters.toml's `options` line shows the choices, and the
matrix prints it beside every cell of this library):
- nodes: the first address only; the client keeps redis-py's defaults (no socket timeout),
  so request_timeout_ms is not passed.
- ttl_ms -> `expire = ttl_ms / 1000`, as the library takes it: it truncates `expire` to
  whole seconds (`int(expire)`), so a 1.5 s ttl makes a key that lives 1 s while lockstorm
  believes the hold lasts 1.5 s, and a ttl under 1 s makes `EX 0`, which Redis refuses.
  Both are the library's behaviour, judged as such.
- Blocking (a choice, displayed): the library's default acquire (`blocking=True,
  timeout=None`) waits without bound. lockstorm's acquire is one library acquire with its
  own waiting for the scenario's retry window: `acquire(blocking=True, timeout=retry_count
  x retry_delay_ms.max rounded up to whole seconds)` (the library truncates a timeout to
  whole seconds, and a timeout truncated to 0 would wait without bound); with no window
  `blocking=False`, one try. While blocked the library parks the waiter in `BLPOP` on the
  release signal: a release wakes one waiter, the others wait out their timeout and try
  `SET NX` once more. A timeout above the truncated expiry is the library's
  `TimeoutTooLarge`, answered as an error.
- extend -> `extend(expire)`.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

import math
from importlib.metadata import version

from protocol import Params, fail, ok, run


class PythonRedisLock:
    def hello(self, msg):
        import redis
        import redis_lock

        self.redis_lock = redis_lock
        p = Params(msg)
        self.expire_s = p.ttl_ms / 1000  # the library truncates it to whole seconds
        window_s = p.retry_window_s()
        self.timeout_s = math.ceil(window_s) if window_s > 0 else None
        host, port = p.nodes[0]
        self.client = redis.StrictRedis(host=host, port=port)
        self.holds = {}  # lock name -> the Lock of the current hold
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "python-redis-lock", "version": version("python-redis-lock"), "capabilities": capabilities}

    def acquire(self, lock, mode):
        held = self.redis_lock.Lock(self.client, lock, expire=self.expire_s)
        if self.timeout_s is None:
            acquired = held.acquire(blocking=False)
        else:
            acquired = held.acquire(blocking=True, timeout=self.timeout_s)
        if not acquired:
            return fail("not acquired")
        self.holds[lock] = held
        return ok(token=held.id)

    def release(self, lock):
        held = self.holds.pop(lock, None)
        if held is None:
            return fail("no hold of this lock to release")
        try:
            held.release()
        except self.redis_lock.NotAcquired as exc:
            return fail(str(exc))
        return ok()

    def extend(self, lock):
        held = self.holds.get(lock)
        if held is None:
            return fail("no hold of this lock to extend")
        try:
            held.extend(self.expire_s)
        except (self.redis_lock.NotAcquired, self.redis_lock.NotExpirable) as exc:
            return fail(str(exc))
        return ok()


if __name__ == "__main__":
    run(PythonRedisLock())
