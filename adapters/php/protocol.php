<?php
/**
 * The worker side of lockstorm's worker protocol, shared by the PHP adapters (the PHP twin
 * of adapters/python/protocol.py; the protocol is docs/worker-protocol.md).
 *
 * lockstorm writes one JSON request per line on stdin; `run` hands each to the adapter and
 * writes the answer as one JSON line on stdout. The adapters need what protocol version 1
 * has, so a hello asking for any version from 1 up is served; they may send version 2's
 * optional fields (a `fail` or `error` carrying the attempt's `token`).
 *
 * stdout carries protocol messages only: PHP's errors and warnings are displayed on stderr,
 * and anything a library echoes goes through an output buffer that writes it to stderr
 * (answers are written with fwrite(STDOUT), which no output buffer sees).
 *
 * An adapter is an object with these methods, each the mapping onto one library:
 *
 *     hello(array $msg): array          ['library', 'version', 'capabilities']; throw to refuse
 *     acquire(string $lock, string $mode): array   ok(...) or fail(...)
 *     release(string $lock): array      ok() or fail(...)
 *     extend(string $lock): array       only asked if the capabilities say extend
 *     fence(string $lock): ?int         optional, for a library that issues fencing tokens
 *
 * An exception escaping a method is an unknown outcome, answered `error` with its class and
 * message (and those of the exceptions it wraps). `write` is answered here: it echoes the
 * value. acquire and extend answers that are `ok` carry `took_ms`, the library call's time
 * measured around it with hrtime() (the monotonic clock).
 *
 * Shutdown (stdin closes): PHP runs one thing at a time, and a library call may block for
 * the client's socket timeout (phpredis: default_socket_timeout, 60 s), so stdin is read by
 * a forked reader process that passes the bytes on through a socket pair. At EOF the main
 * process answers what it has already read and exits without running destructors (a
 * Symfony Lock releases itself in its destructor: the protocol's shutdown releases
 * nothing); if a library call is still blocking half a second after the EOF, the reader
 * kills the main process. The reader exits when the main process is gone.
 */

declare(strict_types=1);

namespace Lockstorm;

const PROTOCOL = 1; // the version written for; later ones only add
const EXIT_GRACE_US = 500000;

/** A success answer; fields that are null are left out. */
function ok(array $fields = []): array
{
    return ['type' => 'ok'] + array_filter($fields, fn ($v) => $v !== null);
}

/** The library says no: definitely not acquired (release/extend: not held). `$token`: the
 * library's lock value the failed acquire used, if the library exposes it. */
function fail(string $reason, ?string $token = null): array
{
    return with_token(['type' => 'fail', 'reason' => $reason], $token);
}

/** Unknown outcome, or a request this worker cannot serve. */
function error(string $message, ?string $token = null): array
{
    return with_token(['type' => 'error', 'message' => $message], $token);
}

function with_token(array $answer, ?string $token): array
{
    if ($token !== null) {
        $answer['token'] = $token;
    }
    return $answer;
}

/**
 * The hello's fields the adapters pass to their libraries: `nodes` as [host, port] pairs
 * and `ttlMs`. Every other setting stays at the library's default; `retryWindowS` (the
 * scenario's `retry_count x retry_delay_ms.max`) is there for a library whose default
 * acquire blocks without bound, which none of the PHP adapters has.
 */
final class Params
{
    public int $ttlMs;
    /** @var array<array{0: string, 1: int}> */
    public array $nodes;
    public float $retryWindowS;

    public function __construct(array $hello)
    {
        $algorithm = $hello['algorithm'] ?? [];
        $delay = $algorithm['retry_delay_ms'] ?? ['max' => 200];
        $delayMaxMs = (float) (is_array($delay) ? $delay['max'] : $delay);
        $this->ttlMs = (int) $hello['ttl_ms'];
        $this->nodes = array_map([self::class, 'hostPort'], $hello['nodes'] ?? []);
        if (!$this->nodes) {
            throw new \InvalidArgumentException('hello names no nodes');
        }
        $this->retryWindowS = (int) ($algorithm['retry_count'] ?? 3) * $delayMaxMs / 1000;
    }

    /** "[::1]:6379" -> ["::1", 6379] */
    public static function hostPort(string $address): array
    {
        $colon = strrpos($address, ':');
        return [trim(substr($address, 0, $colon), '[]'), (int) substr($address, $colon + 1)];
    }
}

/** `Class: message`, then `<- Class: message` for each exception it wraps. */
function describe(\Throwable $e): string
{
    $parts = [];
    for (; $e !== null; $e = $e->getPrevious()) {
        $message = strtok($e->getMessage(), "\n");
        $parts[] = (new \ReflectionClass($e))->getShortName() . ($message !== false && $message !== '' ? ": $message" : '');
    }
    return implode(' <- ', $parts);
}

/** Whether `$e` or an exception it wraps is an instance of `$class`. */
function caused_by(\Throwable $e, string $class): bool
{
    for (; $e !== null; $e = $e->getPrevious()) {
        if ($e instanceof $class) {
            return true;
        }
    }
    return false;
}

/** The installed Debian package's version (dpkg-query), or "unknown". */
function debian_version(string $package): string
{
    $out = shell_exec('dpkg-query -W -f=\'${Version}\' ' . escapeshellarg($package) . ' 2>/dev/null');
    return is_string($out) && $out !== '' ? trim($out) : 'unknown';
}

/** Reads a private property the library keeps (only to name an attempt's token). */
function private_property(object $object, string $class, string $name)
{
    $property = new \ReflectionProperty($class, $name);
    $property->setAccessible(true);
    return $property->getValue($object);
}

function log(string $line): void
{
    fwrite(STDERR, date('Y-m-d H:i:s') . ' ' . $line . "\n");
}

/** The library call's answer; an `ok` carries `took_ms`, the call's time on hrtime(). */
function timed(callable $call): array
{
    $start = hrtime(true);
    $answer = $call();
    if (($answer['type'] ?? null) === 'ok') {
        $answer['took_ms'] = (hrtime(true) - $start) / 1e6;
    }
    return $answer;
}

final class Worker
{
    private object $adapter;
    private ?array $capabilities = null;
    private ?string $refused = null;

    public function __construct(object $adapter)
    {
        $this->adapter = $adapter;
    }

    public function answer(array $msg): array
    {
        $kind = $msg['type'] ?? null;
        if ($kind === 'hello') {
            return $this->hello($msg);
        }
        if ($this->capabilities === null) {
            return error($this->refused ?? 'the first request must be hello');
        }
        $lock = (string) ($msg['lock'] ?? '');
        switch ($kind) {
            case 'acquire':
                $mode = $msg['mode'] ?? 'exclusive';
                if (!in_array($mode, $this->capabilities['modes'], true)) {
                    return error("mode '$mode' is not in this worker's capabilities");
                }
                return timed(fn () => $this->adapter->acquire($lock, $mode));
            case 'release':
                return $this->adapter->release($lock);
            case 'extend':
                if (!$this->capabilities['extend']) {
                    return error("extend is not in this worker's capabilities");
                }
                return timed(fn () => $this->adapter->extend($lock));
            case 'write':
                $fence = method_exists($this->adapter, 'fence') ? $this->adapter->fence($lock) : null;
                return ok(['value' => $msg['value'] ?? null, 'fence' => $fence]);
        }
        return error('unknown request type ' . json_encode($kind));
    }

    private function hello(array $msg): array
    {
        $asked = $msg['protocol'] ?? null;
        if (!is_int($asked) || $asked < PROTOCOL) {
            $this->refused = 'protocol ' . json_encode($asked) . ' asked, this worker speaks ' . PROTOCOL . ' and later';
            return error($this->refused);
        }
        try {
            $info = $this->adapter->hello($msg);
        } catch (\Throwable $e) { // the library cannot run here: say why
            log("hello refused: $e");
            $this->refused = describe($e);
            return error($this->refused);
        }
        $this->capabilities = $info['capabilities'];
        return ['type' => 'hello_ok'] + $info;
    }
}

/** Forks the stdin reader; returns the stream the main process reads requests from. */
function start_reader()
{
    $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
    if ($pair === false) {
        throw new \RuntimeException('stream_socket_pair failed');
    }
    $main = posix_getpid();
    $pid = pcntl_fork();
    if ($pid < 0) {
        throw new \RuntimeException('fork failed');
    }
    if ($pid > 0) {
        fclose($pair[1]);
        return $pair[0];
    }
    // The reader: stdin -> pair, byte for byte, until EOF or until the main process is gone.
    fclose($pair[0]);
    fclose(STDOUT); // only the main process holds stdout: its end is lockstorm's EOF
    $out = $pair[1];
    while (true) {
        $read = [STDIN];
        $none = null;
        $ready = @stream_select($read, $none, $none, 0, 250000);
        if (posix_getppid() !== $main) {
            exit(0);
        }
        if ($ready === false || $ready === 0) {
            continue;
        }
        $bytes = fread(STDIN, 65536);
        if ($bytes === false || ($bytes === '' && feof(STDIN))) {
            break;
        }
        if ($bytes !== '' && @fwrite($out, $bytes) === false) {
            exit(0);
        }
    }
    fclose($out); // the main process sees EOF
    usleep(EXIT_GRACE_US);
    if (posix_getppid() === $main) {
        posix_kill($main, SIGKILL); // a library call still blocks: end it
    }
    exit(0);
}

/** Ends the main process without running destructors or shutdown functions. */
function leave(): void
{
    foreach (['/usr/bin/true', '/bin/true'] as $true) {
        if (is_executable($true)) {
            @pcntl_exec($true);
        }
    }
    posix_kill(posix_getpid(), SIGKILL);
}

/** Serves requests until stdin closes. */
function run(object $adapter): void
{
    ini_set('display_errors', 'stderr');
    ini_set('log_errors', '0');
    error_reporting(E_ALL);
    ob_start(function (string $buffer): string {
        if ($buffer !== '') {
            fwrite(STDERR, $buffer);
        }
        return '';
    }, 1);
    $requests = start_reader();
    $worker = new Worker($adapter);
    while (true) {
        $line = fgets($requests);
        if ($line === false && !feof($requests) && (stream_get_meta_data($requests)['timed_out'] ?? false)) {
            // A socket read gives up after default_socket_timeout (60 s) with no bytes: an
            // idle client (one that has nothing to do while the probe runs) is no EOF.
            continue;
        }
        if ($line === false) {
            fflush(STDOUT);
            leave();
        }
        if (trim($line) === '') {
            continue;
        }
        $msg = json_decode($line, true);
        if (!is_array($msg) || !is_int($msg['id'] ?? null)) {
            log('worker: not a protocol request object with an integer id: ' . substr($line, 0, 200));
            posix_kill(posix_getpid(), SIGKILL);
        }
        try {
            $answer = $worker->answer($msg);
        } catch (\Throwable $e) { // unknown outcome: the library threw
            log(($msg['type'] ?? '?') . ' ' . ($msg['lock'] ?? '') . ": $e");
            $answer = error(describe($e));
        }
        $answer['in_reply_to'] = $msg['id'];
        $json = json_encode($answer, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
        fwrite(STDOUT, $json . "\n");
        fflush(STDOUT);
    }
}
