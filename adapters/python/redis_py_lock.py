"""lockstorm worker: redis-py's `redis.lock.Lock`, the single-instance lock.

What the library promises: `SET name token NX PX timeout`, release and extend by Lua
compare-and-act on the token. One Redis server, no quorum. It keeps no validity of its own
(the key's TTL on the server is the only clock) and issues no fencing token. redis-py's
docs leave "deadlock issues" to the user.

Options used, from the hello (adapters.toml's `options` line shows the choices, and the
matrix prints it beside every cell of this library):
- nodes: the first address only (one server). The client keeps redis-py's defaults: no
  socket timeout (a request to a node behind a cut link waits until the link heals) and
  redis-py 8's default retry policy; `request_timeout_ms` is lockstorm's algorithm
  parameter, not the library's default, and is not passed.
- ttl_ms -> `Lock(timeout=ttl_ms / 1000)`.
- Blocking (a choice, displayed): the library's default acquire blocks without bound
  (`blocking_timeout=None`), which no workload can measure. lockstorm's acquire is one
  library acquire with its own retries for the scenario's retry window: `blocking_timeout =
  retry_count x retry_delay_ms.max` and `sleep = retry_delay_ms.max`; with no window
  `blocking=False`, one try.
- extend -> `extend(ttl, replace_ttl=True)`: the key's TTL becomes the ttl again.
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
        host, port = p.nodes[0]
        self.client = redis.Redis(host=host, port=port)
        window_s = p.retry_window_s()
        self.ttl_s = p.ttl_ms / 1000
        self.options = dict(
            timeout=self.ttl_s, sleep=p.retry_delay_max_ms / 1000, blocking=window_s > 0, blocking_timeout=window_s
        )
        self.locks = {}  # lock name -> its Lock, made on first use and kept
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "redis-py", "version": version("redis"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.client.lock(name, **self.options)
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
