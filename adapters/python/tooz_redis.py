"""lockstorm worker: tooz's Redis driver lock (`tooz.coordination.get_coordinator("redis://
...")` and its `get_lock`; single instance), OpenStack's coordination library.

What the library promises (tooz/drivers/redis.py, RedisDriver's docstring): "Consistent,
note that this is still restricted to only one redis server", values "*can* be lost when
a failover transition occurs", and for locks: "run in AOF mode". Its Redis lock is redis-py's
`redis.lock.Lock` on the key `_tooz_<name>_lock` (tooz/drivers/redis.py, RedisLock.__init__:
`client.lock(name, timeout=lock_timeout, thread_local=False)`): `SET NX PX`, release and
extension by Lua compare-and-act on the token; `heartbeat()` re-sets the TTL to the lock
timeout (`reacquire`). Redis errors are retried (a connection error up to 15 times,
`_handle_failures`) and then raised as ToozError. No quorum, no validity of its own (the
key's TTL is the only clock), no fencing token.

Passed from the hello: the first node's address, as the backend URL
`redis://host:port` (on a Sentinel deployment tooz's own
`redis://sentinel?sentinel=name&sentinel_fallback=...`), a member id naming the worker's client, and `ttl_ms` as the
coordinator's `lock_timeout` option, in seconds, which the driver truncates to whole
seconds (`int(lock_timeout)`, RedisDriver.__init__): a 1.5 s ttl makes a key that lives
1 s. Extend is the lock's `heartbeat()`. Everything else is the library's default, as read
from tooz 9.1.0 and redis-py 8.1.0 (the matrix prints adapters.toml's `options` line
beside every cell; adapters/python/defaults_check.py checks both against the installed
libraries):
- The client (tooz/drivers/redis.py, RedisDriver._make_client: redis.Redis(host, port,
  socket_timeout=CLIENT_DEFAULT_SOCKET_TO); redis/client.py, Redis.__init__): tooz's 30 s
  socket timeout, redis-py 8.1.0's 5 s connect timeout, and 10 retries with jittered
  exponential backoff (base 10 ms, cap 1 s) on connection and timeout errors (redis-py's);
  above them tooz retries a connection error 15 times (_handle_failures) before it raises
  ToozConnectionError.
- The coordinator (tooz/coordination.py, CoordinationDriver.start): `start_heart=False`,
  no heartbeat thread: a lock is extended only when its holder calls heartbeat.
- The lock: redis-py's sleep 0.1 s between tries; the acquire
  (tooz/drivers/redis.py, RedisLock.acquire): `blocking=True`, no timeout.
The bound (the one choice): that default acquire tries every 0.1 s without bound, which no
workload can measure. `acquire(blocking=True, timeout=...)` with the hello's retry window
(the scenario's `retry_count x retry_delay_ms.max`; protocol.Params), the patience
lockstorm's own algorithm has in the same scenario; a window of 0 is `blocking=False`, one
try.
One lock per lock name, kept for the worker's life. An ok carries the `token`, redis-py's
token of the hold (the lock's redis-py Lock, read only to name it); a fail has none.
Capabilities: extend (heartbeat); no validity (lockstorm counts the ttl), no fencing;
exclusive only (tooz's Redis lock refuses `shared`).
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


def url(p):
    """tooz's connection URI: the first node, or on a Sentinel deployment the first
    sentinel with `sentinel=<master name>` and the others as `sentinel_fallback`
    (tooz/drivers/redis.py, RedisDriver's docstring)."""
    if not p.sentinels:
        host, port = p.nodes[0]
        return f"redis://{host}:{port}"
    (host, port), *others = p.sentinels
    fallbacks = "".join(f"&sentinel_fallback={h}:{q}" for h, q in others)
    return f"redis://{host}:{port}?sentinel={p.master_name}{fallbacks}"


class ToozRedis:
    def hello(self, msg):
        from tooz import coordination

        p = Params(msg)
        member = f"lockstorm-client-{msg.get('client', 0)}".encode()
        self.coordinator = coordination.get_coordinator(url(p), member, lock_timeout=p.ttl_ms / 1000)
        self.coordinator.start()
        self.window_s = p.retry_window_s
        self.locks = {}  # lock name -> its tooz lock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "tooz", "version": version("tooz"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.coordinator.get_lock(name.encode())
        return self.locks[name]

    def acquire(self, lock, mode):
        held = self.lock(lock)
        if self.window_s > 0:
            acquired = held.acquire(blocking=True, timeout=self.window_s)
        else:
            acquired = held.acquire(blocking=False)
        if not acquired:
            return fail("not acquired")
        token = held._lock.local.token  # redis-py's token of the hold, to name it
        return ok(token=token.decode() if token else None)

    def release(self, lock):
        if self.lock(lock).release():
            return ok()
        return fail("not released: the lock was not held (tooz logs the LockError)")

    def extend(self, lock):
        if self.lock(lock).heartbeat():
            return ok()
        return fail("not extended: the lock is not acquired")


if __name__ == "__main__":
    run(ToozRedis())
