<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/**
 * A real server on a free loopback port, in its own folder under
 * target/test-servers/, killed by stop() (or when the test process ends).
 *
 * Kinds: redis7 (Redis 7.0 with the module), redis7-library (Redis 7.0
 * with only the function library), valkey9 (Valkey 9.1 with only the
 * library), valkey9-module (Valkey 9.1 with the module), valkey9-bare
 * (neither). A stopped clock (libfaketime) is Valkey's only: Redis 7.0
 * crashes under it.
 */
final class Server
{
    public const KINDS = ['redis7', 'redis7-library', 'valkey9', 'valkey9-module', 'valkey9-bare'];

    private static int $serial = 0;

    /** @var resource */
    private $process;
    private ?\Redis $admin = null;
    private int $now;

    private function __construct(
        public readonly string $kind,
        public readonly int $port,
        public readonly string $dir,
        $process,
        private readonly ?string $clockFile,
    ) {
        $this->process = $process;
    }

    /**
     * @param list<string> $extra more server arguments
     */
    public static function start(string $kind, bool $clock = false, array $extra = []): self
    {
        if (!\in_array($kind, self::KINDS, true)) {
            throw new \InvalidArgumentException("unknown server kind $kind");
        }
        $valkey = str_starts_with($kind, 'valkey9');
        $binary = $valkey ? Paths::valkey9() : Paths::redis7();
        $args = [$binary];
        if (\in_array($kind, ['redis7', 'valkey9-module'], true)) {
            array_push($args, '--loadmodule', Paths::module());
        }
        if ($clock && !$valkey) {
            throw new \LogicException('a stopped clock needs Valkey (Redis 7.0 crashes under libfaketime)');
        }
        $dir = Paths::root().'/target/test-servers/php-'.getmypid().'-'.$kind.'-'.self::$serial++;
        self::removeTree($dir);
        mkdir($dir, 0777, true);
        $env = getenv();
        $clockFile = null;
        $now = (int) floor(microtime(true) * 1000);
        if ($clock) {
            $clockFile = $dir.'/faketime';
            file_put_contents($clockFile, Clock::text($now));
            $env['TZ'] = 'UTC';
            $env['LD_PRELOAD'] = Paths::faketime();
            $env['FAKETIME_TIMESTAMP_FILE'] = $clockFile;
            $env['FAKETIME_NO_CACHE'] = '1';
        }
        $log = '';
        for ($attempt = 0; $attempt < 5; ++$attempt) {
            $port = Ports::free();
            $logFile = "$dir/server-$port.log";
            $cmd = array_merge($args, ['--port', (string) $port, '--bind', '127.0.0.1', '--dir', $dir, '--save', '',
                '--appendonly', 'no', '--daemonize', 'no', '--logfile', $logFile], $extra);
            $process = proc_open($cmd, [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, $dir, $env);
            if (!\is_resource($process)) {
                throw new \RuntimeException("$kind did not start: proc_open failed");
            }
            file_put_contents("$dir/pid", (string) proc_get_status($process)['pid']);
            $server = new self($kind, $port, $dir, $process, $clockFile);
            $server->now = $now;
            if ($server->waitUp()) {
                if ('valkey9' === $kind || 'redis7-library' === $kind) {
                    $server->admin()->rawCommand('FUNCTION', 'LOAD', file_get_contents(Paths::library()));
                }
                if ($clock) {
                    [$s, $us] = $server->admin()->rawCommand('TIME');
                    if ((int) $s * 1000 + intdiv((int) $us, 1000) !== $now) {
                        $server->stop();
                        throw new \RuntimeException('the server\'s clock is not the stopped one: is '.Paths::faketime().' working?');
                    }
                }
                Registry::add($server);

                return $server;
            }
            $log = is_file($logFile) ? (string) file_get_contents($logFile) : '';
            $server->kill();
            if (!str_contains($log, 'Address already in use')) {
                break;
            }
        }
        self::removeTree($dir);
        throw new \RuntimeException("$kind did not start; its log:\n$log");
    }

    /** The edition of rl this server runs, null for none. */
    public function edition(): ?\Rl\Edition
    {
        return match ($this->kind) {
            'redis7', 'valkey9-module' => \Rl\Edition::Module,
            'valkey9', 'redis7-library' => \Rl\Edition::Library,
            default => null,
        };
    }

    public function address(): string
    {
        return '127.0.0.1:'.$this->port;
    }

    /** A phpredis connection of the tests' own, for checks (not the client under test). */
    public function admin(): \Redis
    {
        if (null === $this->admin) {
            $this->admin = new \Redis();
            $this->admin->connect('127.0.0.1', $this->port, 5.0);
        }

        return $this->admin;
    }

    /** A command on the admin connection; an error reply throws. */
    public function call(string ...$args): mixed
    {
        $admin = $this->admin();
        $admin->clearLastError();
        $reply = $admin->rawCommand(...$args);
        if (false === $reply && null !== ($error = $admin->getLastError())) {
            $admin->clearLastError();
            throw new \RuntimeException($error);
        }

        return $reply;
    }

    /** TYPE of $key ("string", "hash", "zset", "none", ...): phpredis's rawCommand reads a status reply as true. */
    public function type(string $key): string
    {
        return [\Redis::REDIS_STRING => 'string', \Redis::REDIS_HASH => 'hash', \Redis::REDIS_ZSET => 'zset',
            \Redis::REDIS_SET => 'set', \Redis::REDIS_LIST => 'list', \Redis::REDIS_NOT_FOUND => 'none'][$this->admin()->type($key)] ?? 'other';
    }

    public function phpredis(): \Redis
    {
        $r = new \Redis();
        $r->connect('127.0.0.1', $this->port, 5.0);

        return $r;
    }

    public function predis(): \Predis\Client
    {
        return new \Predis\Client(['host' => '127.0.0.1', 'port' => $this->port]);
    }

    /** Empties the keyspace and zeroes INFO's counters (commandstats). */
    public function flush(): void
    {
        $this->call('FLUSHALL');
        $this->call('CONFIG', 'RESETSTAT');
    }

    /** The stopped clock's time, ms since the epoch. */
    public function now(): int
    {
        return $this->now;
    }

    public function clockFile(): string
    {
        return $this->clockFile ?? throw new \LogicException('this server runs on the real clock');
    }

    /** Moves the stopped clock; renamed into place so the server never reads half a file. */
    public function advance(int $ms): void
    {
        $this->setClock($this->now + $ms);
    }

    public function setClock(int $ms): void
    {
        $file = $this->clockFile();
        $this->now = $ms;
        file_put_contents("$file.part", Clock::text($ms));
        rename("$file.part", $file);
    }

    public function stop(): void
    {
        $this->admin?->close();
        $this->admin = null;
        $this->kill();
        self::removeTree($this->dir);
        Registry::remove($this);
    }

    private function kill(): void
    {
        if (\is_resource($this->process)) {
            proc_terminate($this->process, 9);
            proc_close($this->process);
        }
    }

    private function waitUp(): bool
    {
        $deadline = microtime(true) + 20;
        while (microtime(true) < $deadline) {
            if (!proc_get_status($this->process)['running']) {
                return false;
            }
            try {
                $r = new \Redis();
                if (@$r->connect('127.0.0.1', $this->port, 0.5) && true === $r->ping()) {
                    $r->close();

                    return true;
                }
            } catch (\RedisException) {
                // not listening yet
            }
            usleep(25_000);
        }

        return false;
    }

    private static function removeTree(string $dir): void
    {
        if (is_dir($dir)) {
            exec('rm -rf '.escapeshellarg($dir));
        }
    }
}
