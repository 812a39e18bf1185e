<?php
/**
 * The PHP half of adapters/python/defaults_check.py: reads the PHP lock libraries' defaults
 * from the installed Debian packages (reflection on their classes, and their source where a
 * default is a literal in a method body), and checks that each PHP adapter, given the hello
 * on stdin, builds library objects with those defaults. Prints one JSON object:
 *
 *   {"ADAPTER": {"facts": ["...", ...], "problems": ["...", ...]}, ...}
 *
 * `facts` are worded as the adapter's header and its `options` line in adapters.toml must
 * say them; `problems` lists every setting of the adapter's objects that is not the
 * library's default. Nothing connects to Redis: the phpredis clients are left unconnected
 * and Laravel's RedisManager connects only on a first command.
 *
 *     php adapters/php/defaults.php < hello.json
 */

declare(strict_types=1);

require __DIR__ . '/symfony_lock.php';
require __DIR__ . '/laravel_cache_lock.php';
require __DIR__ . '/malkusch_lock.php';
require __DIR__ . '/symfony_semaphore.php';

use Lockstorm\Params;
use function Lockstorm\debian_version;
use function Lockstorm\private_property;

function parameter_default(string $class, string $method, string $name)
{
    foreach ((new ReflectionMethod($class, $method))->getParameters() as $parameter) {
        if ($parameter->getName() === $name) {
            return $parameter->getDefaultValue();
        }
    }
    throw new RuntimeException("$class::$method has no parameter \$$name: the library changed, read it again");
}

/** The first match of `$pattern` in the file that defines `$class`, or an exception. */
function in_source(string $class, string $pattern): array
{
    $file = (new ReflectionClass($class))->getFileName();
    if (!preg_match($pattern, file_get_contents($file), $m)) {
        throw new RuntimeException("$file: $pattern not found: the library changed, read it again");
    }
    return $m;
}

function seconds($value): string
{
    return rtrim(rtrim(sprintf('%.3f', (float) $value), '0'), '.') . ' s';
}

function package(string $name): string
{
    return "$name " . debian_version($name);
}

/** Problems where the adapter's source does not call `$call` exactly so. */
function calls(string $file, array $calls): array
{
    $source = file_get_contents(__DIR__ . "/$file");
    $problems = [];
    foreach ($calls as $call => $why) {
        if (strpos($source, $call) === false) {
            $problems[] = "$file does not call $call ($why)";
        }
    }
    return $problems;
}

function same(string $what, $actual, $expected): array
{
    return $actual === $expected ? [] : ["$what = " . var_export($actual, true) . ', the library\'s default gives ' . var_export($expected, true)];
}

$hello = json_decode(stream_get_contents(STDIN), true);
$p = new Params($hello);
$ttlS = $p->ttlMs / 1000;
$socket = 'default_socket_timeout ' . seconds(ini_get('default_socket_timeout'));
$phpredis = 'phpredis ' . phpversion('redis');
$unconnected = fn (string $host, int $port) => new \Redis();
$phpredisConnect = ['$redis->connect($host, $port);' => 'phpredis connect() with its default timeouts'];
$out = [];

// --- Symfony Lock -------------------------------------------------------------------------
include_once 'Symfony/Component/Lock/autoload.php';
$initialTtl = parameter_default(Symfony\Component\Lock\Store\RedisStore::class, '__construct', 'initialTtl');
$blocking = parameter_default(Symfony\Component\Lock\Lock::class, 'acquire', 'blocking');
$autoRelease = parameter_default(Symfony\Component\Lock\LockFactory::class, 'createLock', 'autoRelease');
$createTtl = parameter_default(Symfony\Component\Lock\LockFactory::class, 'createLock', 'ttl');
$symfonyFacts = [
    package('php-symfony-lock'),
    $phpredis,
    $socket,
    'initialTtl ' . seconds($initialTtl),
    'createLock ttl ' . seconds($createTtl),
    $blocking ? 'blocking acquire' : 'non-blocking acquire',
    $autoRelease ? 'autoRelease on' : 'autoRelease off',
];
foreach (['redis', 'combined'] as $store) {
    $a = new SymfonyLock($store);
    $a->build($p, $unconnected);
    $built = private_property($a->factory, Symfony\Component\Lock\LockFactory::class, 'store');
    $stores = $store === 'redis' ? [$built] : private_property($built, Symfony\Component\Lock\Store\CombinedStore::class, 'stores');
    $problems = [];
    if ($store === 'combined') {
        $strategy = private_property($built, Symfony\Component\Lock\Store\CombinedStore::class, 'strategy');
        $problems = array_merge($problems, same('strategy', get_class($strategy), Symfony\Component\Lock\Strategy\ConsensusStrategy::class));
        $problems = array_merge($problems, same('stores', count($stores), count($p->nodes)));
    }
    foreach ($stores as $i => $s) {
        $problems = array_merge($problems, same("store $i initialTtl", private_property($s, Symfony\Component\Lock\Store\RedisStore::class, 'initialTtl'), $initialTtl));
    }
    $lock = $a->factory->createLockFromKey(new Symfony\Component\Lock\Key('L0'), $a->ttlS);
    $problems = array_merge($problems, same('Lock ttl', private_property($lock, Symfony\Component\Lock\Lock::class, 'ttl'), (float) $ttlS));
    $problems = array_merge($problems, same('Lock autoRelease', private_property($lock, Symfony\Component\Lock\Lock::class, 'autoRelease'), $autoRelease));
    $problems = array_merge($problems, calls('symfony_lock.php', $phpredisConnect + [
        'createLockFromKey($key, $this->ttlS)' => 'the ttl and nothing else',
        '$held->acquireRead() : $held->acquire()' => 'acquire at its default blocking',
        '$held->refresh();' => 'refresh at the lock\'s ttl',
    ]));
    $out["symfony-lock-$store"] = ['facts' => $symfonyFacts, 'problems' => $problems];
}

// --- Laravel's cache lock -------------------------------------------------------------------
include_once 'Illuminate/Cache/autoload.php';
include_once 'Illuminate/Redis/autoload.php';
$lockSeconds = parameter_default(Illuminate\Cache\RedisStore::class, 'lock', 'seconds');
$sleepMs = (new ReflectionClass(Illuminate\Cache\Lock::class))->getDefaultProperties()['sleepMilliseconds'];
$timeout = in_source(Illuminate\Redis\Connectors\PhpRedisConnector::class, "/Arr::get\\(\\\$config, 'timeout', ([0-9.]+)\\)/")[1];
$readTimeout = in_source(Illuminate\Redis\Connectors\PhpRedisConnector::class, "/Arr::get\\(\\\$config, 'read_timeout', ([0-9.]+)\\)/")[1];
$predisConnect = in_source(Predis\Connection\StreamConnection::class, '/\$timeout = \(isset\(\$parameters->timeout\) \? \(float\) \$parameters->timeout : ([0-9.]+)\);/')[1];
$laravelFacts = [
    package('php-illuminate-cache'),
    package('php-illuminate-redis'),
    'lock seconds default ' . $lockSeconds . ' (no expiry)',
    'non-blocking get()',
    "block() sleeps {$sleepMs} ms",
];
$clients = [
    'phpredis' => [$phpredis, 'timeout ' . seconds($timeout), 'read_timeout ' . seconds($readTimeout), $socket],
    'predis' => ['predis ' . Predis\Client::VERSION, seconds($predisConnect) . ' connect timeout', $socket],
];
foreach ($clients as $client => $clientFacts) {
    $a = new LaravelCacheLock($client);
    $a->build($p);
    $manager = private_property($a->store, Illuminate\Cache\RedisStore::class, 'redis');
    [$host, $port] = $p->nodes[0];
    $problems = same('RedisManager config', private_property($manager, Illuminate\Redis\RedisManager::class, 'config'), ['default' => ['host' => $host, 'port' => $port]]);
    $problems = array_merge($problems, same('RedisManager driver', private_property($manager, Illuminate\Redis\RedisManager::class, 'driver'), $client));
    $problems = array_merge($problems, same('prefix', $a->store->getPrefix(), ''));
    $problems = array_merge($problems, same('connection', private_property($a->store, Illuminate\Cache\RedisStore::class, 'connection'), 'default'));
    $problems = array_merge($problems, calls('laravel_cache_lock.php', [
        '$this->store->lock($lock, $this->ttlS)' => 'the ttl as the seconds, no owner',
        '$held->get()' => 'the non-blocking get()',
    ]));
    $out[$client === 'phpredis' ? 'laravel-cache-lock' : 'laravel-cache-lock-predis'] = ['facts' => array_merge($laravelFacts, $clientFacts), 'problems' => $problems];
}

// --- malkusch/lock ----------------------------------------------------------------------------
include_once 'Malkusch/Lock/autoload.php';
$mutexTimeout = parameter_default(malkusch\lock\mutex\PHPRedisMutex::class, '__construct', 'timeout');
$plus = in_source(malkusch\lock\mutex\SpinlockMutex::class, '/\$this->acquire\(\$this->key, \$this->timeout \+ (\d+)\)/')[1];
$loop = new ReflectionClass(malkusch\lock\util\Loop::class);
$a = new MalkuschLock();
$a->build($p, $unconnected);
$mutex = $a->mutex('L0');
$problems = same('mutex timeout', private_property($mutex, malkusch\lock\mutex\SpinlockMutex::class, 'timeout'), (int) $ttlS);
$problems = array_merge($problems, same('clients', count(private_property($mutex, malkusch\lock\mutex\RedisMutex::class, 'redisAPIs')), count($p->nodes)));
$problems = array_merge($problems, calls('malkusch_lock.php', $phpredisConnect + [
    'extends malkusch\lock\mutex\PHPRedisMutex' => 'the library\'s own mutex',
    'new class($this->redis, $name, $this->timeoutS)' => 'the clients, the name and the ttl as the timeout, nothing else',
]));
$out['malkusch-lock'] = [
    'facts' => [
        package('php-malkusch-lock'),
        $phpredis,
        $socket,
        'timeout default ' . seconds($mutexTimeout),
        "keys live timeout + $plus s",
        'sleeps ' . seconds($loop->getConstant('MINIMUM_WAIT_US') / 1e6) . ' x 1.25^i, at most ' . seconds($loop->getConstant('MAXIMUM_WAIT_US') / 1e6),
    ],
    'problems' => $problems,
];

// --- Symfony Semaphore ------------------------------------------------------------------------
include_once 'Symfony/Component/Semaphore/autoload.php';
$semWeight = parameter_default(Symfony\Component\Semaphore\SemaphoreFactory::class, 'createSemaphore', 'weight');
$semTtl = parameter_default(Symfony\Component\Semaphore\SemaphoreFactory::class, 'createSemaphore', 'ttlInSecond');
$semAutoRelease = parameter_default(Symfony\Component\Semaphore\SemaphoreFactory::class, 'createSemaphore', 'autoRelease');
$limit = new ReflectionParameter([Symfony\Component\Semaphore\SemaphoreFactory::class, 'createSemaphore'], 'limit');
$now = in_source(Symfony\Component\Semaphore\Store\RedisStore::class, '/\$args = \[\s*\$this->getUniqueToken\(\$key\),\s*(time|microtime)\(/')[1];
$a = new SymfonySemaphore();
$a->build($p, $unconnected);
$key = new Symfony\Component\Semaphore\Key('L0', SymfonySemaphore::LIMIT);
$semaphore = $a->factory->createSemaphoreFromKey($key, $a->ttlS);
$problems = same('semaphore ttl', private_property($semaphore, Symfony\Component\Semaphore\Semaphore::class, 'ttlInSecond'), (float) $ttlS);
$problems = array_merge($problems, same('semaphore autoRelease', private_property($semaphore, Symfony\Component\Semaphore\Semaphore::class, 'autoRelease'), $semAutoRelease));
$problems = array_merge($problems, same('Key weight', $key->getWeight(), $semWeight));
$problems = array_merge($problems, same('Key limit', $key->getLimit(), 1));
$problems = array_merge($problems, calls('symfony_semaphore.php', $phpredisConnect + [
    'createSemaphoreFromKey($key, $this->ttlS)' => 'the ttl and nothing else',
    'new Symfony\Component\Semaphore\Key($lock, self::LIMIT)' => 'limit 1, the default weight',
]));
$out['symfony-semaphore'] = [
    'facts' => [
        package('php-symfony-semaphore'),
        $phpredis,
        $socket,
        $limit->isDefaultValueAvailable() ? 'limit default ' . $limit->getDefaultValue() : 'limit 1 (no default',
        "weight $semWeight",
        'semaphore ttl ' . seconds($semTtl),
        $semAutoRelease ? 'autoRelease on' : 'autoRelease off',
        $now === 'time' ? "the client's time() (whole seconds)" : "the client's microtime()",
    ],
    'problems' => $problems,
];

echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT), "\n";
