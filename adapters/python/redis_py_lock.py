"""lockstorm worker: redis-py's `redis.lock.Lock`, the single-instance lock.

What the library promises: `SET name token NX PX timeout`, release and extend by Lua
compare-and-act on the token. One Redis server, no quorum. It keeps no validity of its own
(the key's TTL on the server is the only clock) and issues no fencing token. redis-py's
docs leave "deadlock issues" to the user.

Passed from the hello: the first node's address (one server), or on a Sentinel deployment
the sentinels, as `Sentinel(sentinels).master_for(name)` (redis-py's Sentinel client, at
its defaults, which asks the sentinels for the master at every new connection), or on a
Redis Cluster every node, as `RedisCluster(startup_nodes=...)` (redis-py's cluster client, at
its defaults, which routes the key to its slot's master), and `ttl_ms` as
`Lock(timeout=ttl_ms / 1000)`; `extend(ttl, replace_ttl=True)` makes the key's TTL the ttl
again. Everything else is the library's default, as read from redis-py 8.1.0 (the matrix
prints adapters.toml's `options` line beside every cell; adapters/python/defaults_check.py
checks both against the installed library):
- The client, `redis.Redis(host, port)` (redis/client.py, Redis.__init__; the values in
  redis/_defaults.py): a 5 s socket timeout, a 5 s connect timeout, and 10 retries with
  jittered exponential backoff (base 10 ms, cap 1 s) on connection and timeout errors
  (`Retry(ExponentialWithJitterBackoff(base=DEFAULT_RETRY_BASE, cap=DEFAULT_RETRY_CAP),
  retries=DEFAULT_RETRY_COUNT)`; the errors: redis/retry.py, Retry.__init__). A request
  that times out is sent again: a SET NX whose reply was lost can meet its own key and
  answer no.
- The lock (redis/client.py, Redis.lock; redis/lock.py, Lock.acquire): `blocking=True`,
  sleep 0.1 s between tries, `blocking_timeout=None`.
The bound (the one choice): that default acquire tries every 0.1 s without bound, which no
workload can measure. `blocking_timeout` is the hello's retry window (the scenario's
`retry_count x retry_delay_ms.max`; protocol.Params), the patience lockstorm's own
algorithm has in the same scenario; a window of 0 makes one try (the library gives up when
the next try would come after the timeout).
No `token` on a fail: Lock.acquire makes the attempt's token inside the call and keeps it
only on success.
Capabilities: extend; no validity (lockstorm counts the ttl), no fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class RedisPyLock:
    def hello(self, msg):
        import redis
        from redis.exceptions import LockError

        self.LockError = LockError
        p = Params(msg)
        self.client = p.redis()
        self.ttl_s = p.ttl_ms / 1000
        self.blocking_timeout_s = p.retry_window_s
        self.locks = {}  # lock name -> its Lock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "redis-py", "version": version("redis"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.client.lock(name, timeout=self.ttl_s, blocking_timeout=self.blocking_timeout_s)
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        if held.acquire():
            return ok(token=held.local.token.decode())
        return fail("not acquired")

    def release(self, lock):
        try:
            self.lock(lock).release()
        except self.LockError as exc:  # LockNotOwnedError too: the token was not there
            return fail(str(exc))
        return ok()

    def extend(self, lock):
        try:
            self.lock(lock).extend(self.ttl_s, replace_ttl=True)
        except self.LockError as exc:
            return fail(str(exc))
        return ok()


if __name__ == "__main__":
    run(RedisPyLock())
