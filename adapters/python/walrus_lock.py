"""lockstorm worker: walrus's `Lock` (walrus.Database.lock; single instance, SETNX + BLPOP).

What the library promises: a lock on one Redis server "similar to the standard library's
threading.Lock". A Lua script runs `SETNX lock:<name> lock_id` and, if set and a ttl was
given, `PEXPIRE` (milliseconds); a blocking acquire waits on `BLPOP lock.event:<name>`,
which a release pushes to. Release is a Lua compare-and-delete on the lock id (and the
push). No quorum, no validity of its own (the key's TTL on the server is the only clock),
no extension, no fencing token.

Passed from the hello: the first node's address (on a Sentinel deployment redis-py's
`Sentinel(sentinels).master_for(name, redis_class=walrus.Database)`), as walrus's client
(`walrus.Database(host=..., port=...)`, a redis.Redis subclass), and `ttl_ms` as the
lock's `ttl` (milliseconds, walrus/database.py, Database.lock). Everything else is the
library's default, as read from walrus 0.9.8 and redis-py 8.1.0 (the matrix prints
adapters.toml's `options` line beside every cell; adapters/python/defaults_check.py checks
both against the installed libraries):
- The client (redis/client.py, Redis.__init__; the values in redis/_defaults.py): a 5 s
  socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential backoff
  (base 10 ms, cap 1 s) on connection and timeout errors (redis/retry.py, Retry.__init__).
- The lock (walrus/lock.py, Lock.__init__): a `lock_id` of 32 random bytes per Lock
  object, kept for its life.
- The acquire (walrus/lock.py, Lock.acquire): `block=True`, which tries, then waits in
  `BLPOP` for up to ttl // 1000 seconds (1 without a ttl) and tries again, without bound.
The bound (the one choice): that default acquire never gives up, which no workload can
measure, and walrus has no timeout to bound it with: the acquire is block=False, one try (a
retry window of 0). Between acquires lockstorm's client retries, as a user's loop
would.
One Lock per lock name, kept for the worker's life (as `lock = db.lock(name)` is used): its
lock_id is the same for every acquisition of that worker. The `token` on ok and fail is
that lock_id, in hex.
Capabilities: no extend (walrus has none), no validity (lockstorm counts the ttl), no
fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class WalrusLock:
    def hello(self, msg):
        import walrus

        p = Params(msg)
        self.db = p.redis(walrus.Database)
        self.ttl_ms = p.ttl_ms
        self.locks = {}  # lock name -> its Lock, made on first use and kept
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "walrus", "version": version("walrus"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.db.lock(name, ttl=self.ttl_ms)
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        token = held._lock_id.hex()  # the library's lock value, named for the history
        if held.acquire(block=False):
            return ok(token=token)
        return fail("not acquired", token=token)

    def release(self, lock):
        if self.lock(lock).release():
            return ok()
        return fail("not released: the key holds another lock id or none")


if __name__ == "__main__":
    run(WalrusLock())
