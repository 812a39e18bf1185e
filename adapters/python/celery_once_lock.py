"""lockstorm worker: celery-once's Redis backend (`celery_once.backends.Redis`; single
instance), the lock behind its QueueOnce task ("prevent multiple execution and queuing of
celery tasks").

What the library promises: a task's key is locked while it is queued or running, so a
second one is refused (AlreadyQueued). The lock is redis-py's `Lock` made for one acquire
(`SET key token NX PX timeout`; celery_once/backends/redis.py, Redis.raise_or_lock), whose
token is dropped with it; the release, `clear_lock`, is a plain `DEL key`, with no owner
check: any release frees the lock, whoever holds it now. No quorum, no validity of its own
(the key's TTL is the only clock), no extension, no fencing token, no token.

Passed from the hello: the first node's address, as the backend's settings `url`
(`redis://host:port`; the backend builds `StrictRedis(host=..., port=...)` from it,
get_redis), and `ttl_ms` as raise_or_lock's `timeout`, in seconds (celery-once's own
default, QueueOnce.default_timeout, is an hour). The key is the lock's name (QueueOnce
makes one from the task's name and arguments). Everything else is the library's default,
as read from celery-once 3.0.1 and redis-py 8.1.0 (the matrix prints adapters.toml's
`options` line beside every cell; adapters/python/defaults_check.py checks both against
the installed libraries):
- The client (redis/client.py, Redis.__init__; the values in redis/_defaults.py): a 5 s
  socket timeout, a 5 s connect timeout, and 10 retries with jittered exponential backoff
  (base 10 ms, cap 1 s) on connection and timeout errors (redis/retry.py, Retry.__init__).
- The backend (celery_once/backends/redis.py, Redis.__init__): blocking False, one try
  (blocking_timeout 1 s, unused when not blocking); AlreadyQueued when the key is there,
  answered `fail`. No bound of ours.
Release goes to the library only for a lock the adapter holds (its `clear_lock` would free
anyone's); the answer is the library's: ok if a key was deleted, else fail.
Capabilities: no extend, no validity (lockstorm counts the ttl), no fencing; exclusive
only.
"""

from importlib.metadata import version

from protocol import Params, fail, ok, run


class CeleryOnceLock:
    def hello(self, msg):
        from celery_once.backends import Redis
        from celery_once.tasks import AlreadyQueued

        self.AlreadyQueued = AlreadyQueued
        p = Params(msg)
        host, port = p.nodes[0]
        self.backend = Redis({"url": f"redis://{host}:{port}"})
        self.timeout_s = p.ttl_ms / 1000
        self.held = set()  # lock names this worker holds
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"library": "celery-once", "version": version("celery-once"), "capabilities": capabilities}

    def acquire(self, lock, mode):
        try:
            self.backend.raise_or_lock(lock, timeout=self.timeout_s)
        except self.AlreadyQueued as exc:
            return fail(f"AlreadyQueued: {exc.message}")
        self.held.add(lock)
        return ok()

    def release(self, lock):
        if lock not in self.held:
            return fail("no hold of this lock to release")
        self.held.discard(lock)
        if self.backend.clear_lock(lock):
            return ok()
        return fail("not released: the key was not there")


if __name__ == "__main__":
    run(CeleryOnceLock())
