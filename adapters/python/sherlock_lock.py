"""lockstorm worker: sherlock's `sherlock.RedisLock` (single instance).

What the library promises: "distributed inter-process locks". A Lua script runs `SETNX
key owner` and, if set, `EXPIRE key expire` (whole seconds); release is a Lua
compare-and-delete on the owner (a uuid4 drawn per acquisition), renew a Lua
compare-and-EXPIRE. One Redis server, no quorum, no validity of its own (the key's TTL on
the server is the only clock), no fencing token. Keys are the lock's name (no namespace by
default).

Passed from the hello: the first node's address (on a Sentinel deployment redis-py's
`Sentinel(sentinels).master_for(name)`), as the client (`redis.Redis(host, port)`,
as sherlock builds its own default client, `redis.StrictRedis(host=..., port=...)`:
sherlock/lock.py, RedisLock.__init__), and `ttl_ms` as `expire`, in seconds. The library
sends `expire` to EXPIRE, which takes whole seconds only: a whole-second ttl is passed as
an int (as sherlock's own default, 60, is one); any other ttl is passed as the float, which
the library's script then fails on after its SETNX (the key stays with no TTL): its
behaviour, answered as an error. Everything else is the library's default, as read from
sherlock 0.4.1 and redis-py 8.1.0 (the matrix prints adapters.toml's `options` line beside
every cell; adapters/python/defaults_check.py checks both against the installed libraries):
- The client (redis/client.py, Redis.__init__; the values in redis/_defaults.py): a 5 s
  socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential backoff
  (base 10 ms, cap 1 s) on connection and timeout errors (redis/retry.py, Retry.__init__).
- The lock (sherlock/__init__.py, _Configuration.__init__: the global defaults every lock
  inherits; sherlock/lock.py, BaseLock.acquire): no namespace, `blocking=True` with a
  10 s timeout, a try every 0.1 s (retry_interval) until the timeout, counted in tries
  (`timeout -= retry_interval`), not in time; then LockTimeoutException, answered `fail`.
  The default acquire is bounded by the library, so no bound of ours.
One RedisLock per lock name, kept for the worker's life (`_owner` is per acquisition).
An ok carries the `token`, the owner uuid (the library's `_owner`; a fail has none: the
library keeps an attempt's owner only on success).
Capabilities: extend (`renew`, the key's TTL back to `expire`); no validity (lockstorm
counts the ttl), no fencing; exclusive only.

Where its documentation says otherwise: sherlock's docstrings say `expire=None` makes a
lock that "will not expire"; its script compares the string ARGV[2] with the number -1
(sherlock/lock.py:416), which is always unequal, and runs `EXPIRE key -1`, which deletes
the key at once: such an acquire answers True and holds nothing. The adapter passes the
ttl, so the matrix does not exercise it.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class SherlockLock:
    def hello(self, msg):
        import sherlock

        self.sherlock = sherlock
        p = Params(msg)
        self.client = p.redis()
        self.expire = p.ttl_ms // 1000 if p.ttl_ms % 1000 == 0 else p.ttl_ms / 1000
        self.locks = {}  # lock name -> its RedisLock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "sherlock", "version": version("sherlock"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.sherlock.RedisLock(name, client=self.client, expire=self.expire)
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        try:
            held.acquire()
        except self.sherlock.LockTimeoutException as exc:
            return fail(str(exc))
        return ok(token=held._owner)

    def release(self, lock):
        try:
            self.lock(lock).release()
        except self.sherlock.LockException as exc:
            return fail(str(exc))
        return ok()

    def extend(self, lock):
        try:
            renewed = self.lock(lock).renew()
        except self.sherlock.LockException as exc:
            return fail(str(exc))
        return ok() if renewed else fail("not renewed: the key holds another owner or none")


if __name__ == "__main__":
    run(SherlockLock())
