#!/usr/bin/env python3
"""A worker that breaks the protocol on purpose, for lockstorm's error tests.

Usage: misbehave.py MODE. It answers the hello properly (except in `no-hello`), then on
the first acquire request:
  garbage   prints a line that is not JSON
  crash     writes to stderr and exits with status 3
  silent    never answers (and keeps reading)
  wrong-id  answers an id it was not asked
  bad-node  says its hold is on node 7 (the hello gave it one node)
  old       refuses the hello: it needs protocol 9
  no-hello  fails before the hello, like a library that does not import
  mark:PATH behaves, and creates PATH at its first acquire (the run has started)
  early-lost  says lock L0 lost right after its hello_ok, before any request (the
            protocol allows a `lost` at any time)
Every other request gets a plain `ok` (no Redis behind it: these tests are about the
protocol and the processes).
"""
import json
import sys

mode = sys.argv[1]
if mode == "no-hello":
    print("ModuleNotFoundError: No module named 'no_such_library'", file=sys.stderr)
    sys.exit(1)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    kind, rid = request["type"], request["id"]
    if kind == "hello" and mode == "old":
        send({"type": "error", "in_reply_to": rid, "message": "this worker needs protocol 9, lockstorm speaks %d" % request["protocol"]})
        sys.exit(0)
    elif kind == "hello":
        send({"type": "hello_ok", "in_reply_to": rid, "library": "misbehave", "version": mode})
        if mode == "early-lost":
            send({"type": "lost", "lock": "L0", "reason": "said at once, holding nothing"})
    elif kind == "acquire" and mode == "garbage":
        send_raw = "this is not a protocol message"
        sys.stdout.write(send_raw + "\n")
        sys.stdout.flush()
    elif kind == "acquire" and mode == "crash":
        print("misbehave: crashing on purpose", file=sys.stderr)
        sys.exit(3)
    elif kind == "acquire" and mode.startswith("mark:"):
        open(mode[len("mark:"):], "a").close()
        send({"type": "ok", "in_reply_to": rid})
    elif kind == "acquire" and mode == "silent":
        continue
    elif kind == "acquire" and mode == "wrong-id":
        send({"type": "ok", "in_reply_to": rid + 100})
    elif kind == "acquire" and mode == "bad-node":
        send({"type": "ok", "in_reply_to": rid, "nodes": [0, 7]})
    else:
        send({"type": "ok", "in_reply_to": rid, "value": request.get("value")})
