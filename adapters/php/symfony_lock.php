<?php
/**
 * lockstorm worker: Symfony's Lock component (Debian's php-symfony-lock 5.4) over phpredis
 * (php-redis), with one of two stores, named by the first argument:
 *
 *   redis     RedisStore on the first node: the single-instance lock
 *   combined  CombinedStore(one RedisStore per node, ConsensusStrategy): Symfony's
 *             multi-node lock, held once strictly more than half the stores said yes
 *
 * What the library promises (Symfony/Component/Lock/Lock.php, Store/RedisStore.php,
 * Store/CombinedStore.php, Strategy/ConsensusStrategy.php under /usr/share/php):
 * - RedisStore keeps a lock as a sorted set: a Lua script removes the expired members (by
 *   the server's TIME, on Redis 5 and later), refuses if another token is there, adds the
 *   Key's unique token (32 random bytes, base64) and `__write__` with score now + ttl and
 *   PEXPIREATs the set to the largest score. Release deletes the token by compare in Lua.
 * - CombinedStore asks its stores one after another and stops early once the strategy can
 *   no longer be met; ConsensusStrategy is met by strictly more than half. On a failed
 *   quorum it deletes on every store. No clock-drift term.
 * - Lock::acquire(): save() with the store's initial TTL, then, because the lock was
 *   created with a ttl, refresh(): putOffExpiration(ttl) on the store(s); the Key's
 *   lifetime is reset and counted from just before that refresh, on microtime(true) (the
 *   wall clock); an acquisition whose Key expired meanwhile is released and thrown as
 *   LockExpiredException (wrapped in LockAcquiringException).
 * - Key::getRemainingLifetime() is that lifetime left, in seconds, as a float.
 *
 * Defaults, as read from the installed php-symfony-lock 5.4.53+dfsg-0+deb12u1 and phpredis
 * 5.3.7 (adapters/python/defaults_check.py reads them again, through adapters/php/defaults.php,
 * and checks this header and the adapter's `options` line in adapters.toml):
 * - RedisStore($redis): initialTtl 300 s (RedisStore.php:43, RedisStore::__construct, `float
 *   $initialTtl = 300.0`): the TTL save() sets before the refresh cuts it to the lock's ttl.
 * - LockFactory::createLock($resource, $ttl = 300.0, $autoRelease = true) (LockFactory.php:44):
 *   createLock ttl 300 s unless the user gives one, and a user's ttl is how a user sets the
 *   lock's lifetime: this adapter passes the hello's ttl_ms there (as seconds, a float).
 *   autoRelease on (the destructor releases a held lock; this worker's shutdown skips
 *   destructors, as the protocol asks).
 * - Lock::acquire($blocking = false) (Lock.php:77): a non-blocking acquire, one try (a
 *   blocking one would retry every 100 ms +- 10 ms without bound, Lock.php:88); lockstorm's
 *   client retrying after a fail is the user's loop.
 * - The client: phpredis `new \Redis()` and `connect($host, $port)`, as Symfony's Lock
 *   documentation shows it: phpredis's 0 connect and read timeouts, which mean
 *   default_socket_timeout 60 s (php.ini); no reconnect after a connection is lost and a
 *   reconnect failed (measured: the object then answers "went away" for good, and
 *   RedisStore::evaluate, RedisStore.php:258-273, uses the client as given).
 *
 * The mapping: acquire -> a new Lock from LockFactory::createLockFromKey(new Key($lock),
 * $ttl) (createLock does exactly that; the Key in hand gives the token), then acquire()
 * for `exclusive` and `write`, acquireRead() for `read` (RedisStore and CombinedStore are
 * shared-lock stores: readers share, a writer excludes). `ok` carries validity_ms =
 * getRemainingLifetime() x 1000 and token = the Key's RedisStore token (one per Lock, so one
 * per acquisition; also on a fail). false -> fail; LockAcquiringException caused by
 * LockExpiredException -> fail (the library released it); any other exception -> error.
 * release -> release() (void; it throws only when the key is still there after the
 * delete): ok; a release of a lock not held passes silently in Symfony, so it is `ok`
 * here too. extend -> refresh() (the lock's ttl again): ok with validity_ms;
 * LockConflictedException or an expiry -> fail.
 * Capabilities: extend, validity; no fencing; modes exclusive, read, write.
 */

require_once __DIR__ . '/protocol.php';

use Lockstorm\Params;
use function Lockstorm\caused_by;
use function Lockstorm\debian_version;
use function Lockstorm\describe;
use function Lockstorm\fail;
use function Lockstorm\ok;

final class SymfonyLock
{
    /** @var string "redis" or "combined" */
    private $store;
    public $factory;
    public $ttlS;
    /** @var array<string, array{0: object, 1: object}> lock name -> [its Lock, its Key] */
    private $locks = [];

    public function __construct(string $store)
    {
        if (!in_array($store, ['redis', 'combined'], true)) {
            throw new InvalidArgumentException("store '$store': say redis or combined");
        }
        $this->store = $store;
    }

    public function hello(array $msg): array
    {
        if (!extension_loaded('redis')) {
            throw new RuntimeException('the phpredis extension is not loaded (apt-get install php-redis)');
        }
        if (!(include_once 'Symfony/Component/Lock/autoload.php')) {
            throw new RuntimeException('Symfony Lock is not installed (apt-get install php-symfony-lock)');
        }
        $p = new Params($msg);
        $this->build($p, function (string $host, int $port) {
            $redis = new \Redis();
            $redis->connect($host, $port);
            return $redis;
        });
        $library = $this->store === 'redis' ? 'symfony/lock RedisStore' : 'symfony/lock CombinedStore+ConsensusStrategy';
        return [
            'library' => $library . ' (phpredis ' . phpversion('redis') . ')',
            'version' => debian_version('php-symfony-lock'),
            'capabilities' => ['extend' => true, 'validity' => true, 'fencing' => false, 'modes' => ['exclusive', 'read', 'write']],
        ];
    }

    /** The factory over the store, from the nodes and the ttl only (defaults_check builds
     * it with clients that do not connect). */
    public function build(Params $p, callable $client): void
    {
        if ($this->store === 'redis') {
            [$host, $port] = $p->nodes[0];
            $store = new Symfony\Component\Lock\Store\RedisStore($client($host, $port));
        } else {
            $stores = [];
            foreach ($p->nodes as [$host, $port]) {
                $stores[] = new Symfony\Component\Lock\Store\RedisStore($client($host, $port));
            }
            $store = new Symfony\Component\Lock\Store\CombinedStore($stores, new Symfony\Component\Lock\Strategy\ConsensusStrategy());
        }
        $this->factory = new Symfony\Component\Lock\LockFactory($store);
        $this->ttlS = $p->ttlMs / 1000;
    }

    private static function token(object $key): ?string
    {
        $state = Symfony\Component\Lock\Store\RedisStore::class;
        return $key->hasState($state) ? $key->getState($state) : null;
    }

    private static function validityMs(object $lock): ?float
    {
        $left = $lock->getRemainingLifetime();
        return $left === null ? null : $left * 1000;
    }

    public function acquire(string $lock, string $mode): array
    {
        $key = new Symfony\Component\Lock\Key($lock);
        $held = $this->factory->createLockFromKey($key, $this->ttlS);
        $this->locks[$lock] = [$held, $key]; // the previous Lock, released or never held, goes
        try {
            $acquired = $mode === 'read' ? $held->acquireRead() : $held->acquire();
        } catch (Symfony\Component\Lock\Exception\LockAcquiringException $e) {
            if (caused_by($e, Symfony\Component\Lock\Exception\LockExpiredException::class)) {
                return fail(describe($e), self::token($key));
            }
            throw $e;
        }
        if (!$acquired) {
            return fail('not acquired', self::token($key));
        }
        return ok(['validity_ms' => self::validityMs($held), 'token' => self::token($key)]);
    }

    public function release(string $lock): array
    {
        if (!isset($this->locks[$lock])) {
            return fail('no Lock for this name: never acquired');
        }
        try {
            $this->locks[$lock][0]->release();
        } catch (Symfony\Component\Lock\Exception\LockReleasingException $e) {
            if ($e->getPrevious() === null) { // the library's "the resource is still locked"
                return fail(describe($e));
            }
            throw $e;
        }
        return ok();
    }

    public function extend(string $lock): array
    {
        if (!isset($this->locks[$lock])) {
            return fail('no Lock for this name: never acquired');
        }
        $held = $this->locks[$lock][0];
        try {
            $held->refresh();
        } catch (Symfony\Component\Lock\Exception\LockConflictedException $e) {
            return fail(describe($e));
        } catch (Symfony\Component\Lock\Exception\LockAcquiringException $e) {
            if (caused_by($e, Symfony\Component\Lock\Exception\LockExpiredException::class)) {
                return fail(describe($e));
            }
            throw $e;
        }
        return ok(['validity_ms' => self::validityMs($held)]);
    }
}

if (realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    Lockstorm\run(new SymfonyLock($argv[1] ?? 'redis'));
}
