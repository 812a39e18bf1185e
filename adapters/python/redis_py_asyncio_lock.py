"""lockstorm worker: redis-py's asyncio lock, `redis.asyncio.lock.Lock` (single instance).

What the library promises: the asyncio twin of redis-py's `redis.lock.Lock`:
`SET name token NX PX timeout`, release and extend by Lua compare-and-act on the token.
One Redis server, no quorum, no validity of its own (the key's TTL on the server is the
only clock), no fencing token.

Passed from the hello: the first node's address, as `redis.asyncio.Redis(host, port)` (on a
Sentinel deployment `redis.asyncio.sentinel.Sentinel(sentinels).master_for(name)`),
and `ttl_ms` as `Lock(timeout=ttl_ms / 1000)`; `extend(ttl, replace_ttl=True)` makes the
key's TTL the ttl again. Everything else is the library's default, as read from redis-py
8.1.0 (the matrix prints adapters.toml's `options` line beside every cell;
adapters/python/defaults_check.py checks both against the installed library), redis-py 8.1.0 (redis.asyncio):
- The client (redis/asyncio/client.py, Redis.__init__; the values in redis/_defaults.py):
  a 5 s socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential
  backoff (base 10 ms, cap 1 s) on connection and timeout errors
  (redis/asyncio/retry.py, Retry).
- The lock (redis/asyncio/client.py, Redis.lock; redis/asyncio/lock.py, Lock.acquire):
  `blocking=True`, sleep 0.1 s between tries, `blocking_timeout=None`.
The bound (the one choice): that default acquire tries every 0.1 s without bound, which no
workload can measure. `blocking_timeout` is the hello's retry window (the scenario's
`retry_count x retry_delay_ms.max`; protocol.Params), as for the synchronous redis-py
Lock; a window of 0 makes one try.
The coroutines run on one event loop, on a thread of its own, one at a time (the
Lock's token is thread-local by default, so every call runs whole on that thread). No `token` on
a fail: Lock.acquire draws the attempt's token inside the call and keeps it only on
success.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

import asyncio
import threading
from importlib.metadata import version

from protocol import Params, fail, ok, run


class RedisPyAsyncioLock:
    def hello(self, msg):
        import redis.asyncio
        from redis.exceptions import LockError

        self.LockError = LockError
        p = Params(msg)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        if p.sentinels:
            from redis.asyncio.sentinel import Sentinel

            self.client = Sentinel(p.sentinels).master_for(p.master_name)
        else:
            host, port = p.nodes[0]
            self.client = redis.asyncio.Redis(host=host, port=port)
        self.ttl_s = p.ttl_ms / 1000
        self.blocking_timeout_s = p.retry_window_s
        self.locks = {}  # lock name -> its Lock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "redis-py (asyncio)", "version": version("redis"), "capabilities": capabilities}

    def call(self, method, *args, **kwargs):
        """Runs one library call on the loop thread, the whole of it (the Lock's methods
        read its thread-local token before they await), and waits for it."""

        async def on_loop():
            return await method(*args, **kwargs)

        return asyncio.run_coroutine_threadsafe(on_loop(), self.loop).result()

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.client.lock(name, timeout=self.ttl_s, blocking_timeout=self.blocking_timeout_s)
        return self.locks[name]

    def acquire(self, lock, mode):
        acquired, token = self.call(self.acquire_and_token, self.lock(lock))
        return ok(token=token.decode()) if acquired else fail("not acquired")

    @staticmethod
    async def acquire_and_token(held):
        """The acquire, and the token it holds: read on the loop's thread, since the Lock
        keeps its token thread-local (`thread_local=True`, the default)."""
        acquired = await held.acquire()
        return acquired, getattr(held.local, "token", None)  # unset until a first success

    def release(self, lock):
        try:
            self.call(self.lock(lock).release)
        except self.LockError as exc:  # LockNotOwnedError too: the token was not there
            return fail(str(exc))
        return ok()

    def extend(self, lock):
        try:
            self.call(self.lock(lock).extend, self.ttl_s, replace_ttl=True)
        except self.LockError as exc:
            return fail(str(exc))
        return ok()


if __name__ == "__main__":
    run(RedisPyAsyncioLock())
