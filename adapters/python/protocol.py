"""The worker side of lockstorm's worker protocol, shared by the Python adapters.

They need what version 1 has; later versions only add to it (docs/worker-protocol.md), so a
hello asking for any version from 1 up is served. They may send version 2's optional fields
(a `fail` or `error` answer to acquire carrying the attempt's `token`), which an earlier
lockstorm ignores as an unknown field.

lockstorm writes one JSON request per line on our stdin; `run` reads it, hands it to the
adapter and writes the answer as one JSON line on stdout, flushed at once. stdout carries
protocol messages only: before anything else runs, fd 1 is pointed at stderr, so a stray
print() in a library lands in the log and cannot corrupt the protocol.

An adapter is an object with these methods (each the mapping onto one library, nothing more):

    hello(msg)          -> {"library", "version", "capabilities"}; raise to refuse the run
    acquire(lock, mode) -> ok(...) or fail(reason)
    release(lock)       -> ok() or fail(reason)
    extend(lock)        -> ok(...) or fail(reason)   (only asked if capabilities say extend)
    fence(lock)         -> the fencing token of the current hold, or None (optional: only
                           for libraries that issue fencing tokens)

A library that tells its caller of a loss (a watchdog, an `on_lost` callback) reports it
with `lost(lock, reason)`, from any thread: version 2's unsolicited `lost` line, written
between whole answers and sent only when the hello asked for version 2 or later.

An exception escaping an adapter method is an unknown outcome: it is answered `error` with
the exception's type and message, which lockstorm records as `info`. `write` is answered
here: it echoes the value with the hold's fence. When stdin closes, the worker answers what
it has already read and exits, releasing nothing; a library call still blocking half a
second later does not hold it up (the process ends anyway).
"""

import json
import logging
import os
import queue
import sys
import threading
import time

PROTOCOL = 1  # the version written for; later ones only add


def ok(**fields):
    """A success answer; fields that are None are left out."""
    answer = {"type": "ok"}
    answer.update({k: v for k, v in fields.items() if v is not None})
    return answer


def fail(reason, token=None):
    """The library says no: definitely not acquired (or, for release/extend, not held).
    `token`: the library's lock value the failed acquire used, if the library exposes it."""
    return _with_token({"type": "fail", "reason": reason}, token)


def error(message, token=None):
    """Unknown outcome, or a request this worker cannot serve. `token`: the library's lock
    value the acquire used, if the library exposes it (the key may be on a node)."""
    return _with_token({"type": "error", "message": message}, token)


_out = None  # the protocol's stdout, set by run()
_out_lock = threading.Lock()  # one whole line at a time: answers and lost lines
_lost_ok = False  # the hello asked for version 2 or later, which has `lost`


def lost(lock, reason=None):
    """Version 2's unsolicited `lost`: the library says it no longer holds `lock`. Safe to
    call from a library's thread (a watchdog, a callback); a no-op before the hello or
    when lockstorm speaks version 1."""
    if _out is None or not _lost_ok:
        return
    message = {"type": "lost", "lock": lock}
    if reason:
        message["reason"] = reason
    _write(message)


def _write(message):
    with _out_lock:
        _out.write(json.dumps(message, separators=(",", ":")) + "\n")
        _out.flush()


def _with_token(answer, token):
    if token is not None:
        answer["token"] = token
    return answer


class Params:
    """The hello's fields the adapters pass to their libraries: `nodes` as (host, port)
    pairs and `ttl_ms`. Every other setting stays at the library's default, so the matrix
    judges each library as its users hold it: the hello's `retry_count`, `retry_delay_ms`,
    `request_timeout_ms`, `quorum` and `drift_factor` are lockstorm's own algorithm's.

    One exception: `retry_window_s`, the scenario's retry window (`retry_count x
    retry_delay_ms.max`; 0: do not block, try once), bounds the acquire of the libraries
    whose default acquire blocks without bound (redis-py Lock, pottery, python-redis-lock),
    which no workload could measure otherwise; it gives them the patience lockstorm's own
    algorithm has in the same scenario."""

    def __init__(self, hello):
        algorithm = hello.get("algorithm", {})
        delay = algorithm.get("retry_delay_ms", {"max": 200})
        delay_max_ms = float(delay["max"] if isinstance(delay, dict) else delay)
        self.ttl_ms = int(hello["ttl_ms"])
        self.nodes = [_host_port(address) for address in hello["nodes"]]
        if not self.nodes:
            raise ValueError("hello names no nodes")
        self.retry_window_s = int(algorithm.get("retry_count", 3)) * delay_max_ms / 1000
        # A Sentinel deployment (the scenario's [sentinel]): the sentinels' addresses and
        # the name they watch the master under; `nodes` then holds the first master.
        sentinel = hello.get("sentinel")
        self.sentinels = [_host_port(a) for a in sentinel["sentinels"]] if sentinel else None
        self.master_name = sentinel["master"] if sentinel else None
        # A Redis Cluster (the scenario's [cluster]): every node's address, the seeds a
        # cluster client starts from; `nodes` then holds the master of the lock's slot.
        cluster = hello.get("cluster")
        self.cluster_nodes = [_host_port(a) for a in cluster["nodes"]] if cluster else None

    def redis(self, redis_class=None):
        """The redis-py client a user of this deployment holds, at redis-py's defaults: on a
        Sentinel deployment `Sentinel(sentinels).master_for(name)`, which asks the sentinels
        for the master when it connects, and again after a connection error; on a cluster
        `RedisCluster(startup_nodes=...)`, which routes each key to its slot's master and
        refreshes its slot map after a MOVED or a connection error; else `Redis(host, port)`
        of the first node. `redis_class`: a subclass of `redis.Redis` the library builds
        its client from (walrus's Database); a cluster has none."""
        import redis

        if self.cluster_nodes:
            from redis.cluster import ClusterNode, RedisCluster

            return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in self.cluster_nodes])
        redis_class = redis_class or redis.Redis
        if self.sentinels:
            from redis.sentinel import Sentinel

            return Sentinel(self.sentinels).master_for(self.master_name, redis_class=redis_class)
        host, port = self.nodes[0]
        return redis_class(host=host, port=port)


def _host_port(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)  # "[::1]:6379" -> ("::1", 6379)


def describe(exc):
    """`Type: message`, the one-line form every error answer uses."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def timed(call):
    """The library call's answer, an `ok` carrying `took_ms`: how long the call took on
    the monotonic clock. lockstorm counts the caller's hold from when the call returned,
    which a stop of this process between the return and the answer would otherwise hide."""
    start = time.monotonic()
    answer = call()
    if answer.get("type") == "ok":
        answer["took_ms"] = (time.monotonic() - start) * 1000
    return answer


class _Worker:
    """Dispatch of one request to the adapter, with the checks the protocol asks for."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.capabilities = None  # set by a successful hello
        self.refused = None  # why hello failed, repeated to any later request

    def answer(self, msg):
        kind = msg.get("type")
        if kind == "hello":
            return self.hello(msg)
        if self.capabilities is None:
            return error(self.refused or "the first request must be hello")
        lock = msg.get("lock")
        if kind == "acquire":
            mode = msg.get("mode", "exclusive")
            if mode not in self.capabilities["modes"]:
                return error(f"mode {mode!r} is not in this worker's capabilities")
            return timed(lambda: self.adapter.acquire(lock, mode))
        if kind == "release":
            return self.adapter.release(lock)
        if kind == "extend":
            if not self.capabilities["extend"]:
                return error("extend is not in this worker's capabilities")
            return timed(lambda: self.adapter.extend(lock))
        if kind == "write":
            fence = getattr(self.adapter, "fence", None)
            return ok(value=msg.get("value"), fence=fence(lock) if fence else None)
        return error(f"unknown request type {kind!r}")

    def hello(self, msg):
        asked = msg.get("protocol")
        if not isinstance(asked, int) or asked < PROTOCOL:
            self.refused = f"protocol {asked!r} asked, this worker speaks {PROTOCOL} and later"
            return error(self.refused)
        try:
            info = self.adapter.hello(msg)
        except Exception as exc:  # the library cannot run here: say why
            logging.exception("hello refused")
            self.refused = describe(exc)
            if isinstance(exc, ImportError):
                self.refused += f" in {sys.executable} (adapters/setup installs the libraries into .venv/)"
            return error(self.refused)
        self.capabilities = info["capabilities"]
        global _lost_ok
        _lost_ok = asked >= 2
        return {"type": "hello_ok", **info}


EXIT_GRACE_S = 0.5


def _read_lines(requests):
    """Feeds stdin lines to the main thread. On EOF (the shutdown) the main thread ends
    after the requests already read; the process ends after the grace in any case."""
    for line in sys.stdin.buffer:
        requests.put(line)
    requests.put(None)
    # time.sleep, not threading.Timer: a timed thread wait never returns when libfaketime
    # fakes the monotonic clock (adapters/README.md, "Clock faults").
    try:
        time.sleep(EXIT_GRACE_S)
    except OSError:  # libfaketime without lockstorm's shim: no grace, then
        pass
    os._exit(0)


def run(adapter):
    """Serves requests until stdin closes."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    global _out
    out = _out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = queue.SimpleQueue()
    threading.Thread(target=_read_lines, args=(requests,), daemon=True).start()
    worker = _Worker(adapter)
    while True:
        line = requests.get()
        if line is None:
            with _out_lock:
                out.flush()
            os._exit(0)  # no interpreter shutdown: library threads must not hold the exit up
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict) or not isinstance(msg.get("id"), int):
                raise ValueError("not a request object with an integer id")
        except ValueError as exc:
            print(f"worker: not a protocol request ({exc}): {line[:200]!r}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(2)
        try:
            answer = worker.answer(msg)
        except Exception as exc:  # unknown outcome: the library raised
            logging.exception("%s %s", msg.get("type"), msg.get("lock"))
            answer = error(describe(exc))
        answer["in_reply_to"] = msg["id"]
        _write(answer)
