"""lockstorm worker: portalocker's `RedisLock`, a lock held by a pub/sub subscription
(single instance, no expiry, shared and exclusive modes).

What the library promises (portalocker/redis.py, the module docstring and RedisLock): the
lock is a live SUBSCRIBE to a channel named after the lock, not a key: "ownership is a
property of a live connection", released when Redis drops the subscription, "without
waiting for a key to expire". An acquire subscribes, counts the channel's subscribers
(PUBSUB NUMSUB) and, when others are there, publishes a ping that every holder answers
with its holder id and mode; compatible holders (readers) share it, competing writers
elect one by holder id; holders that do not answer within `unavailable_timeout` are taken
for crashed and their connections killed (CLIENT KILL). A holder's keep-alive thread reads
the subscription; a connection error there is a loss: `lost` turns true and `on_lost`
fires. No ttl, no validity, no extension; fencing tokens only if asked (not by default).

Passed from the hello: the first node's address, as `redis_kwargs={"host", "port"}` (the
lock builds its own client from them, with its `DEFAULT_REDIS_KWARGS`), and the lock name
as the channel. No ttl: the lock has none (`"expires": false`; `ttl_ms` is not passed).
Mode: `read` is `LockFlags.SHARED`, `write` and `exclusive` are `LockFlags.EXCLUSIVE`.
Everything else is the library's default, as read from portalocker 4.4.2 and redis-py
8.1.0 (the matrix prints adapters.toml's `options` line beside every cell;
adapters/python/defaults_check.py checks both against the installed libraries):
- The client (portalocker/redis.py, RedisLock.DEFAULT_REDIS_KWARGS and get_connection;
  redis/client.py, Redis.__init__): health_check_interval 10 s, decode_responses, and
  redis-py's 5 s socket timeout, 5 s connect timeout, and 10 retries with jittered
  exponential backoff (base 10 ms, cap 1 s) on connection and timeout errors; the
  subscription's own connection retries nothing (RedisLock._make_subscription_client).
- The lock (RedisLock.__init__, portalocker/utils.py, LockBase.__init__): timeout 5 s,
  check_interval 0.25 s (jittered 0.5 to 1.5 times), fail_when_locked False,
  unavailable_timeout 1 s, thread_sleep_time 0.1 s, no self-check, no fencing.
  The acquire tries until its timeout and then raises AlreadyLocked, answered `fail`.
  Bounded by the library: no bound of ours.
The one setting that is not the default: `interrupt_on_lost=False`. By default (in 4.x;
portalocker 5 flips it) a loss also raises KeyboardInterrupt in the main thread, which
would end this worker's protocol loop, not the library's hold; the loss is reported
instead through `on_lost`, the library's callback, as the protocol's `lost` line.
A new RedisLock per acquire (its flags are fixed at construction), kept for the hold; its
`holder_id` (one per RedisLock) is the `token` on ok, fail and error.
Capabilities: no extend, no validity (`"expires": false`), no fencing; modes exclusive,
read and write.
"""

import logging
from importlib.metadata import version

from protocol import Params, describe, error, fail, lost, ok, run


class PortalockerRedis:
    def hello(self, msg):
        import portalocker
        from portalocker import exceptions

        self.portalocker = portalocker
        self.AlreadyLocked = exceptions.AlreadyLocked
        self.flags = {
            "exclusive": portalocker.LockFlags.EXCLUSIVE,
            "write": portalocker.LockFlags.EXCLUSIVE,
            "read": portalocker.LockFlags.SHARED,
        }
        p = Params(msg)
        host, port = p.nodes[0]
        self.redis_kwargs = {"host": host, "port": port}
        self.holds = {}  # lock name -> the RedisLock of the current hold
        capabilities = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive", "read", "write"]}
        return {"library": "portalocker", "version": version("portalocker"), "capabilities": capabilities}

    def lock(self, name, mode):
        """A new RedisLock for one acquire, as each `with RedisLock(...)` makes one."""
        return self.portalocker.RedisLock(
            name,
            redis_kwargs=dict(self.redis_kwargs),
            flags=self.flags[mode],
            on_lost=lambda held: lost(name, f"portalocker: the subscription of holder {held.holder_id} is gone"),
            interrupt_on_lost=False,
        )

    def acquire(self, lock, mode):
        held = self.lock(lock, mode)
        try:
            held.acquire()
        except self.AlreadyLocked as exc:
            return fail(describe(exc), token=held.holder_id)
        except Exception as exc:  # unknown outcome
            logging.exception("acquire %s", lock)
            return error(describe(exc), token=held.holder_id)
        self.holds[lock] = held
        return ok(expires=False, token=held.holder_id)

    def release(self, lock):
        held = self.holds.pop(lock, None)
        if held is None:
            return fail("no hold of this lock to release")
        held.release()
        return ok()


if __name__ == "__main__":
    run(PortalockerRedis())
