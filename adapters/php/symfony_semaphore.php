<?php
/**
 * lockstorm worker: Symfony's Semaphore component (Debian's php-symfony-semaphore
 * 5.4.53+dfsg-0+deb12u1) with its RedisStore over phpredis 5.3.7, as a lock: a semaphore of
 * limit 1 on the first node.
 *
 * What the library promises (Symfony/Component/Semaphore/Semaphore.php, Store/RedisStore.php,
 * Key.php under /usr/share/php): "provide exclusive access to a shared resource" to at most
 * `limit` holders. RedisStore keeps two sorted sets per semaphore, `{name}:time` (token ->
 * expiry) and `{name}:weight` (token -> weight); a Lua script removes the members whose
 * expiry is at or before `now`, then adds the token if the weights left plus its own fit
 * the limit, with expiry `now + ttl`, and EXPIREATs both sets 10 s after the last expiry.
 * `now` is the client's time() (whole seconds) (Store/RedisStore.php:99), and the removal is
 * inclusive (`ZREMRANGEBYSCORE timeKey -inf now`, :64): a permit taken late in a second counts
 * as expired from the start of second `taken + ttl`, up to a second early, by whichever
 * client looks next. Semaphore::acquire() gives the Key a lifetime of microtime(true) + ttl
 * counted after the save returned (Semaphore.php:79). Release deletes the token (no check,
 * no answer); refresh() re-sets the expiry and says SemaphoreExpiredException when the
 * token was gone.
 *
 * Defaults, as read from the installed php-symfony-semaphore 5.4.53+dfsg-0+deb12u1 and
 * phpredis 5.3.7 (adapters/python/defaults_check.py reads them again, through
 * adapters/php/defaults.php, and checks this header and the adapter's `options` line):
 * - SemaphoreFactory::createSemaphore($resource, int $limit, $weight = 1, $ttlInSecond =
 *   300.0, $autoRelease = true) (SemaphoreFactory.php:41): limit 1 (no default: a lock is
 *   one holder), the one choice of this adapter. weight 1; semaphore ttl 300 s unless the
 *   user gives one: this adapter passes the hello's ttl_ms (as seconds, a float), as a user
 *   sets it; autoRelease on (this worker's shutdown skips destructors).
 * - Semaphore::acquire() (Semaphore.php:74): one try, no blocking variant in 5.4.
 * - The client: phpredis `new \Redis()` and `connect($host, $port)`: 0 connect and read
 *   timeouts, which mean default_socket_timeout 60 s (php.ini).
 *
 * The mapping: acquire -> a new semaphore from createSemaphoreFromKey(new Key($lock, 1),
 * ttl) (createSemaphore does exactly that; the Key in hand gives the token) and its
 * acquire(): true -> ok with validity_ms = getRemainingLifetime() x 1000 (seconds, a float)
 * and token = the Key's RedisStore token; false -> fail with the token. release ->
 * release(): ok (it says nothing about whether the token was there). extend -> refresh():
 * ok with validity_ms; SemaphoreExpiredException -> fail. Any other exception -> error.
 * Capabilities: extend, validity; no fencing; exclusive.
 */

require_once __DIR__ . '/protocol.php';

use Lockstorm\Params;
use function Lockstorm\debian_version;
use function Lockstorm\describe;
use function Lockstorm\fail;
use function Lockstorm\ok;

final class SymfonySemaphore
{
    public const LIMIT = 1; // a lock: one holder

    public $factory;
    public $ttlS;
    /** @var array<string, array{0: object, 1: object}> lock name -> [its semaphore, its Key] */
    private $semaphores = [];

    public function hello(array $msg): array
    {
        if (!extension_loaded('redis')) {
            throw new RuntimeException('the phpredis extension is not loaded (apt-get install php-redis)');
        }
        if (!(include_once 'Symfony/Component/Semaphore/autoload.php')) {
            throw new RuntimeException('Symfony Semaphore is not installed (apt-get install php-symfony-semaphore)');
        }
        $this->build(new Params($msg), function (string $host, int $port) {
            $redis = new \Redis();
            $redis->connect($host, $port);
            return $redis;
        });
        return [
            'library' => 'symfony/semaphore RedisStore, limit 1 (phpredis ' . phpversion('redis') . ')',
            'version' => debian_version('php-symfony-semaphore'),
            'capabilities' => ['extend' => true, 'validity' => true, 'fencing' => false, 'modes' => ['exclusive']],
        ];
    }

    /** The factory over the first node's store, from the nodes and the ttl only. */
    public function build(Params $p, callable $client): void
    {
        [$host, $port] = $p->nodes[0];
        $this->factory = new Symfony\Component\Semaphore\SemaphoreFactory(new Symfony\Component\Semaphore\Store\RedisStore($client($host, $port)));
        $this->ttlS = $p->ttlMs / 1000;
    }

    private static function token(object $key): ?string
    {
        $state = Symfony\Component\Semaphore\Store\RedisStore::class;
        return $key->hasState($state) ? $key->getState($state) : null;
    }

    private static function validityMs(object $semaphore): ?float
    {
        $left = $semaphore->getRemainingLifetime();
        return $left === null ? null : $left * 1000;
    }

    public function acquire(string $lock, string $mode): array
    {
        $key = new Symfony\Component\Semaphore\Key($lock, self::LIMIT);
        $held = $this->factory->createSemaphoreFromKey($key, $this->ttlS);
        $this->semaphores[$lock] = [$held, $key]; // the previous one, released or never held, goes
        if (!$held->acquire()) {
            return fail('not acquired', self::token($key));
        }
        return ok(['validity_ms' => self::validityMs($held), 'token' => self::token($key)]);
    }

    public function release(string $lock): array
    {
        if (!isset($this->semaphores[$lock])) {
            return fail('no semaphore for this name: never acquired');
        }
        $this->semaphores[$lock][0]->release();
        return ok();
    }

    public function extend(string $lock): array
    {
        if (!isset($this->semaphores[$lock])) {
            return fail('no semaphore for this name: never acquired');
        }
        $held = $this->semaphores[$lock][0];
        try {
            $held->refresh();
        } catch (Symfony\Component\Semaphore\Exception\SemaphoreExpiredException $e) {
            return fail(describe($e));
        }
        return ok(['validity_ms' => self::validityMs($held)]);
    }
}

if (realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    Lockstorm\run(new SymfonySemaphore());
}
