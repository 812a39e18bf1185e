#!/usr/bin/env python3
"""A worker that leaves things behind, for lockstorm's cleanup tests (issue 21).

Usage: leaves_things.py ACTION... where each ACTION runs at the hello:
  fork:PATH     forks a helper that stays in the worker's process group and sleeps;
                the helper appends its pid to PATH
  setsid:PATH   the same, but the helper calls setsid() first (it leaves the group)
  unmarked:PATH the same, and the helper then drops lockstorm's mark from its
                environment (`env -u LOCKSTORM_OWNER sleep 600`), as a daemon that
                clears its environment or a redis-server rewriting its title does
  redis:PATH    the same as setsid, and the helper becomes a redis-server (no port, a
                unix socket beside PATH), whose process title overwrites the
                environment block with the mark
  flood:BYTES   writes a line FIRST-LINE, BYTES of filler, then LAST-LINE to stderr
Every request gets a plain `ok` (no Redis behind it: these tests are about processes
and files).
"""
import json
import os
import sys
import time


def helper(path, leave_group, unmarked=False, redis=False):
    pid = os.fork()
    if pid != 0:
        return
    if leave_group:
        os.setsid()
    with open(path, "a") as f:
        f.write(f"{os.getpid()}\n")
    if unmarked:
        os.execvp("env", ["env", "-u", "LOCKSTORM_OWNER", "sleep", "600"])
    if redis:
        # Its log is not the worker's protocol: away from the worker's stdout.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        # No TCP port, but a unix socket beside PATH: a redis-server that listens nowhere
        # exits at once ("Configured to not listen anywhere"), and would test nothing.
        sock = f"{path}.{os.getpid()}.sock"
        os.execvp(
            "redis-server",
            ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no"],
        )
    time.sleep(600)
    os._exit(0)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    kind, rid = request["type"], request["id"]
    if kind == "hello":
        for action in sys.argv[1:]:
            what, _, arg = action.partition(":")
            if what in ("fork", "setsid", "unmarked", "redis"):
                helper(arg, what != "fork", what == "unmarked", what == "redis")
            elif what == "flood":
                sys.stderr.write("FIRST-LINE\n")
                chunk = "x" * 1023 + "\n"
                for _ in range(int(arg) // 1024):
                    sys.stderr.write(chunk)
                sys.stderr.write("LAST-LINE\n")
                sys.stderr.flush()
        send({"type": "hello_ok", "in_reply_to": rid, "library": "leaves-things", "version": "1"})
    else:
        send({"type": "ok", "in_reply_to": rid, "value": request.get("value")})
