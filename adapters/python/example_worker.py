#!/usr/bin/env python3
"""The smallest lockstorm worker: a fake lock that never touches Redis. Copy it to start.

It speaks the protocol (docs/worker-protocol.md; it uses what version 1 has and accepts any
later version, which only adds) with nothing but the standard library: read one JSON request
per line on stdin, write one JSON answer per line on stdout (flushed), log on stderr, and
exit when stdin closes. Every acquire is granted, so under lockstorm it shows what a
violation looks like. To put a real library behind the protocol, replace the bodies of
`acquire`, `release` and `extend` with calls to it (see the other files in this folder).
"""

import json
import sys
import uuid


def acquire(lock, mode):
    return {"type": "ok", "token": uuid.uuid4().hex}  # add "validity_ms" if your library gives one


def release(lock):
    return {"type": "ok"}  # {"type": "fail", "reason": "..."} if the library says it did not hold it


def extend(lock):
    return {"type": "ok"}


def answer(msg):
    kind = msg["type"]
    if kind == "hello":
        capabilities = {"extend": True, "validity": False, "fencing": False, "modes": ["exclusive"]}
        return {"type": "hello_ok", "library": "example", "version": "1", "capabilities": capabilities}
    if kind == "acquire":
        return acquire(msg["lock"], msg.get("mode", "exclusive"))
    if kind == "release":
        return release(msg["lock"])
    if kind == "extend":
        return extend(msg["lock"])
    if kind == "write":
        return {"type": "ok", "value": msg["value"]}  # add "fence" if your library issues tokens
    return {"type": "error", "message": f"unknown request type {kind!r}"}


for line in sys.stdin:
    request = json.loads(line)
    try:
        reply = answer(request)
    except Exception as exc:  # an exception is an unknown outcome
        reply = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
    reply["in_reply_to"] = request["id"]
    print(json.dumps(reply), flush=True)
    print(f"answered {request['type']} {request['id']}", file=sys.stderr)
