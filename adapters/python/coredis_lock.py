"""lockstorm worker: coredis's `Lock` (coredis.patterns.lock.Lock; single instance), the
lock of coredis, an async Redis client of its own (anyio), not redis-py.

What the library promises (coredis/patterns/lock/__init__.py, Lock's docstring): "A shared,
distributed Lock inspired by the Distributed locks documentation and the Redlock
Algorithm". On one Redis it is `SET name token NX PX timeout` (Lock.__acquire), release a
Lua compare-and-delete on the token, extend a Lua compare-and-PEXPIRE that adds time to
what is left (lua/extend.lua). On a cluster client it also waits for replication; here it
is one instance: no quorum, no validity of its own (the key's TTL is the only clock), no
fencing token. The token is a uuid1 per acquisition, kept in a ContextVar.

Passed from the hello: the first node's address, as `coredis.Redis(host, port)` (on a
Sentinel deployment coredis's own `Sentinel(sentinels).primary_for(name)`, entered first), and
`ttl_ms` as `Lock(timeout=ttl_ms / 1000)`; extend is `extend(ttl)`, which adds the ttl to
the key's remaining TTL (lockstorm counts the ttl from the answer: the key outlives it).
Everything else is the library's default, as read from coredis 6.9.0 (the matrix prints
adapters.toml's `options` line beside every cell; adapters/python/defaults_check.py
checks both against the installed library):
- The client (coredis/client/basic.py, Redis.__init__): no stream timeout, no connect
  timeout, and 2 retries 0.01 s apart on connection and timeout errors
  (ConstantRetryPolicy). It must be entered (`async with client`) before use.
- The lock (Lock.__init__ and Lock.acquire): `blocking=True`, sleep 0.1 s between tries,
  `blocking_timeout=None`; the deadline, when there is one, is on `time.time()`, the wall
  clock.
The bound (the one choice): that default acquire tries every 0.1 s without bound, which no
workload can measure. `blocking_timeout` is the hello's retry window (the scenario's
`retry_count x retry_delay_ms.max`; protocol.Params); a window of 0 is `blocking=False`,
one try.
The coroutines run on one event loop, on a thread of its own, inside the client's
`async with` and one at a time in one task: the Lock keeps its token in a ContextVar,
which only a call in the same context sees (a release from another task would find no
token). An ok carries the `token` (read from that ContextVar); a fail has none.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

import asyncio
import concurrent.futures
import contextlib
import threading
from importlib.metadata import version

from protocol import Params, fail, ok, run


class CoredisLock:
    def hello(self, msg):
        self.configure(msg)
        self.loop = asyncio.new_event_loop()
        self.calls = None
        entered = concurrent.futures.Future()
        threading.Thread(target=self.loop.run_until_complete, args=(self.serve(entered),), daemon=True).start()
        entered.result()  # the client's pool is up, or why not
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "coredis", "version": version("coredis"), "capabilities": capabilities}

    def configure(self, msg):
        """The client and the settings, from the hello; nothing connects yet."""
        import coredis
        from coredis.exceptions import LockError
        from coredis.patterns.lock import Lock

        self.Lock = Lock
        self.LockError = LockError
        p = Params(msg)
        # On a Sentinel deployment the client is the Sentinel's primary, and the Sentinel
        # (its clients of the sentinels) is entered before it, as coredis asks.
        self.sentinel = None
        if p.sentinels:
            from coredis.sentinel import Sentinel

            self.sentinel = Sentinel(p.sentinels)
            self.client = self.sentinel.primary_for(p.master_name)
        else:
            host, port = p.nodes[0]
            self.client = coredis.Redis(host=host, port=port)
        self.ttl_s = p.ttl_ms / 1000
        self.window_s = p.retry_window_s
        self.locks = {}  # lock name -> its Lock, made on first use and kept

    async def serve(self, entered):
        """Enters the client and runs the calls, one after another, in this one task."""
        try:
            self.calls = asyncio.Queue()
            async with contextlib.AsyncExitStack() as stack:
                if self.sentinel is not None:
                    await stack.enter_async_context(self.sentinel)
                await stack.enter_async_context(self.client)
                entered.set_result(None)
                while True:
                    method, args, done = await self.calls.get()
                    try:
                        done.set_result(await method(*args))
                    except BaseException as exc:  # handed to the caller, as the call's outcome
                        done.set_exception(exc)
        except BaseException as exc:
            if not entered.done():
                entered.set_exception(exc)
            raise

    def call(self, method, *args):
        done = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.calls.put_nowait, (method, args, done))
        return done.result()

    def lock(self, name):
        if name not in self.locks:
            if self.window_s > 0:
                held = self.Lock(self.client, name, timeout=self.ttl_s, blocking_timeout=self.window_s)
            else:
                held = self.Lock(self.client, name, timeout=self.ttl_s, blocking=False)
            self.locks[name] = held
        return self.locks[name]

    def acquire(self, lock, mode):
        acquired, token = self.call(self.acquire_and_token, self.lock(lock))
        return ok(token=token) if acquired else fail("not acquired")

    @staticmethod
    async def acquire_and_token(held):
        acquired = await held.acquire()
        return acquired, held.local.get()

    def release(self, lock):
        try:
            self.call(self.lock(lock).release)
        except self.LockError as exc:  # LockReleaseError: not held, or no longer owned
            return fail(str(exc))
        return ok()

    def extend(self, lock):
        try:
            self.call(self.lock(lock).extend, self.ttl_s)
        except self.LockError as exc:  # LockExtensionError
            return fail(str(exc))
        return ok()


if __name__ == "__main__":
    run(CoredisLock())
