"""The worker side of lockstorm's worker protocol, shared by the Python adapters.

They use what version 1 has; later versions only add to it (docs/worker-protocol.md), so a
hello asking for any version from 1 up is served.

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


def fail(reason):
    """The library says no: definitely not acquired (or, for release/extend, not held)."""
    return {"type": "fail", "reason": reason}


def error(message):
    """Unknown outcome, or a request this worker cannot serve."""
    return {"type": "error", "message": message}


class Params:
    """The hello's parameters the adapters map onto their libraries (lockstorm's defaults
    where a field is missing): `ttl_ms`, `retry_count` (retries after the first attempt),
    `retry_delay_min_ms`/`retry_delay_max_ms` (from `{"min", "max"}`, `{"mean", "max"}` or
    one number), `request_timeout_ms`, `max_extensions` (None
    if not given), `nodes` as (host, port) pairs."""

    def __init__(self, hello):
        algorithm = hello.get("algorithm", {})
        delay = algorithm.get("retry_delay_ms", {"min": 0, "max": 200})
        if not isinstance(delay, dict):  # a fixed delay
            delay = {"min": delay, "max": delay}
        self.ttl_ms = int(hello["ttl_ms"])
        self.retry_count = int(algorithm.get("retry_count", 3))
        self.retry_delay_min_ms = float(delay.get("min", 0))
        self.retry_delay_max_ms = float(delay["max"])
        self.request_timeout_ms = float(algorithm.get("request_timeout_ms", 50))
        self.max_extensions = algorithm.get("max_extensions")
        self.nodes = [_host_port(address) for address in hello["nodes"]]
        if not self.nodes:
            raise ValueError("hello names no nodes")

    def retry_window_s(self):
        """How long a blocking acquire may keep trying: the retries times the longest delay
        between them (0: do not block, try once)."""
        return self.retry_count * self.retry_delay_max_ms / 1000


def _host_port(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)  # "[::1]:6379" -> ("::1", 6379)


def describe(exc):
    """`Type: message`, the one-line form every error answer uses."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
            return self.adapter.acquire(lock, mode)
        if kind == "release":
            return self.adapter.release(lock)
        if kind == "extend":
            if not self.capabilities["extend"]:
                return error("extend is not in this worker's capabilities")
            return self.adapter.extend(lock)
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
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    requests = queue.SimpleQueue()
    threading.Thread(target=_read_lines, args=(requests,), daemon=True).start()
    worker = _Worker(adapter)
    while True:
        line = requests.get()
        if line is None:
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
        out.write(json.dumps(answer, separators=(",", ":")) + "\n")
        out.flush()
