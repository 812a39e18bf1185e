<?php
/**
 * lockstorm worker: malkusch/lock's PHPRedisMutex (Debian's php-malkusch-lock 2.2.1), the
 * library's Redlock over one phpredis connection per node.
 *
 * What the library promises (Malkusch/Lock/classes/ under /usr/share/php: mutex/RedisMutex.php,
 * mutex/SpinlockMutex.php, mutex/PHPRedisMutex.php, util/Loop.php): "Mutex based on the
 * Redlock algorithm". Its only public call is synchronized($code): lock(), the code,
 * unlock() (mutex/LockMutex.php). lock() spins: each try draws a new token (16 random
 * bytes, hex), `SET lock_<name> token NX EX timeout+1` on every node one after another,
 * and holds if a majority said yes and the time the try took, on microtime(true) (the wall
 * clock), is at most timeout + 1 s; otherwise it deletes its token everywhere (Lua
 * compare) and tries again after a random sleep (10 ms x 1.25^i to twice that, at most
 * 0.5 s) until `timeout` seconds have passed since lock() began, then throws
 * TimeoutException. A try in which half the nodes or more threw throws
 * LockAcquireException. unlock() throws ExecutionOutsideLockException when more than
 * `timeout` seconds passed since the successful try began (the keys are left to expire),
 * else deletes the token everywhere and throws LockReleaseException unless a majority
 * deleted it. No validity reported, no extension, no fencing token.
 *
 * Defaults, as read from the installed php-malkusch-lock 2.2.1+ds-1 and phpredis 5.3.7
 * (adapters/python/defaults_check.py reads them again, through adapters/php/defaults.php, and
 * checks this header and the adapter's `options` line in adapters.toml):
 * - PHPRedisMutex($redisAPIs, $name, int $timeout = 3) (mutex/PHPRedisMutex.php:41): the
 *   timeout default 3 s; this adapter passes the hello's ttl_ms / 1000 as the timeout, as a
 *   user sets the lock's lifetime; the library takes an int (whole seconds, a fraction cut
 *   off). The same number bounds lock()'s spinning (util/Loop.php:94, Loop::execute:
 *   `$deadline = microtime(true) + $this->timeout`), so the acquire at its defaults is
 *   bounded by the ttl: no bound of the adapter's.
 * - The keys live timeout + 1 s (mutex/SpinlockMutex.php:73, `$this->timeout + 1`).
 * - Between tries it sleeps 0.01 s x 1.25^i, at most 0.5 s (a random time up to twice that,
 *   capped; util/Loop.php, MINIMUM_WAIT_US and MAXIMUM_WAIT_US).
 * - The client: phpredis `new \Redis()` and `connect($host, $port)` per node, as the
 *   library's documentation shows it: phpredis's 0 connect and read timeouts, which mean
 *   default_socket_timeout 60 s (php.ini); no reconnect after a connection is lost and a
 *   reconnect failed (measured: "went away" for good).
 *
 * The mapping: synchronized() is lock(); code; unlock(), and the adapter calls those two
 * halves as acquire and release (through a subclass that makes the two protected methods
 * callable; nothing else changes). acquire -> lock(): returns -> ok; TimeoutException ->
 * fail; LockAcquireException (half the nodes or more failed) -> error. Both carry token =
 * the last try's token (a private field, read to name the attempt). release -> unlock():
 * returns -> ok; ExecutionOutsideLockException or LockReleaseException -> fail.
 * Capabilities: no extend, no validity (lockstorm counts the ttl), no fencing; exclusive.
 */

require_once __DIR__ . '/protocol.php';

use Lockstorm\Params;
use function Lockstorm\debian_version;
use function Lockstorm\describe;
use function Lockstorm\fail;
use function Lockstorm\ok;
use function Lockstorm\private_property;

final class MalkuschLock
{
    public $redis = [];
    public $timeoutS;
    /** @var array<string, object> lock name -> its mutex, made on first use and kept */
    private $mutexes = [];

    public function hello(array $msg): array
    {
        if (!extension_loaded('redis')) {
            throw new RuntimeException('the phpredis extension is not loaded (apt-get install php-redis)');
        }
        if (!(include_once 'Malkusch/Lock/autoload.php')) {
            throw new RuntimeException('malkusch/lock is not installed (apt-get install php-malkusch-lock)');
        }
        $p = new Params($msg);
        $this->build($p, function (string $host, int $port) {
            $redis = new \Redis();
            $redis->connect($host, $port);
            return $redis;
        });
        return [
            'library' => 'malkusch/lock PHPRedisMutex (phpredis ' . phpversion('redis') . ')',
            'version' => debian_version('php-malkusch-lock'),
            'capabilities' => ['extend' => false, 'validity' => false, 'fencing' => false, 'modes' => ['exclusive']],
        ];
    }

    /** The clients and the timeout, from the nodes and the ttl only. */
    public function build(Params $p, callable $client): void
    {
        foreach ($p->nodes as [$host, $port]) {
            $this->redis[] = $client($host, $port);
        }
        $this->timeoutS = $p->ttlMs / 1000;
    }

    /** The library's mutex, with its protected lock() and unlock() made callable. */
    public function mutex(string $name): object
    {
        if (!isset($this->mutexes[$name])) {
            $this->mutexes[$name] = new class($this->redis, $name, $this->timeoutS) extends malkusch\lock\mutex\PHPRedisMutex {
                public function lockNow(): void
                {
                    $this->lock();
                }

                public function unlockNow(): void
                {
                    $this->unlock();
                }
            };
        }
        return $this->mutexes[$name];
    }

    private static function token(object $mutex): ?string
    {
        return private_property($mutex, malkusch\lock\mutex\RedisMutex::class, 'token');
    }

    public function acquire(string $lock, string $mode): array
    {
        $mutex = $this->mutex($lock);
        try {
            $mutex->lockNow();
        } catch (malkusch\lock\exception\TimeoutException $e) {
            return fail(describe($e), self::token($mutex));
        } catch (malkusch\lock\exception\LockAcquireException $e) {
            return Lockstorm\error(describe($e), self::token($mutex));
        }
        return ok(['token' => self::token($mutex)]);
    }

    public function release(string $lock): array
    {
        try {
            $this->mutex($lock)->unlockNow();
        } catch (malkusch\lock\exception\ExecutionOutsideLockException | malkusch\lock\exception\LockReleaseException $e) {
            return fail(describe($e));
        }
        return ok();
    }
}

if (realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    Lockstorm\run(new MalkuschLock());
}
