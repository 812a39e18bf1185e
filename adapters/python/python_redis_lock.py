"""lockstorm worker: python-redis-lock's `redis_lock.Lock` (single instance, SET NX + BLPOP).

What the library promises: a lock on one Redis server. `SET lock:<name> id NX EX expire`;
a blocking acquire waits on `BLPOP lock-signal:<name>`, which a release pushes to, so a
waiter wakes when the holder releases. Release and extend are Lua compare-and-act on the id.
Expiry is in whole seconds. No quorum, no validity of its own (the key's TTL on the server
is the only clock), no fencing token. Each Lock object has one id for its life, so the
adapter makes a new Lock per acquire, as `with redis_lock.Lock(conn, name, expire=...)` does.

Passed from the hello: the first node's address (one server; on a Sentinel deployment
redis-py's `Sentinel(sentinels).master_for(name, redis_class=StrictRedis)`) and `ttl_ms` as `expire =
ttl_ms / 1000`, which the library truncates to whole seconds (`int(expire)`): a 1.5 s ttl
makes a key that lives 1 s while lockstorm believes the hold lasts 1.5 s, and a ttl under
1 s makes `EX 0`, which Redis refuses. Both are the library's behaviour, judged as such;
extend is `extend(expire)`. Everything else is the library's default, as read from
python-redis-lock 4.0.1 and redis-py 8.1.0 (the matrix prints adapters.toml's `options`
line beside every cell; adapters/python/defaults_check.py checks both against the
installed libraries):
- The client, `redis.StrictRedis(host, port)` (redis/client.py, Redis.__init__; the
  values in redis/_defaults.py): a 5 s socket timeout, a 5 s connect timeout, and 10
  retries with jittered exponential backoff (base 10 ms, cap 1 s) on connection and
  timeout errors (redis/retry.py, Retry.__init__). The socket timeout also cuts a BLPOP
  that waits longer than 5 s.
- The lock (redis_lock/__init__.py, Lock.__init__): no auto-renewal, signal_expire
  1000 ms; the acquire (Lock.acquire): `blocking=True, timeout=None`, parked in BLPOP for
  up to the expire and then trying again, without bound.
The bound (the one choice): that default acquire never gives up, which no workload can
measure. `acquire(blocking=True, timeout=...)` with the hello's retry window
(the scenario's `retry_count x retry_delay_ms.max`; protocol.Params), the patience
lockstorm's own algorithm has in the same scenario, rounded up to whole seconds (the
library truncates a timeout, and a timeout of 0 waits without bound); a window of 0 is
`blocking=False`, one try. While blocked the library parks the waiter in `BLPOP` on the
release signal: a release wakes one waiter, the others wait out their timeout and try
`SET NX` once more. A timeout above the truncated expiry is the library's
`TimeoutTooLarge`, answered as an error.
A fail or an error carries the attempt's `token`: the Lock's `id`, drawn when the Lock is
made, before the acquire.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

import logging
import math
from importlib.metadata import version

from protocol import Params, describe, error, fail, ok, run


class PythonRedisLock:
    def hello(self, msg):
        import redis
        import redis_lock

        self.redis_lock = redis_lock
        p = Params(msg)
        self.expire_s = p.ttl_ms / 1000  # the library truncates it to whole seconds
        self.timeout_s = math.ceil(p.retry_window_s) if p.retry_window_s > 0 else None
        self.client = p.redis(redis.StrictRedis)
        self.holds = {}  # lock name -> the Lock of the current hold
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "python-redis-lock", "version": version("python-redis-lock"), "capabilities": capabilities}

    def lock(self, name):
        """A new Lock, as each `with redis_lock.Lock(...)` makes one."""
        return self.redis_lock.Lock(self.client, name, expire=self.expire_s)

    def acquire(self, lock, mode):
        held = self.lock(lock)
        try:
            if self.timeout_s is None:
                acquired = held.acquire(blocking=False)
            else:
                acquired = held.acquire(blocking=True, timeout=self.timeout_s)
        except Exception as exc:  # unknown outcome: the key may hold this Lock's id
            logging.exception("acquire %s", lock)
            return error(describe(exc), token=held.id)
        if not acquired:
            return fail("not acquired", token=held.id)
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
