#!/usr/bin/env python3
"""Defaults check of lockstorm's adapters: each library runs at its own defaults, and each
adapter's header and `options` line in adapters/adapters.toml say which.

For each library it reads the defaults from the installed code: the Python libraries in
.venv by import (`inspect.signature`, class attributes, attrs fields), the Rust crates
(rslock, redlock, and the two redis crates they use) from their sources in the cargo
registry, at the versions adapters/rust/Cargo.lock pins, and the PHP libraries (Debian's
packages under /usr/share/php) through adapters/php/defaults.php, which reads them by
reflection and from their source and builds the PHP adapters' objects from the same hello.
Then, per adapter:

- **stated**: every default, written as the check words it ("5 s socket timeout",
  "3 tries", ...), appears in the adapter's `options` line and in its header (module
  docstring or `//!` lines);
- **kept**: the Python adapter, given a hello whose retry, delay and timeout parameters
  all differ from any library's defaults, builds library objects equal, setting by
  setting, to ones built with nothing but the nodes and the ttl (and, for a library whose
  default acquire blocks without bound, the bound: the hello's retry window); a Rust
  adapter calls none of its crate's setters (`pub fn ...(&mut self, ...)`) and builds
  its manager with `new(params.redis_urls())`; a PHP adapter's objects (stores, locks,
  mutexes, client configuration) hold the libraries' defaults but for the ttl, and its
  source makes the library calls at their defaults (adapters/php/defaults.php).

    .venv/bin/python adapters/python/defaults_check.py

Prints a line per check and ends with `N passed, N failed`. Exit status 0 all passed, 1 a
check failed, 2 the environment is missing something (adapters/setup not run).
Nothing connects to Redis: building the objects opens no connection.
"""

import ast
import inspect
import math
import os
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "adapters" / "python"
RUST = ROOT / "adapters" / "rust"
sys.path.insert(0, str(PYTHON))

# Every retry, delay and timeout differs from every library's default, so an adapter that
# passed one on would show.
HELLO = {
    "type": "hello",
    "id": 0,
    "protocol": 2,
    "client": 0,
    "clients": 2,
    "nodes": ["127.0.0.1:6391", "127.0.0.1:6392", "127.0.0.1:6393"],
    "locks": ["L0"],
    "ttl_ms": 10_000,
    "seed": 7,
    "algorithm": {
        "kind": "redlock",
        "quorum": 2,
        "retry_count": 51,
        "retry_delay_ms": {"min": 5, "max": 20},
        "drift_factor": 0.05,
        "request_timeout_ms": 50,
        "fencing": False,
    },
}
TTL_S = HELLO["ttl_ms"] / 1000
WINDOW_S = 51 * 20 / 1000  # the hello's retry window: the bound of a blocking acquire
FIRST = ("127.0.0.1", 6391)
BLOCKS_WITHOUT_BOUND = "the hello's retry window"  # how an options line names the bound


class EnvironmentMissing(Exception):
    pass


class Report:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, adapter, name, problems):
        if problems:
            self.failed += 1
            print(f"FAIL  {adapter}: {name}:")
            for problem in problems:
                print(f"      {problem}")
        else:
            self.passed += 1
            print(f"ok    {adapter}: {name}")
        sys.stdout.flush()


def seconds(value, what):
    return f"no {what}" if value is None else f"{value:g} s {what}"


def duration(ms):
    return f"{ms:g} ms" if ms < 1000 else f"{ms / 1000:g} s"


def defaults_of(function):
    return {name: p.default for name, p in inspect.signature(function).parameters.items()}


# --- The Python libraries' defaults, read from the installed code ---------------------------


def redis_py():
    """redis-py's client: redis/client.py, Redis.__init__ (values in redis/_defaults.py)."""
    import redis

    d = defaults_of(redis.Redis.__init__)
    retry = d["retry"]
    errors = {e.__name__ for e in retry._supported_errors}
    facts = [
        f"redis-py {version('redis')}",
        seconds(d["socket_timeout"], "socket timeout"),
        seconds(d["socket_connect_timeout"] or d["socket_timeout"], "connect timeout"),
    ]
    if retry.get_retries():
        backoff = retry._backoff
        facts.append(f"{retry.get_retries()} retries")
        facts.append(f"base {backoff._base * 1000:g} ms, cap {backoff._cap:g} s")
        if not {"ConnectionError", "TimeoutError"} <= errors:
            facts.append(f"retries on {', '.join(sorted(errors))}")
    else:
        facts.append("no retries")
    return facts


def redis_py_lock_facts():
    """redis-py's Lock: redis/client.py, Redis.lock; redis/lock.py, Lock.acquire."""
    import redis

    d = defaults_of(redis.Redis.lock)
    facts = redis_py() + [f"sleep {d['sleep']:g} s"]
    if d["blocking"] and d["blocking_timeout"] is None:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


def pottery_facts():
    """pottery/redlock.py: Redlock.__init__, its class constants, Redlock.acquire."""
    from pottery import Redlock

    init, acquire = defaults_of(Redlock.__init__), defaults_of(Redlock.acquire)
    facts = redis_py() + [
        f"{init['num_extensions']} extensions per hold",
        f"random sleep below {Redlock._RETRY_DELAY:g} s",
        "Redis errors count as no" if not init["raise_on_redis_errors"] else "Redis errors raise",
    ]
    if acquire["blocking"] and acquire["timeout"] == -1:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


def redlock_py_facts():
    """redlock/__init__.py: Redlock.__init__ (`retry_count or default_retry_count`)."""
    from redlock import Redlock

    return redis_py() + [
        f"{Redlock.default_retry_count} tries",
        f"a {Redlock.default_retry_delay:g} s sleep after each failed try",
    ]


def aioredlock_facts():
    """aioredlock/algorithm.py: the Aioredlock attrs fields; aioredis create_redis_pool."""
    import aioredis
    import attr
    from aioredlock import Aioredlock

    fields = attr.fields(Aioredlock)
    pool = defaults_of(aioredis.create_redis_pool)
    return [
        f"aioredis {version('aioredis')}",
        seconds(pool["timeout"], "connect timeout"),
        f"{fields.retry_count.default} tries",
        f"random delay of {fields.retry_delay_min.default:g} to {fields.retry_delay_max.default:g} s",
    ]


def python_redis_lock_facts():
    """redis_lock/__init__.py: Lock.__init__ and Lock.acquire."""
    import redis_lock

    init, acquire = defaults_of(redis_lock.Lock.__init__), defaults_of(redis_lock.Lock.acquire)
    facts = redis_py() + [
        "no auto-renewal" if not init["auto_renewal"] else "auto-renewal",
        f"signal_expire {init['signal_expire']} ms",
    ]
    if acquire["blocking"] and acquire["timeout"] is None:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


def redis_py_asyncio():
    """redis-py's asyncio client: redis/asyncio/client.py, Redis.__init__."""
    import redis.asyncio

    d = defaults_of(redis.asyncio.Redis.__init__)
    retry = d["retry"]
    backoff = retry._backoff
    return [
        f"redis-py {version('redis')} (redis.asyncio)",
        seconds(d["socket_timeout"], "socket timeout"),
        seconds(d["socket_connect_timeout"] or d["socket_timeout"], "connect timeout"),
        f"{retry.get_retries()} retries" if retry.get_retries() else "no retries",
        f"base {backoff._base * 1000:g} ms, cap {backoff._cap:g} s",
    ]


def redis_py_asyncio_lock_facts():
    """redis-py's asyncio Lock: redis/asyncio/client.py, Redis.lock."""
    import redis.asyncio

    d = defaults_of(redis.asyncio.Redis.lock)
    facts = redis_py_asyncio() + [f"sleep {d['sleep']:g} s"]
    if d["blocking"] and d["blocking_timeout"] is None:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


def sherlock_facts():
    """sherlock/__init__.py, _Configuration.__init__ (the global defaults every lock takes);
    sherlock/lock.py, BaseLock.acquire (`blocking=True`)."""
    import sherlock

    c = sherlock._configuration
    blocking = defaults_of(sherlock.RedisLock.acquire)["blocking"]
    return redis_py() + [
        "no namespace" if c.namespace is None else f"namespace {c.namespace!r}",
        f"a try every {c.retry_interval:g} s" if blocking else "one try",
        f"{c.timeout:g} s timeout",
    ]


def walrus_facts():
    """walrus/lock.py, Lock.__init__ and Lock.acquire (no timeout parameter)."""
    from walrus import Lock

    acquire = defaults_of(Lock.acquire)
    facts = redis_py() + ["32 random bytes"]
    if acquire["block"] and "timeout" not in acquire:
        facts.append("block=False, one try")  # blocks without bound, and nothing bounds it
    return facts


def dramatiq_facts():
    """dramatiq/rate_limits/concurrent.py, ConcurrentRateLimiter.__init__;
    rate_limiter.py, RateLimiter.acquire."""
    from dramatiq.rate_limits import ConcurrentRateLimiter

    init, acquire = defaults_of(ConcurrentRateLimiter.__init__), defaults_of(ConcurrentRateLimiter.acquire)
    return redis_py() + [
        f"limit {init['limit']}",
        "raise_on_failure=True" if acquire["raise_on_failure"] else "raise_on_failure=False",
        "one try",
    ]


def tooz_facts():
    """tooz/drivers/redis.py: RedisDriver.CLIENT_DEFAULT_SOCKET_TO, _make_client (only the
    socket timeout is set), _handle_failures, RedisLock.acquire; tooz/coordination.py,
    CoordinationDriver.start."""
    import redis
    from tooz import coordination
    from tooz.drivers import redis as tooz_redis

    client = defaults_of(redis.Redis.__init__)
    retry = client["retry"]
    start = defaults_of(coordination.CoordinationDriver.start)
    acquire = defaults_of(tooz_redis.RedisLock.acquire)
    lock = defaults_of(redis.Redis.lock)
    facts = [
        f"tooz's {tooz_redis.RedisDriver.CLIENT_DEFAULT_SOCKET_TO} s socket timeout",
        f"redis-py {version('redis')}'s {client['socket_connect_timeout']:g} s connect timeout",
        f"{retry.get_retries()} retries",
        f"base {retry._backoff._base * 1000:g} ms, cap {retry._backoff._cap:g} s",
        f"retries a connection error {defaults_of(tooz_redis._handle_failures)['n_tries']} times",
        "start_heart=False" if not start["start_heart"] else "start_heart=True",
        f"sleep {lock['sleep']:g} s",
    ]
    if acquire["blocking"] is True and acquire["timeout"] is None:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


def huey_facts():
    """huey/storage.py, RedisStorage.__init__ (a ConnectionPool from host and port: the
    connection's defaults, redis/connection.py, AbstractConnection.__init__); huey/api.py,
    Huey.__init__ and Huey.lock_task."""
    import huey
    from redis.connection import AbstractConnection

    conn = defaults_of(AbstractConnection.__init__)
    retries = conn["retry"].get_retries() if conn["retry"] is not None else 0
    return [
        f"redis-py {version('redis')}'s connection defaults",
        seconds(conn["socket_timeout"], "socket timeout"),
        seconds(conn["socket_connect_timeout"], "connect timeout"),
        f"{retries} retries" if retries else "no retries",
        f"name '{defaults_of(huey.Huey.__init__)['name']}'",
        "ttl=None, no expiry" if defaults_of(huey.Huey.lock_task)["ttl"] is None else "a ttl",
        "one try",
    ]


def portalocker_facts():
    """portalocker/redis.py: RedisLock.DEFAULT_REDIS_KWARGS and RedisLock.__init__;
    portalocker/utils.py: DEFAULT_TIMEOUT, DEFAULT_CHECK_INTERVAL (LockBase.__init__)."""
    from portalocker import redis as pl_redis
    from portalocker import utils

    init = defaults_of(pl_redis.RedisLock.__init__)
    kwargs = pl_redis.RedisLock.DEFAULT_REDIS_KWARGS
    facts = redis_py() + [
        f"health_check_interval {kwargs['health_check_interval']:g} s",
        f"timeout {utils.DEFAULT_TIMEOUT:g} s",
        f"check_interval {utils.DEFAULT_CHECK_INTERVAL:g} s",
        f"unavailable_timeout {init['unavailable_timeout']:g} s",
        f"thread_sleep_time {init['thread_sleep_time']:g} s",
    ]
    if init["self_check_interval"] is None:
        facts.append("no self-check")
    if not init["fencing"]:
        facts.append("no fencing")
    if init["interrupt_on_lost"] is None:  # True in 4.x: the adapter's one departure
        facts.append("interrupt_on_lost=False")
    return facts


def redisrwlock_facts():
    """redisrwlock/redisrwlock.py: RwlockClient.__init__ and RwlockClient.lock."""
    from redisrwlock import RwlockClient

    init, lock = defaults_of(RwlockClient.__init__), defaults_of(RwlockClient.lock)
    return redis_py() + [
        f"node '{init['node']}'",
        f"timeout={lock['timeout']:g}, one try" if lock["timeout"] == 0 else f"timeout={lock['timeout']:g}",
    ]


def celery_once_facts():
    """celery_once/backends/redis.py: Redis.__init__ (settings.get defaults)."""
    from celery_once.backends import Redis

    source = inspect.getsource(Redis.__init__)
    blocking = re.search(r'settings\.get\("blocking", (\w+)\)', source)
    timeout = re.search(r'settings\.get\("blocking_timeout", ([\d.]+)\)', source)
    if blocking is None or timeout is None:
        raise AssertionError("celery_once Redis.__init__ no longer reads as this check expects: read it again")
    facts = redis_py() + [f"blocking {blocking.group(1)}"]
    facts.append("one try" if blocking.group(1) == "False" else f"blocking_timeout {timeout.group(1)} s")
    return facts


def coredis_facts():
    """coredis/client/basic.py, Redis.__init__; coredis/patterns/lock/__init__.py,
    Lock.__init__."""
    import coredis
    from coredis.patterns.lock import Lock

    client, lock = defaults_of(coredis.Redis.__init__), defaults_of(Lock.__init__)
    policy = client["retry_policy"]
    facts = [
        f"coredis {version('coredis')}",
        seconds(client["stream_timeout"], "stream timeout"),
        seconds(client["connect_timeout"], "connect timeout"),
        f"{policy._RetryPolicy__retries} retries {policy._ConstantRetryPolicy__delay:g} s apart",
        f"sleep {lock['sleep']:g} s",
    ]
    if lock["blocking"] and lock["blocking_timeout"] is None:
        facts.append(BLOCKS_WITHOUT_BOUND)
    return facts


# --- Kept: the adapter's objects against ones built with the library's defaults ------------


def differences(what, actual, expected, names):
    get = (lambda o, n: o[n]) if isinstance(actual, dict) else getattr
    return [
        f"{what}.{n} = {get(actual, n)!r}, the library's default gives {get(expected, n)!r}"
        for n in names
        if get(actual, n) != get(expected, n)
    ]


CLIENT_SETTINGS = [
    "host",
    "port",
    "socket_timeout",
    "socket_connect_timeout",
    "socket_keepalive",
    "socket_keepalive_options",
    "retry",
    "retry_on_error",
    "health_check_interval",
    "protocol",
    "db",
]


def client_differences(what, client, address):
    import redis

    kwargs = client.connection_pool.connection_kwargs
    default = redis.Redis(host=address[0], port=address[1])
    problems = differences(what, kwargs, default.connection_pool.connection_kwargs, CLIENT_SETTINGS)
    pool = what + ".connection_pool"
    problems += differences(pool, client.connection_pool, default.connection_pool, ["max_connections"])
    if type(client.connection_pool) is not type(default.connection_pool):
        problems.append(f"{what} uses a {type(client.connection_pool).__name__}")
    return problems


def nodes():
    return [(h, int(p)) for h, p in (a.rsplit(":", 1) for a in HELLO["nodes"])]


def kept_redis_py_lock():
    from redis_py_lock import RedisPyLock

    a = RedisPyLock()
    a.hello(HELLO)
    lock = a.lock("L0")
    expected = a.client.lock("L0", timeout=TTL_S, blocking_timeout=WINDOW_S)
    names = ["name", "timeout", "sleep", "blocking", "blocking_timeout", "thread_local", "raise_on_release_error"]
    return client_differences("client", a.client, FIRST) + differences("Lock", lock, expected, names)


def kept_pottery():
    from pottery import Redlock
    from pottery_redlock import PotteryRedlock

    a = PotteryRedlock()
    a.hello(HELLO)
    problems = [p for m, n in zip(a.masters, nodes()) for p in client_differences(f"master {n[1]}", m, n)]
    expected = Redlock(key="L0", masters=a.masters, auto_release_time=TTL_S)
    names = ["key", "auto_release_time", "num_extensions", "raise_on_redis_errors"]
    names += ["context_manager_blocking", "context_manager_timeout"]
    problems += differences("Redlock", a.lock("L0"), expected, names)
    if a.window_s != WINDOW_S:
        problems.append(f"acquire timeout {a.window_s!r}, the hello's retry window is {WINDOW_S!r}")
    return problems


def kept_redlock_py():
    from redlock import Redlock
    from redlock_py import RedlockPy

    a = RedlockPy()
    a.hello(HELLO)
    servers = zip(a.manager.servers, nodes())
    problems = [p for server, n in servers for p in client_differences(f"server {n[1]}", server, n)]
    expected = Redlock([{"host": h, "port": p} for h, p in nodes()])
    return problems + differences("Redlock", a.manager, expected, ["retry_count", "retry_delay", "quorum"])


def kept_aioredlock():
    import attr
    from aioredlock import Aioredlock
    from aioredlock_redlock import AioredlockRedlock

    a = AioredlockRedlock()
    a.hello(HELLO)
    connections = [{"host": h, "port": p} for h, p in nodes()]
    expected = Aioredlock(redis_connections=connections)
    names = [f.name for f in attr.fields(Aioredlock)]
    return differences("Aioredlock", a.manager, expected, names)


def kept_python_redis_lock():
    import redis_lock
    from python_redis_lock import PythonRedisLock

    a = PythonRedisLock()
    a.hello(HELLO)
    expected = redis_lock.Lock(a.client, "L0", expire=TTL_S)
    names = ["_name", "_expire", "_signal_expire", "_lock_renewal_interval", "blocking"]
    problems = client_differences("client", a.client, FIRST) + differences("Lock", a.lock("L0"), expected, names)
    if a.timeout_s != math.ceil(WINDOW_S):
        problems.append(f"acquire timeout {a.timeout_s!r}, the retry window rounded up is {math.ceil(WINDOW_S)}")
    return problems


def kept_redis_py_asyncio_lock():
    import redis.asyncio
    from redis_py_asyncio_lock import RedisPyAsyncioLock

    a = RedisPyAsyncioLock()
    a.hello(HELLO)
    lock = a.lock("L0")
    expected = a.client.lock("L0", timeout=TTL_S, blocking_timeout=WINDOW_S)
    names = ["name", "timeout", "sleep", "blocking", "blocking_timeout", "thread_local", "raise_on_release_error"]
    default = redis.asyncio.Redis(host=FIRST[0], port=FIRST[1])
    kwargs, expected_kwargs = a.client.connection_pool.connection_kwargs, default.connection_pool.connection_kwargs
    problems = differences("client", kwargs, expected_kwargs, CLIENT_SETTINGS)
    return problems + differences("Lock", lock, expected, names)


def kept_sherlock():
    import sherlock
    from sherlock_lock import SherlockLock

    a = SherlockLock()
    a.hello(HELLO)
    expected = sherlock.RedisLock("L0", client=a.client, expire=int(TTL_S))
    names = ["lock_name", "namespace", "expire", "timeout", "retry_interval"]
    return client_differences("client", a.client, FIRST) + differences("RedisLock", a.lock("L0"), expected, names)


def kept_walrus():
    from walrus_lock import WalrusLock

    a = WalrusLock()
    a.hello(HELLO)
    expected = a.db.lock("L0", ttl=HELLO["ttl_ms"])
    problems = client_differences("db", a.db, FIRST) + differences("Lock", a.lock("L0"), expected, ["name", "ttl"])
    if len(a.lock("L0")._lock_id) != len(expected._lock_id):
        problems.append("the Lock's lock_id is not the library's default")
    return problems


def kept_dramatiq():
    from dramatiq.rate_limits import ConcurrentRateLimiter
    from dramatiq_mutex import DramatiqMutex

    a = DramatiqMutex()
    a.hello(HELLO)
    expected = ConcurrentRateLimiter(a.backend, "L0", ttl=HELLO["ttl_ms"])
    problems = client_differences("backend.client", a.backend.client, FIRST)
    return problems + differences("limiter", a.limiter("L0"), expected, ["key", "limit", "ttl"])


def kept_tooz():
    from unittest import mock

    from tooz import coordination
    from tooz.drivers.redis import RedisDriver
    from tooz_redis import ToozRedis

    a = ToozRedis()
    starts = []
    # start() connects; record how the adapter calls it instead
    with mock.patch.object(RedisDriver, "start", lambda self, *args, **kw: starts.append((args, kw))):
        a.hello(HELLO)
    url = "redis://%s:%d" % FIRST
    expected = coordination.get_coordinator(url, b"lockstorm-client-0", lock_timeout=TTL_S)
    names = ["lock_timeout", "timeout", "membership_timeout", "namespace"]
    problems = differences("coordinator", a.coordinator, expected, names)
    if starts != [((), {})]:
        problems.append(f"the coordinator is started with {starts!r}, not start()")
    client = a.coordinator._make_client(a.coordinator._parsed_url, a.coordinator._options, a.coordinator.timeout)
    default = expected._make_client(expected._parsed_url, expected._options, expected.timeout)
    kwargs, expected_kwargs = client.connection_pool.connection_kwargs, default.connection_pool.connection_kwargs
    problems += differences("client", kwargs, expected_kwargs, CLIENT_SETTINGS)
    if a.window_s != WINDOW_S:
        problems.append(f"acquire timeout {a.window_s!r}, the hello's retry window is {WINDOW_S!r}")
    return problems


def kept_huey():
    import huey
    from huey_lock import HueyLock

    a = HueyLock()
    a.hello(HELLO)
    expected = huey.RedisHuey(host=FIRST[0], port=FIRST[1])
    kwargs, expected_kwargs = a.huey.storage.pool.connection_kwargs, expected.storage.pool.connection_kwargs
    settings = CLIENT_SETTINGS + ["orig_socket_timeout", "orig_socket_connect_timeout"]
    kwargs, expected_kwargs = ({n: k.get(n) for n in settings} for k in (kwargs, expected_kwargs))
    problems = differences("pool", kwargs, expected_kwargs, settings)
    problems += differences("pool", a.huey.storage.pool, expected.storage.pool, ["max_connections"])
    problems += differences("huey", a.huey, expected, ["name"])
    return problems + differences("TaskLock", a.lock("L0"), expected.lock_task("L0"), ["_ttl", "_key"])


def kept_portalocker():
    from portalocker import LockFlags
    from portalocker import redis as pl_redis
    from portalocker_redis import PortalockerRedis

    a = PortalockerRedis()
    a.hello(HELLO)
    problems = []
    for mode, flags in [("exclusive", LockFlags.EXCLUSIVE), ("write", LockFlags.EXCLUSIVE), ("read", LockFlags.SHARED)]:
        lock = a.lock("L0", mode)
        expected = pl_redis.RedisLock("L0", redis_kwargs={"host": FIRST[0], "port": FIRST[1]}, flags=flags)
        names = ["channel", "connection", "timeout", "check_interval", "fail_when_locked", "thread_sleep_time"]
        names += ["unavailable_timeout", "redis_kwargs", "flags", "self_check_interval", "fencing"]
        names += ["subscription_connection_factory"]
        problems += differences(f"RedisLock({mode})", lock, expected, names)
        if lock.interrupt_on_lost is not False or lock.on_lost is None:
            problems.append(f"RedisLock({mode}): the loss must come through on_lost, with interrupt_on_lost=False")
    return problems


def kept_redisrwlock():
    from unittest import mock

    import redis
    from redisrwlock import RwlockClient
    from redisrwlock_rw import RedisRwlock

    a = RedisRwlock()
    # RwlockClient names its connection (CLIENT SETNAME) as it is made: no server here
    with mock.patch.object(redis.Redis, "client_setname", lambda self, name: True):
        a.hello(HELLO)
        expected = RwlockClient(redis=a.client.redis)
    problems = client_differences("client", a.client.redis, FIRST)
    return problems + differences("RwlockClient", a.client, expected, ["node", "pid"])


def kept_celery_once():
    from celery_once.backends import Redis
    from celery_once_lock import CeleryOnceLock

    a = CeleryOnceLock()
    a.hello(HELLO)
    expected = Redis({"url": "redis://%s:%d" % FIRST})
    problems = client_differences("backend.redis", a.backend.redis, FIRST)
    problems += differences("backend", a.backend, expected, ["blocking", "blocking_timeout"])
    if a.timeout_s != TTL_S:
        problems.append(f"lock timeout {a.timeout_s!r}, the ttl is {TTL_S!r} s")
    return problems


def kept_coredis():
    import coredis
    from coredis.patterns.lock import Lock
    from coredis_lock import CoredisLock

    a = CoredisLock()
    a.configure(HELLO)  # what hello builds before it enters the client (which connects)
    expected = coredis.Redis(host=FIRST[0], port=FIRST[1])
    settings = sorted(set(expected.connection_pool.connection_kwargs) - {"processing_budget"})
    problems = differences("client", a.client.connection_pool.connection_kwargs, expected.connection_pool.connection_kwargs, settings)
    if repr(a.client.retry_policy) != repr(expected.retry_policy):
        problems.append(f"client.retry_policy = {a.client.retry_policy!r}, the default is {expected.retry_policy!r}")
    names = ["name", "timeout", "sleep", "blocking", "blocking_timeout"]
    return problems + differences("Lock", a.lock("L0"), Lock(expected, "L0", timeout=TTL_S, blocking_timeout=WINDOW_S), names)


# --- The Rust crates' defaults, read from their sources in the cargo registry --------------


def crate_sources():
    """(name, version) -> source folder in the cargo registry ($CARGO_HOME, default
    ~/.cargo) of each package adapters/rust/Cargo.lock pins, and for rslock and redlock
    {name: version} of the crate itself and of the redis crate it uses."""
    lock = tomllib.loads(read(RUST / "Cargo.lock"))["package"]
    versions = {}
    for p in lock:
        versions.setdefault(p["name"], []).append(p["version"])
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    folders, deps = {}, {}
    for p in lock:
        found = sorted(home.glob(f"registry/src/*/{p['name']}-{p['version']}"))
        if found:
            folders[p["name"], p["version"]] = found[0]
        if p["name"] in ("rslock", "redlock"):
            # a dependency is "name" when one version is pinned, "name version" otherwise
            pairs = [d.split()[:2] if " " in d else [d, versions[d][0]] for d in p.get("dependencies", [])]
            deps[p["name"]] = {p["name"]: p["version"], **{n: v for n, v in pairs if n == "redis"}}
    for crates in deps.values():
        for pair in crates.items():
            if pair not in folders:
                missing = f"{pair[0]} {pair[1]}'s source is not in {home}/registry/src"
                raise EnvironmentMissing(missing + " (run adapters/setup)")
    return folders, deps


def read(path):
    if not path.is_file():
        raise EnvironmentMissing(f"{path} is missing (run adapters/setup)")
    return path.read_text()


def grab(pattern, text, where):
    m = re.search(pattern, text, re.S)
    if m is None:
        raise AssertionError(f"{where}: /{pattern}/ not found: the crate changed, read it again")
    return m


def rust_duration_ms(text, where):
    """`Duration::from_millis(N)` or `from_secs(N)` in milliseconds."""
    m = grab(r"Duration::from_(millis|secs)\((\d+)\)", text, where)
    return int(m.group(2)) * (1 if m.group(1) == "millis" else 1000)


def timeout(ms, what):
    return f"no {what}" if ms is None else f"{duration(ms)} {what}"


def rslock_facts(folders, deps):
    """rslock src/lock.rs (LockManager::from_clients) and its redis crate's src/client.rs
    (AsyncConnectionConfig's Default, which get_multiplexed_async_connection uses)."""
    lock_rs = read(folders["rslock", deps["rslock"]["rslock"]] / "src" / "lock.rs")
    count = int(grab(r"const DEFAULT_RETRY_COUNT: u32 = (\d+);", lock_rs, "rslock").group(1))
    delay = grab(r"const DEFAULT_RETRY_DELAY: Duration = ([^;]+);", lock_rs, "rslock").group(1)
    delay_ms = rust_duration_ms(delay, "rslock DEFAULT_RETRY_DELAY")
    grab(r"fn from_clients.*?retry_count: DEFAULT_RETRY_COUNT,\s*retry_delay: DEFAULT_RETRY_DELAY", lock_rs, "rslock")
    grab(r"\.get_multiplexed_async_connection\(\)", lock_rs, "rslock RestorableConnection::connect")
    redis = deps["rslock"]["redis"]
    client_rs = read(folders["redis", redis] / "src" / "client.rs")
    ms = {}
    for const in ("DEFAULT_RESPONSE_TIMEOUT", "DEFAULT_CONNECTION_TIMEOUT"):
        value = grab(rf"const {const}: Option<Duration> = ([^;]+);", client_rs, f"redis {redis}").group(1)
        ms[const] = None if value.strip() == "None" else rust_duration_ms(value, const)
    grab(r"fn get_multiplexed_async_connection\(\s*&self,?\s*\).*?AsyncConnectionConfig::new\(\)", client_rs, "redis")
    grab(r"fn default\(\) -> Self \{\s*Self \{\s*response_timeout: DEFAULT_RESPONSE_TIMEOUT,", client_rs, "redis")
    facts = [
        f"redis crate {redis}",
        timeout(ms["DEFAULT_RESPONSE_TIMEOUT"], "response timeout"),
        timeout(ms["DEFAULT_CONNECTION_TIMEOUT"], "connect timeout"),
        f"{count} tries",
        f"random delay below {duration(delay_ms)}",
    ]
    return facts, setters(lock_rs)


def redlock_facts(folders, deps):
    """redlock src/redlock.rs (RedLock::with_clients, RedLock::lock_instance) and its redis
    crate's src/client.rs (Client::get_connection)."""
    redlock_rs = read(folders["redlock", deps["redlock"]["redlock"]] / "src" / "redlock.rs")
    count = int(grab(r"const DEFAULT_RETRY_COUNT: u32 = (\d+);", redlock_rs, "redlock").group(1))
    delay_ms = int(grab(r"const DEFAULT_RETRY_DELAY: u32 = (\d+);", redlock_rs, "redlock").group(1))
    uses_defaults = r"fn with_clients.*?retry_count: DEFAULT_RETRY_COUNT,\s*retry_delay: DEFAULT_RETRY_DELAY"
    grab(uses_defaults, redlock_rs, "redlock")
    grab(r"client\s*\.get_connection\(\)", redlock_rs, "redlock RedLock::lock_instance")
    redis = deps["redlock"]["redis"]
    client_rs = read(folders["redis", redis] / "src" / "client.rs")
    no_timeout = r"fn get_connection\(&self\) -> RedisResult<Connection> \{\s*connect\(&self\.connection_info, None\)"
    grab(no_timeout, client_rs, "redis")
    facts = [
        f"redis crate {redis}",
        "no connect or response timeout",
        f"{count} tries",
        f"random sleep below {duration(delay_ms)}",
    ]
    return facts, setters(redlock_rs)


def setters(source):
    return sorted(set(re.findall(r"pub (?:async )?fn (\w+)\s*\(\s*&mut self", source)))


def kept_rust(binary, constructor, forbidden):
    source = read(RUST / "src" / "bin" / f"{binary}.rs")
    lib = read(RUST / "src" / "lib.rs")
    problems = [f"{binary}.rs calls the crate's setter {name}" for name in forbidden if f".{name}(" in source]
    if f"{constructor}(params.redis_urls())" not in source:
        problems.append(f"{binary}.rs does not build its manager with {constructor}(params.redis_urls())")
    if 'format!("redis://{node}/")' not in lib:
        problems.append("lib.rs's redis_urls no longer makes plain redis://host:port/ URLs")
    return problems


# --- The PHP libraries (Debian's packages), read by adapters/php/defaults.php ---------------

PHP = ROOT / "adapters" / "php"
# adapters.toml name -> the adapter's file
PHP_ADAPTERS = {
    "symfony-lock-redis": "symfony_lock.php",
    "symfony-lock-combined": "symfony_lock.php",
    "laravel-cache-lock": "laravel_cache_lock.php",
    "laravel-cache-lock-predis": "laravel_cache_lock.php",
    "malkusch-lock": "malkusch_lock.php",
    "symfony-semaphore": "symfony_semaphore.php",
}


def php_defaults():
    """adapters/php/defaults.php, given the hello: per PHP adapter, the defaults it read from
    the installed packages (`facts`) and the adapter's settings that differ (`problems`)."""
    import json
    import shutil
    import subprocess

    if shutil.which("php") is None:
        raise EnvironmentMissing("php not found (apt-get install php-cli; ./test installs the PHP libraries)")
    run = subprocess.run(
        ["php", PHP / "defaults.php"], input=json.dumps(HELLO), capture_output=True, text=True, cwd=ROOT
    )
    if run.returncode != 0:
        raise EnvironmentMissing(f"adapters/php/defaults.php failed: {run.stderr.strip() or run.stdout.strip()}")
    return json.loads(run.stdout)


def php_header(file):
    """The adapter's first /** ... */ block, without its leading stars."""
    m = re.search(r"/\*\*(.*?)\*/", read(PHP / file), re.S)
    return "" if m is None else "\n".join(re.sub(r"^\s*\* ?", "", line) for line in m.group(1).splitlines())


# --- The adapters --------------------------------------------------------------------------


def python_header(module):
    return ast.get_docstring(ast.parse(read(PYTHON / f"{module}.py"))) or ""


def rust_header(binary):
    lines = read(RUST / "src" / "bin" / f"{binary}.rs").splitlines()
    return " ".join(line[3:] for line in lines if line.startswith("//!"))


def flat(text):
    return " ".join(text.split())


def stated(facts, options, header):
    problems = []
    for fact in facts:
        if fact not in flat(options):
            problems.append(f"the options line does not say {fact!r}")
        if fact not in flat(header):
            problems.append(f"the header does not say {fact!r}")
    return problems


def main():
    report = Report()
    listed = {a["name"]: a for a in tomllib.loads(read(ROOT / "adapters" / "adapters.toml"))["adapter"]}
    try:
        python = [
            ("redis-py-lock", "redis_py_lock", redis_py_lock_facts, kept_redis_py_lock),
            ("pottery", "pottery_redlock", pottery_facts, kept_pottery),
            ("redlock-py", "redlock_py", redlock_py_facts, kept_redlock_py),
            ("aioredlock", "aioredlock_redlock", aioredlock_facts, kept_aioredlock),
            ("python-redis-lock", "python_redis_lock", python_redis_lock_facts, kept_python_redis_lock),
            ("redis-py-asyncio-lock", "redis_py_asyncio_lock", redis_py_asyncio_lock_facts, kept_redis_py_asyncio_lock),
            ("sherlock", "sherlock_lock", sherlock_facts, kept_sherlock),
            ("walrus", "walrus_lock", walrus_facts, kept_walrus),
            ("dramatiq-mutex", "dramatiq_mutex", dramatiq_facts, kept_dramatiq),
            ("tooz", "tooz_redis", tooz_facts, kept_tooz),
            ("huey", "huey_lock", huey_facts, kept_huey),
            ("portalocker", "portalocker_redis", portalocker_facts, kept_portalocker),
            ("redisrwlock", "redisrwlock_rw", redisrwlock_facts, kept_redisrwlock),
            ("celery-once", "celery_once_lock", celery_once_facts, kept_celery_once),
            ("coredis", "coredis_lock", coredis_facts, kept_coredis),
        ]
        rows = [(name, python_header(module), facts(), kept) for name, module, facts, kept in python]
        folders, deps = crate_sources()
        for name, binary, constructor, facts in [
            ("rslock", "rslock_worker", "LockManager::new", rslock_facts),
            ("redlock-rs", "redlock_rs_worker", "RedLock::new", redlock_facts),
        ]:
            facts, forbidden = facts(folders, deps)
            kept = lambda b=binary, c=constructor, f=forbidden: kept_rust(b, c, f)  # noqa: E731
            rows.append((name, rust_header(binary), facts, kept))
        php = php_defaults()
        for name, file in PHP_ADAPTERS.items():
            kept = lambda problems=php[name]["problems"]: problems  # noqa: E731
            rows.append((name, php_header(file), php[name]["facts"], kept))
    except ImportError as exc:
        print(f"defaults_check: {exc} in {sys.executable} (run adapters/setup)", file=sys.stderr)
        return 2
    except EnvironmentMissing as exc:
        print(f"defaults_check: {exc}", file=sys.stderr)
        return 2
    except AssertionError as exc:  # a crate's source no longer reads as this check expects
        print(f"FAIL  {exc}")
        return 1
    for name, header, facts, kept in rows:
        print(f"      {name} defaults: {'; '.join(facts)}")
        options = listed[name].get("options", "")
        report.check(name, "options line and header state the defaults", stated(facts, options, header))
        try:
            problems = kept()
        except Exception as exc:  # the adapter cannot even be built from the hello
            problems = [f"{type(exc).__name__}: {exc}"]
        report.check(name, "the adapter keeps the defaults", problems)
    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
