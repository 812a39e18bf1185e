"""lockstorm worker: python-redis-lock's `redis_lock.Lock` (single instance, SET NX + BLPOP).

What the library promises: a lock on one Redis server. `SET lock:<name> id NX EX expire`;
a blocking acquire waits on `BLPOP lock-signal:<name>`, which a release pushes to, so a
waiter wakes when the holder releases. Release and extend are Lua compare-and-act on the id.
Expiry is in whole seconds. No quorum, no validity of its own (the key's TTL on the server
is the only clock), no fencing token. Each Lock object has one id for its life, so the
adapter makes a new Lock per acquire, as `with redis_lock.Lock(conn, name, expire=...)` does.

Options used, from the hello:
- nodes: the first address only; the client keeps redis-py's defaults (no socket timeout:
  the blocking acquire sits in BLPOP for up to its timeout, and a socket timeout shorter
  than that would break it), so request_timeout_ms is ignored.
- ttl_ms -> `expire` in seconds; a ttl that is not a whole number of seconds is refused at
  hello (rounding it would make the key outlive or undercut what lockstorm believes).
- retry_count, retry_delay_ms.max -> `acquire(blocking=True, timeout=retry_count x max
  delay, rounded up to whole seconds)`; with no retries `blocking=False`, one try.
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
        if p.ttl_ms % 1000 or p.ttl_ms <= 0:
            raise ValueError(f"python-redis-lock expires in whole seconds; ttl_ms={p.ttl_ms} is not")
        self.expire_s = p.ttl_ms // 1000
        window_s = p.retry_window_s()
        self.timeout_s = math.ceil(window_s) if window_s > 0 else None
        if self.timeout_s is not None and self.timeout_s > self.expire_s:
            raise ValueError(
                f"python-redis-lock refuses a blocking timeout ({self.timeout_s}s = retries x delay)"
                f" above the expiry ({self.expire_s}s)"
            )
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
