#!/usr/bin/env python3
"""A lockstorm worker for a lock lockstorm does not ship, written from docs/worker-protocol.md
alone: the naive Redis lock, `SET key token NX` with no expiry.

The lock is held until released (protocol version 2: `"expires": false` on the acquire's
`ok`), so a holder that dies holds it for ever, and a node that restarts without its data
forgets it. A watchdog thread checks every 50 ms that each held key still holds this
worker's token and reports the ones that do not as `lost` (an unsolicited message). One
acquire is one `SET NX`, no retries: `fail` when the key is taken. Release is a
compare-and-delete script. The first node only; no ttl, no validity, no fencing; the
standard library only (a minimal RESP client), no socket timeouts. Logs go to stderr.
"""

import json
import socket
import sys
import threading
import time
import uuid

RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class Conn:
    """One RESP connection, opened on first use and dropped after an error."""

    def __init__(self, address):
        host, _, port = address.rpartition(":")
        self.address = (host.strip("[]"), int(port))
        self.sock = None

    def call(self, *args):
        try:
            if self.sock is None:
                self.sock = socket.create_connection(self.address)
                self.file = self.sock.makefile("rb")
            parts = [str(a).encode() for a in args]
            self.sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
            return self.reply()
        except OSError:
            self.sock = None
            raise

    def reply(self):
        line = self.file.readline()
        if not line:
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode()
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        raise ConnectionError(f"not RESP: {line!r}")


out_lock = threading.Lock()
held = {}  # lock name -> token, while held
held_lock = threading.Lock()


def send(message):
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def watchdog(address):
    conn = Conn(address)
    while True:
        time.sleep(0.05)
        with held_lock:
            mine = dict(held)
        for lock, token in mine.items():
            try:
                now = conn.call("GET", "naive:" + lock)
            except (OSError, RuntimeError):
                continue  # the node is out of reach: cannot tell
            with held_lock:
                if now != token and held.get(lock) == token:
                    del held[lock]
                    print(f"lost {lock}: the key holds {now!r}", file=sys.stderr, flush=True)
                    send({"type": "lost", "lock": lock})


def main():
    conn = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg["type"]
        try:
            if kind == "hello":
                conn = Conn(msg["nodes"][0])
                threading.Thread(target=watchdog, args=(msg["nodes"][0],), daemon=True).start()
                caps = {"extend": False, "validity": False, "fencing": False, "modes": ["exclusive"]}
                answer = {"type": "hello_ok", "library": "naive-setnx", "version": "1", "capabilities": caps}
            elif kind == "acquire":
                token = uuid.uuid4().hex
                if conn.call("SET", "naive:" + msg["lock"], token, "NX") == "OK":
                    with held_lock:
                        held[msg["lock"]] = token
                    answer = {"type": "ok", "expires": False, "token": token}
                else:
                    answer = {"type": "fail", "reason": "taken"}
            elif kind == "release":
                with held_lock:
                    token = held.pop(msg["lock"], None)
                if token is None:
                    answer = {"type": "fail", "reason": "not held"}
                elif conn.call("EVAL", RELEASE, 1, "naive:" + msg["lock"], token) == 1:
                    answer = {"type": "ok"}
                else:
                    answer = {"type": "fail", "reason": "the key is not ours"}
            elif kind == "write":
                answer = {"type": "ok", "value": msg["value"]}
            else:
                answer = {"type": "error", "message": f"unknown request {kind!r}"}
        except (OSError, RuntimeError) as exc:  # unknown outcome
            answer = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
        answer["in_reply_to"] = msg["id"]
        send(answer)
        print(f"{kind} {msg['id']}: {answer['type']}", file=sys.stderr, flush=True)


main()
