#!/usr/bin/env python3
"""Conformance check of lockstorm's adapters: speaks the worker protocol (version 2) to each
adapter, two workers at a time, against three local redis-servers it starts and stops.

For each adapter: hello (both workers); acquire ok (with a sane validity_ms if the worker
says it reports one); the second worker's acquire fails while the first holds; write echoes
the value; extend where supported; release; the second worker acquires and releases; the
first acquires again; a release of a lock not held fails; on EOF of stdin both workers exit
within 1 s, and so does a third whose acquire waits on the servers, stopped (SIGSTOP) for
the check. Every answer must come within 30 s (the ttl and 10 s) and every stdout line must be a
protocol message. A check that cannot run says why on a `skip` line.

    .venv/bin/python adapters/python/conformance.py [--only NAME ...] [--faketime wall|all]
    python3 adapters/python/conformance.py --worker "python3 my_worker.py"

`--worker` checks a worker that is not listed (a library author's, before its first
`lockstorm matrix --worker` run): one shell-quoted command, run from the current folder.

`--faketime` starts the workers under libfaketime, as lockstorm does for a client clock
fault (the findings are in adapters/README.md): `wall` fakes the wall clock only
(DONT_FAKE_MONOTONIC=1), `all` the monotonic clock too; `--faketime-spec` is the fake
time (default "+0 x2": no offset, running at twice the real rate).

Run it after `adapters/setup`; .ci/run does. Prints a line per check and ends with
`N passed, N failed, N skipped`. Exit status 0 all passed, 1 a check failed, 2 the
environment is missing something (no redis-server, no adapter set-up).
"""

import argparse
import ctypes
import json
import os
import queue
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / ".venv" / "bin" / "python"
RUST = ROOT / "adapters" / "rust" / "target" / "release"
EXIT_TIMEOUT_S = 1.0
# Idle time past a PHP worker's (shortened) 1 s socket timeout before its next request.
IDLE_PAST_TIMEOUT_S = 2.5
# Longer than any library's own default acquire waits (sherlock tries for 10 s, counted in
# tries, so a bit longer), so a held lock cannot expire under a second client's acquire.
TTL_MS = 20_000
# An answer comes within this: a library may wait out the whole ttl before it refuses
# (malkusch/lock spins for a timeout that is the ttl), and then some.
ANSWER_TIMEOUT_S = TTL_MS // 1000 + 10

# name -> (argv, whether it really locks (the example grants every acquire), why it cannot
# run with the monotonic clock faked, if it cannot: adapters/README.md, "Clock faults")
ADAPTERS = {
    "redis_py_lock": ([PY, ROOT / "adapters/python/redis_py_lock.py"], True, None),
    "pottery_redlock": ([PY, ROOT / "adapters/python/pottery_redlock.py"], True, None),
    "redlock_py": ([PY, ROOT / "adapters/python/redlock_py.py"], True, None),
    "aioredlock_redlock": ([PY, ROOT / "adapters/python/aioredlock_redlock.py"], True, None),
    "python_redis_lock": ([PY, ROOT / "adapters/python/python_redis_lock.py"], True, None),
    "redis_py_asyncio_lock": ([PY, ROOT / "adapters/python/redis_py_asyncio_lock.py"], True, None),
    "sherlock_lock": ([PY, ROOT / "adapters/python/sherlock_lock.py"], True, None),
    "walrus_lock": ([PY, ROOT / "adapters/python/walrus_lock.py"], True, None),
    "dramatiq_mutex": ([PY, ROOT / "adapters/python/dramatiq_mutex.py"], True, None),
    "tooz_redis": ([PY, ROOT / "adapters/python/tooz_redis.py"], True, None),
    "huey_lock": ([PY, ROOT / "adapters/python/huey_lock.py"], True, None),
    "portalocker_redis": ([PY, ROOT / "adapters/python/portalocker_redis.py"], True, None),
    "redisrwlock_rw": ([PY, ROOT / "adapters/python/redisrwlock_rw.py"], True, None),
    "celery_once_lock": ([PY, ROOT / "adapters/python/celery_once_lock.py"], True, None),
    "coredis_lock": ([PY, ROOT / "adapters/python/coredis_lock.py"], True, None),
    "rslock": (
        [RUST / "rslock_worker"],
        True,
        (
            "its timers (futures-timer, tokio) wait on absolute monotonic deadlines, which a faked"
            " monotonic clock puts decades ahead: the first retry delay never ends"
        ),
    ),
    "redlock_rs": ([RUST / "redlock_rs_worker"], True, None),
    "example_worker": ([sys.executable, ROOT / "adapters/python/example_worker.py"], False, None),
    # The PHP adapters (Debian's packages; adapters/php/), run by Debian's php
    "symfony_lock_redis": (["php", ROOT / "adapters/php/symfony_lock.php", "redis"], True, None),
    "symfony_lock_combined": (["php", ROOT / "adapters/php/symfony_lock.php", "combined"], True, None),
    "laravel_cache_lock": (["php", ROOT / "adapters/php/laravel_cache_lock.php", "phpredis"], True, None),
    "laravel_cache_lock_predis": (["php", ROOT / "adapters/php/laravel_cache_lock.php", "predis"], True, None),
    "malkusch_lock": (["php", ROOT / "adapters/php/malkusch_lock.php"], True, None),
    "symfony_semaphore": (["php", ROOT / "adapters/php/symfony_semaphore.php"], True, None),
}

# Adapters whose library does not say that a release found the lock not held: the check
# that such a release fails is skipped for them, with the reason.
RELEASE_NOT_HELD_PASSES = {
    name: (
        "Symfony's Lock::release() returns nothing and throws only if the key is still there"
        " after the delete (Symfony/Component/Lock/Lock.php, release), so a release of a lock"
        " not held passes"
    )
    for name in ("symfony_lock_redis", "symfony_lock_combined")
} | {
    "symfony_semaphore": (
        "Symfony's Semaphore::release() deletes the token and says nothing about whether it was"
        " there (Symfony/Component/Semaphore/Semaphore.php, release), so a release of a lock not"
        " held passes"
    )
}

# Adapters whose library's refused acquire waits until the holder's ttl is over: the
# holder's release after it is expected to fail (the library says the hold ran past its
# ttl), and the check says why.
REFUSAL_WAITS_OUT_THE_TTL = {
    "malkusch_lock": (
        "PHPRedisMutex spins until its timeout, which is the ttl (Malkusch/Lock/classes/util/Loop.php,"
        " Loop::execute), so the second client's refusal comes when the holder's ttl is over, and the"
        " holder's unlock() says ExecutionOutsideLockException"
    )
}


class EnvironmentMissing(Exception):
    pass


def die_with_us():
    """Runs in each child before exec: the kernel kills it if this script dies, even by
    SIGKILL (PR_SET_PDEATHSIG), so no server or worker outlives a check."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


class Servers:
    """Three redis-servers on free loopback ports, in a temporary directory."""

    def __init__(self, count=3):
        binary = os.environ.get("LOCKSTORM_REDIS_SERVER", "redis-server")
        if shutil.which(binary) is None:
            raise EnvironmentMissing(f"{binary} not found (apt-get install redis-server)")
        self.dir = tempfile.TemporaryDirectory(prefix="conformance-")
        self.procs, self.ports = [], []
        for i in range(count):
            port = free_port()
            argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            log = open(Path(self.dir.name) / f"redis{i}.log", "w")
            self.procs.append(
                subprocess.Popen(argv, cwd=self.dir.name, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_us)
            )
            self.ports.append(port)
        for port in self.ports:
            wait_for_ping(port)

    def addresses(self):
        return [f"127.0.0.1:{port}" for port in self.ports]

    def pause(self):
        for proc in self.procs:
            proc.send_signal(signal.SIGSTOP)

    def resume(self):
        for proc in self.procs:
            proc.send_signal(signal.SIGCONT)

    def flush(self):
        for port in self.ports:
            command(port, b"FLUSHALL\r\n")

    def stop(self):
        for proc in self.procs:
            proc.kill()
            proc.wait()
        self.dir.cleanup()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(port, raw):
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(raw)
        return s.recv(64)


def wait_for_ping(port):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if command(port, b"PING\r\n").startswith(b"+PONG"):
                return
        except OSError:
            time.sleep(0.05)
    raise EnvironmentMissing(f"redis-server on port {port} did not answer PING within 10 s")


class Worker:
    """One adapter process; answers arrive on a reader thread so a hang cannot block us."""

    def __init__(self, argv, client, log_dir, env=None):
        self.argv = [str(a) for a in argv]
        self.log = open(Path(log_dir) / f"worker{client}.log", "w")
        self.proc = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            preexec_fn=die_with_us,
        )
        self.next_id = 0
        self.lines = queue.SimpleQueue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, kind, **fields):
        msg = {"type": kind, "id": self.next_id, **fields}
        self.next_id += 1
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        return msg

    def request(self, kind, **fields):
        msg = self.send(kind, **fields)
        try:
            line = self.lines.get(timeout=ANSWER_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"no answer to {kind} within {ANSWER_TIMEOUT_S} s") from None
        if line is None:
            raise AssertionError(f"worker exited (status {self.proc.wait()}) instead of answering {kind}")
        try:
            answer = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a protocol message on stdout: {line[:200]!r}") from None
        if answer.get("in_reply_to") != msg["id"]:
            raise AssertionError(f"answer to id {answer.get('in_reply_to')!r}, asked {msg['id']}: {answer}")
        return answer

    def close_and_time_exit(self):
        """Closes stdin and returns how long the process took to exit (None: not in time)."""
        start = time.monotonic()
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return None
        return time.monotonic() - start

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def check(self, adapter, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"ok    {adapter}: {name}")
        else:
            self.failed += 1
            print(f"FAIL  {adapter}: {name}: {detail}")
        sys.stdout.flush()
        return ok

    def skip(self, adapter, name, why):
        self.skipped += 1
        print(f"skip  {adapter}: {name}: {why}")


def expect(answer, kind):
    if answer.get("type") != kind:
        raise AssertionError(f"expected {kind}, got {answer}")
    return answer


def check_validity(answer, capabilities):
    """ok answers carry a validity in (0, ttl] exactly when the worker says they do."""
    validity = answer.get("validity_ms")
    if capabilities["validity"]:
        if not isinstance(validity, (int, float)) or not 0 < validity <= TTL_MS:
            raise AssertionError(f"validity_ms {validity!r} not in (0, {TTL_MS}]: {answer}")
    elif validity is not None:
        raise AssertionError(f"validity_ms given, capabilities say no validity: {answer}")


def hello(worker, client, nodes):
    return worker.request(
        "hello",
        protocol=2,
        client=client,
        clients=2,
        nodes=nodes,
        locks=["L0"],
        ttl_ms=TTL_MS,
        seed=7,
        # lockstorm's own algorithm's parameters, which the adapters do not pass on (each
        # library keeps its defaults: a refused acquire takes at most about a second); the
        # retry window, 2 x 50 ms, bounds the acquire of the libraries whose default blocks
        # without bound (python-redis-lock rounds it up to 1 s)
        algorithm={
            "kind": "redlock",
            "quorum": 2,
            "retry_count": 2,
            "retry_delay_ms": {"min": 0, "max": 50},
            "drift_factor": 0.01,
            "request_timeout_ms": 200,
            "fencing": False,
        },
        a_field_from_the_future={"ignored": True},
    )


LIBFAKETIME = [
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
]


def faketime_env(mode, spec, log_root):
    """The workers' environment under libfaketime, as lockstorm sets it for a node: its
    shim (src/real/faketime_shim.c, built here with cc) preloaded before libfaketime, the
    fake time in a file; `wall` fakes the wall clock only, `all` the monotonic clock too."""
    library = next((p for p in LIBFAKETIME if Path(p).is_file()), None)
    if library is None:
        raise EnvironmentMissing("libfaketime not found (apt-get install faketime)")
    shim = Path(log_root) / "faketime_shim.so"
    cc = os.environ.get("CC", "cc")
    built = subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", shim, ROOT / "src/real/faketime_shim.c", "-ldl"],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        raise EnvironmentMissing(f"{cc} could not build the faketime shim: {built.stderr.strip()}")
    rc = Path(log_root) / "faketime.rc"
    rc.write_text(spec + "\n")
    return dict(
        os.environ,
        LD_PRELOAD=f"{shim}:{library}",
        FAKETIME_TIMESTAMP_FILE=str(rc),
        FAKETIME_NO_CACHE="1",
        DONT_FAKE_MONOTONIC="1" if mode == "wall" else "0",
    )


def conform(name, argv, locks, servers, report, log_dir, env=None):
    """Runs the checks on one adapter with two workers, A and B."""
    missing = [str(a) for a in argv if isinstance(a, Path) and not a.exists()]
    if not isinstance(argv[0], Path) and shutil.which(argv[0]) is None:
        missing.append(f"{argv[0]} (not on PATH)")
    if missing:
        report.check(name, "adapter is set up", False, f"missing {', '.join(missing)}: run adapters/setup")
        return
    servers.flush()
    a, b = Worker(argv, 0, log_dir, env), Worker(argv, 1, log_dir, env)
    step = "hello"
    try:
        answers = [hello(w, i, servers.addresses()) for i, w in enumerate((a, b))]
        for answer in answers:
            expect(answer, "hello_ok")
            caps = answer["capabilities"]
            assert answer.get("library") and answer.get("version"), f"hello_ok without library/version: {answer}"
            assert caps.get("modes") and "exclusive" in caps["modes"], f"no exclusive mode: {answer}"
        report.check(name, f"hello ({answer['library']} {answer['version']})", True)

        step = "acquire"
        check_validity(expect(a.request("acquire", lock="L0", mode="exclusive"), "ok"), caps)
        report.check(name, "acquire ok", True)

        if locks:
            step = "second client's acquire while held"
            refused = expect(b.request("acquire", lock="L0", mode="exclusive"), "fail")
            token = refused.get("token", "")
            assert isinstance(token, str), f"a fail's token must be a string: {refused}"
            report.check(name, "a second client's acquire fails while held", True)
        else:
            report.skip(name, "a second client's acquire fails while held", "a fake lock: grants every acquire")

        step = "write"
        echoed = expect(a.request("write", lock="L0", value="c0-w1"), "ok")
        assert echoed.get("value") == "c0-w1", f"write echoed {echoed}"
        assert ("fence" in echoed) == caps["fencing"], f"fence present iff fencing: {echoed}"
        report.check(name, "write echoes the value", True)

        if caps["extend"]:
            step = "extend"
            check_validity(expect(a.request("extend", lock="L0"), "ok"), caps)
            report.check(name, "extend ok while held", True)
        else:
            report.skip(name, "extend ok while held", "capabilities say the library has no extension")

        step = "release"
        if name in REFUSAL_WAITS_OUT_THE_TTL:
            expect(a.request("release", lock="L0"), "fail")
            report.check(name, f"release fails after the ttl: {REFUSAL_WAITS_OUT_THE_TTL[name]}", True)
            servers.flush()  # the keys it left to expire (they may outlive a faked clock's ttl)
        else:
            expect(a.request("release", lock="L0"), "ok")
            report.check(name, "release ok", True)

        step = "second client's acquire after release"
        check_validity(expect(b.request("acquire", lock="L0", mode="exclusive"), "ok"), caps)
        expect(b.request("release", lock="L0"), "ok")
        report.check(name, "the second client acquires and releases after the release", True)

        step = "acquire again"
        check_validity(expect(a.request("acquire", lock="L0", mode="exclusive"), "ok"), caps)
        expect(a.request("release", lock="L0"), "ok")
        report.check(name, "the first client acquires again", True)

        if name in RELEASE_NOT_HELD_PASSES:
            report.skip(name, "a release of a lock not held fails", RELEASE_NOT_HELD_PASSES[name])
        elif locks:
            step = "release when not held"
            expect(a.request("release", lock="L0"), "fail")
            report.check(name, "a release of a lock not held fails", True)
        else:
            report.skip(name, "a release of a lock not held fails", "a fake lock: holds nothing")

        if argv[0] == "php":
            # PHP gives up a socket read after default_socket_timeout with no bytes; a
            # worker with nothing to do for that long (an idle client while the probe
            # runs) must not take that for EOF. Shortened to 1 s here.
            step = "answers after idling past its socket timeout"
            idle = Worker([argv[0], "-d", "default_socket_timeout=1", *argv[1:]], 3, log_dir, env)
            try:
                expect(hello(idle, 3, servers.addresses()), "hello_ok")
                time.sleep(IDLE_PAST_TIMEOUT_S)
                expect(idle.request("write", lock="L0", value="idle"), "ok")
            finally:
                idle.kill()
            report.check(name, "answers after idling past its socket timeout", True)

        step = "shutdown on EOF"
        slow = [w for w in (a, b) if w.close_and_time_exit() is None]
        report.check(name, f"exits within {EXIT_TIMEOUT_S:.0f} s of EOF", not slow, "still running after it")

        step = "shutdown on EOF while a request blocks"
        c = Worker(argv, 2, log_dir, env)
        expect(hello(c, 2, servers.addresses()), "hello_ok")
        servers.pause()  # every request now waits on a stopped server
        try:
            c.send("acquire", lock="L0", mode="exclusive")
            exited = c.close_and_time_exit() is not None
        finally:
            servers.resume()
            c.kill()
        report.check(
            name, f"exits within {EXIT_TIMEOUT_S:.0f} s of EOF while a request blocks", exited, "still running after it"
        )
    except AssertionError as exc:
        report.check(name, step, False, f"{exc} (worker logs in {log_dir})")
        failed = True
    else:
        failed = False
    finally:
        a.kill()
        b.kill()
    if failed:
        print_log_tails(log_dir)


def print_log_tails(log_dir, lines=20):
    """After a failed check, the last lines each worker wrote on stderr (the adapters log
    the library's own errors there), so a failure in CI, whose logs are gone with its
    machine, can be read from its output."""
    for log in sorted(Path(log_dir).glob("worker*.log")):
        tail = log.read_text(errors="replace").splitlines()[-lines:]
        print(f"      {log.name}, last {len(tail)} lines:")
        for line in tail:
            print(f"      | {line}")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(ADAPTERS), help="check only these adapters")
    parser.add_argument("--faketime", choices=["wall", "all"], help="run the workers under libfaketime")
    parser.add_argument("--faketime-spec", default="+0 x2", help='the fake time (default "+0 x2")')
    parser.add_argument(
        "--worker",
        metavar="COMMAND",
        help='check this worker instead of the listed adapters: one shell-quoted command, e.g. "python3 my_worker.py"',
    )
    args = parser.parse_args()
    names = args.only or list(ADAPTERS)
    if args.worker:
        argv = shlex.split(args.worker)
        if not argv:
            parser.error("--worker: an empty command")
        ADAPTERS["worker"] = (argv, True, None)
        names = ["worker"]
    # Ctrl-C or SIGTERM: stop the servers and workers through the finally blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    report = Report()
    try:
        servers = Servers()
    except EnvironmentMissing as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    log_root = tempfile.mkdtemp(prefix="conformance-logs-")
    try:
        env = faketime_env(args.faketime, args.faketime_spec, log_root) if args.faketime else None
    except EnvironmentMissing as exc:
        servers.stop()
        print(f"conformance: {exc}", file=sys.stderr)
        return 2
    try:
        for name in names:
            argv, locks, no_fake_monotonic = ADAPTERS[name]
            if args.faketime == "all" and no_fake_monotonic:
                report.skip(name, "every check", f"cannot run with the monotonic clock faked: {no_fake_monotonic}")
                continue
            log_dir = Path(log_root) / name
            log_dir.mkdir()
            conform(name, argv, locks, servers, report, log_dir, env)
    finally:
        servers.stop()
    if not report.failed and not os.environ.get("CONFORMANCE_KEEP_LOGS"):
        shutil.rmtree(log_root)
    print(f"{report.passed} passed, {report.failed} failed, {report.skipped} skipped")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
