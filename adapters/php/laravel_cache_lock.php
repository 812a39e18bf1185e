<?php
/**
 * lockstorm worker: Laravel's cache lock on Redis (Debian's php-illuminate-cache and
 * php-illuminate-redis 8.83), `Cache::lock($name, $seconds)->get()`, over the client named by
 * the first argument: `phpredis` (php-redis, Laravel's default client) or `predis`
 * (php-predis).
 *
 * What the library promises (Illuminate/Cache/RedisLock.php, PhpRedisLock.php, Lock.php,
 * LuaScripts.php under /usr/share/php): a lock on one Redis connection. acquire() is
 * `SET name owner EX seconds NX` (with seconds = 0, a SETNX that never expires); release()
 * deletes the key by a Lua compare on the owner and returns whether it did. The owner is
 * Str::random() (16 characters), one per lock object. No validity, no extension, no
 * fencing token.
 *
 * Defaults, as read from the installed php-illuminate-cache 8.83.26+dfsg-2 and
 * php-illuminate-redis 8.83.26+dfsg-2 (adapters/python/defaults_check.py reads them again,
 * through adapters/php/defaults.php, and checks this header and the adapter's `options` line
 * in adapters.toml):
 * - RedisStore::lock($name, $seconds = 0, $owner = null) (Cache/RedisStore.php:190): lock
 *   seconds default 0 (no expiry) unless the user gives seconds; this adapter passes the
 *   hello's ttl_ms / 1000 as the seconds, which Laravel takes as an int
 *   (PhpRedisLock::__construct(..., int $seconds, ...), Cache/PhpRedisLock.php:18;
 *   RedisLock's `EX $this->seconds`, Cache/RedisLock.php:38): whole seconds, a fraction cut
 *   off, and a ttl below 1 s would be 0, no expiry (the catalogue's ttls are 1 s and 2 s).
 * - Lock::get() (Cache/Lock.php:88): a non-blocking get(), one try; block() sleeps 250 ms
 *   between tries (`$sleepMilliseconds = 250`, Cache/Lock.php:40) and is not used:
 *   lockstorm's client retrying after a fail is the user's loop.
 * - RedisStore's prefix '' and connection 'default' (Cache/RedisStore.php:47).
 * - The client, built by RedisManager from a connection config with nothing but the host
 *   and the port:
 *   - phpredis 5.3.7 (Redis/Connectors/PhpRedisConnector.php:135-153): `connect(host, port,
 *     timeout, null, retry_interval 0, read_timeout)` with timeout 0 s and read_timeout 0 s,
 *     which phpredis takes as default_socket_timeout 60 s (php.ini).
 *     PhpRedisConnection::command (Redis/Connections/PhpRedisConnection.php:530-541) makes
 *     a new client when phpredis says the server "went away".
 *   - predis 1.1.10: PredisConnector::connect passes `['timeout' => 10.0]` as a client
 *     option, which predis 1.1 does not apply to a connection (only the connection
 *     parameters, here the host and port, are): predis's 5 s connect timeout
 *     (Predis/Connection/StreamConnection.php:125, createStreamSocket), reads and writes at
 *     default_socket_timeout 60 s; predis reconnects by itself on the next command after a
 *     lost connection.
 *
 * The mapping: acquire -> a new lock object `$store->lock($lock, ttl_ms / 1000)` and its
 * get(): true -> ok, false -> fail; both carry token = owner(). release -> release(): true
 * -> ok, false -> fail (the key was not ours). An exception -> error.
 * Capabilities: no extend, no validity (lockstorm counts the ttl), no fencing; exclusive.
 */

require_once __DIR__ . '/protocol.php';

use Lockstorm\Params;
use function Lockstorm\debian_version;
use function Lockstorm\fail;
use function Lockstorm\ok;

final class LaravelCacheLock
{
    /** @var string "phpredis" or "predis" */
    private $client;
    public $store;
    public $ttlS;
    /** @var array<string, object> lock name -> its lock object, from the last acquire */
    private $locks = [];

    public function __construct(string $client)
    {
        if (!in_array($client, ['phpredis', 'predis'], true)) {
            throw new InvalidArgumentException("client '$client': say phpredis or predis");
        }
        $this->client = $client;
    }

    public function hello(array $msg): array
    {
        if ($this->client === 'phpredis' && !extension_loaded('redis')) {
            throw new RuntimeException('the phpredis extension is not loaded (apt-get install php-redis)');
        }
        foreach (['Illuminate/Cache/autoload.php' => 'php-illuminate-cache', 'Illuminate/Redis/autoload.php' => 'php-illuminate-redis'] as $file => $package) {
            if (!(include_once $file)) {
                throw new RuntimeException("$file is missing (apt-get install $package)");
            }
        }
        if ($this->client === 'predis' && !class_exists(Predis\Client::class)) {
            throw new RuntimeException('predis is not installed (apt-get install php-predis)');
        }
        $this->build(new Params($msg));
        $client = $this->client === 'phpredis' ? 'phpredis ' . phpversion('redis') : 'predis ' . Predis\Client::VERSION;
        return [
            'library' => "laravel cache lock (illuminate/cache RedisStore, $client)",
            'version' => debian_version('php-illuminate-cache'),
            'capabilities' => ['extend' => false, 'validity' => false, 'fencing' => false, 'modes' => ['exclusive']],
        ];
    }

    /** The store, from the first node and the ttl only (RedisManager connects lazily, on
     * the first command: defaults_check builds it without a server). */
    public function build(Params $p): void
    {
        [$host, $port] = $p->nodes[0];
        $redis = new Illuminate\Redis\RedisManager(null, $this->client, ['default' => ['host' => $host, 'port' => $port]]);
        $this->store = new Illuminate\Cache\RedisStore($redis);
        $this->ttlS = $p->ttlMs / 1000;
    }

    public function acquire(string $lock, string $mode): array
    {
        $held = $this->locks[$lock] = $this->store->lock($lock, $this->ttlS);
        return $held->get() ? ok(['token' => $held->owner()]) : fail('not acquired', $held->owner());
    }

    public function release(string $lock): array
    {
        if (!isset($this->locks[$lock])) {
            return fail('no lock object for this name: never acquired');
        }
        return $this->locks[$lock]->release() ? ok() : fail('not released: the key holds another owner or none');
    }
}

if (realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    Lockstorm\run(new LaravelCacheLock($argv[1] ?? 'phpredis'));
}
