"""lockstorm worker: huey's task lock, `RedisHuey.lock_task` (huey.api.TaskLock; single
instance, no expiry at its defaults).

What the library promises: `lock_task` is huey's way to keep a task (or any block of
code) from running in two places at once (huey/api.py, Huey.lock_task, TaskLock). The lock is a field of
the huey's results hash: acquire is `HSETNX huey.results.<huey> <huey>.lock.<name> 1`
(huey/storage.py, RedisStorage.put_if_empty), a taken field raising
TaskLockedException; release is `HDEL` of the field (huey/api.py, TaskLock.clear), with no
owner check: any holder's release frees the lock, and so does anyone else's. An optional
ttl needs hash-field TTLs (HEXPIRE, Redis 7.4 or later); without one, the default, the
lock never expires. No quorum, no validity, no extension, no fencing token, no token (the
value is `1`).

Passed from the hello: the first node's address, as `RedisHuey(host=..., port=...)` (on a
Sentinel deployment `RedisHuey(connection_pool=)` of redis-py's `master_for(name)`). No
ttl: `lock_task(name)` at its default, ttl=None, no expiry: a lock that lives until released (`"expires":
false`). (A ttl is refused by this storage on the Redis 7.0 that lockstorm runs:
put_if_empty raises NotImplementedError without HEXPIRE.) Everything else is the
library's default, as read from huey 3.5.4 and redis-py 8.1.0 (the matrix prints
adapters.toml's `options` line beside every cell; adapters/python/defaults_check.py
checks both against the installed libraries):
- The client (huey/storage.py, RedisStorage.__init__: `ConnectionPool(**connection_params)`
  and `Redis(connection_pool=...)`; redis/connection.py, AbstractConnection.__init__):
  redis-py 8.1.0's connection defaults, a 5 s socket timeout, a 5 s connect timeout, and no
  retries: a pool built from host and port gets the connection's defaults, not the retry
  policy redis.Redis(host, port) makes.
- The huey (huey/api.py, Huey.__init__): name 'huey'.
- The acquire (huey/api.py, TaskLock.acquire): one try, TaskLockedException when the field
  is there, answered `fail`. No bound of ours.
A TaskLock per lock name, kept for the worker's life (it holds no per-acquisition state).
Release goes to the library only for a lock the adapter holds (the library's `clear` would
free any holder's lock); its answer is the library's: ok if a field was deleted, else fail.
Capabilities: no extend, no validity (`"expires": false`), no fencing; exclusive only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class HueyLock:
    def hello(self, msg):
        import huey
        from huey.exceptions import TaskLockedException

        self.TaskLockedException = TaskLockedException
        p = Params(msg)
        if p.sentinels:
            # RedisHuey takes a pool; a Sentinel deployment's is the master's pool.
            self.huey = huey.RedisHuey(connection_pool=p.redis().connection_pool)
        else:
            host, port = p.nodes[0]
            self.huey = huey.RedisHuey(host=host, port=port)
        self.locks = {}  # lock name -> its TaskLock, made on first use and kept
        self.held = set()  # lock names this worker holds
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "huey", "version": version("huey"), "capabilities": capabilities}

    def lock(self, name):
        if name not in self.locks:
            self.locks[name] = self.huey.lock_task(name)
        return self.locks[name]

    def acquire(self, lock, mode):
        try:
            self.lock(lock).acquire()
        except self.TaskLockedException as exc:
            return fail(str(exc))
        self.held.add(lock)
        return ok(expires=False)

    def release(self, lock):
        if lock not in self.held:
            return fail("no hold of this lock to release")
        self.held.discard(lock)
        if self.lock(lock).release():
            return ok()
        return fail("not released: the lock's field was not there")


if __name__ == "__main__":
    run(HueyLock())
