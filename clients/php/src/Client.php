<?php

declare(strict_types=1);

namespace Rl;

use Rl\Transport\PhpRedis;
use Rl\Transport\PhpRedisCluster;
use Rl\Transport\Predis;
use Rl\Transport\Transport;

/**
 * rl's commands, one command per call, with typed replies, on phpredis
 * (\Redis, \RedisCluster) or Predis (\Predis\ClientInterface).
 *
 * Works on the module (RL.*) and on the function library (FCALL rl_*):
 * which one the server runs is found by the first call's own command and
 * kept, and found again when the server answers that the command or
 * function is unknown (a restart without the module, a failover to a node
 * with only the library). COMMAND is never sent, so a user granted only
 * rl's commands and keys (+@ratelimit ~rl:*) can use every call.
 *
 * Durations are milliseconds (an int, or a float holding a whole number).
 * Bad arguments throw \InvalidArgumentException naming the argument before
 * anything is sent; an error the server replies throws ServerException
 * with the server's text.
 */
final class Client
{
    /** rl's release version, the module's and the function library's. */
    public const VERSION = '1.0.0';

    /**
     * The key edition() reads through rl, under rl: so that the README's
     * ACL recipe (~rl:*) allows it. It is never written.
     */
    public const PROBE_KEY = 'rl:probe';

    private readonly Transport $transport;

    /**
     * @param \Redis|\RedisCluster|\Predis\ClientInterface|Transport $redis
     * @param Edition|null $edition the edition to use without asking (it is still found again if the server says it lacks it)
     */
    public function __construct(object $redis, private ?Edition $edition = null)
    {
        $this->transport = match (true) {
            $redis instanceof Transport => $redis,
            $redis instanceof \Redis => new PhpRedis($redis),
            $redis instanceof \RedisCluster => new PhpRedisCluster($redis),
            $redis instanceof \Predis\ClientInterface => new Predis($redis),
            default => throw new \InvalidArgumentException('rl: Client takes a \Redis, \RedisCluster or \Predis\ClientInterface, not '.get_debug_type($redis)),
        };
    }

    // -- the limiters ---------------------------------------------------------

    /** RL.SLIDE: an exact sliding window, at most $limit units in any $windowMs. */
    public function slide(string $key, int $limit, int|float $windowMs, int $cost = 1, int|float|null $blockMs = null, bool $upto = false, int|float|null $waitMs = null): Decision
    {
        return $this->decide($key, Limiter::slide($limit, $windowMs, $cost), $blockMs, $upto, $waitMs);
    }

    /** RL.BUCKETS: a sliding window of counters ($precisionMs null: window / 60). */
    public function buckets(string $key, int $limit, int|float $windowMs, int $cost = 1, int|float|null $precisionMs = null, int|float|null $blockMs = null, bool $upto = false, int|float|null $waitMs = null): Decision
    {
        return $this->decide($key, Limiter::buckets($limit, $windowMs, $cost, $precisionMs), $blockMs, $upto, $waitMs);
    }

    /** RL.THROTTLE: GCRA, a token bucket of $maxBurst + 1 refilled with $count per $periodMs. */
    public function throttle(string $key, int $maxBurst, int $count, int|float $periodMs, int $quantity = 1, int|float|null $blockMs = null, bool $upto = false, int|float|null $waitMs = null): Decision
    {
        return $this->decide($key, Limiter::throttle($maxBurst, $count, $periodMs, $quantity), $blockMs, $upto, $waitMs);
    }

    /** RL.FIXED: a fixed window from the first admitted request. */
    public function fixed(string $key, int $limit, int|float $windowMs, int $cost = 1, int|float|null $blockMs = null, bool $upto = false, int|float|null $waitMs = null): Decision
    {
        return $this->decide($key, Limiter::fixed($limit, $windowMs, $cost), $blockMs, $upto, $waitMs);
    }

    /** RL.ACQUIRE: a lease of $leaseMs if fewer than $limit are held; the Decision's lease is its id. */
    public function acquire(string $key, int $limit, int|float $leaseMs, ?string $id = null, int|float|null $waitMs = null): Decision
    {
        return $this->decide($key, Limiter::acquire($limit, $leaseMs, $id), null, false, $waitMs);
    }

    // -- verbs on any limiter ---------------------------------------------------

    /** RL.PEEK: what $limiter's command would answer, writing nothing; $oldest adds Decision::$oldestMs (SLIDE, BUCKETS). */
    public function peek(string $key, Limiter $limiter, bool $oldest = false): Decision
    {
        $args = $limiter->args();
        if ($oldest) {
            $args[] = 'OLDEST';
        }

        return Decision::fromReply($this->command('PEEK', $limiter->name, $key, $args), 'RL.PEEK', $limiter->cost, false, $oldest);
    }

    /** RL.REFUND: gives back $limiter's cost (THROTTLE: quantity); the Decision's granted is how many were. */
    public function refund(string $key, Limiter $limiter): Decision
    {
        return Decision::fromUnits($this->command('REFUND', $limiter->name, $key, $limiter->args()), 'RL.REFUND');
    }

    /** RL.CHARGE ... COST $cost: records $cost whether or not it fits ($limiter's own cost is not sent). */
    public function charge(string $key, Limiter $limiter, int $cost): Decision
    {
        Args::atLeast('CHARGE', 'cost', $cost, 1);
        $args = array_merge($limiter->args(false), ['COST', $cost]);

        return Decision::fromUnits($this->command('CHARGE', $limiter->name, $key, $args), 'RL.CHARGE');
    }

    /** RL.BLOCK: the key, read as $limiter reads it, is denied for $ms. Returns the block's end, ms since the epoch (the server's clock). */
    public function block(string $key, Limiter|string $limiter, int|float $ms): int
    {
        $ms = Args::ms('BLOCK', 'ms', $ms);

        return Reply::integer($this->command('BLOCK', self::name($limiter), $key, [$ms]), 'RL.BLOCK');
    }

    /** RL.UNBLOCK: whether a block was lifted. */
    public function unblock(string $key, Limiter|string $limiter): bool
    {
        return 1 === Reply::integer($this->command('UNBLOCK', self::name($limiter), $key, []), 'RL.UNBLOCK');
    }

    /**
     * RL.ALL: admitted only if every clause admits, atomically; nothing is
     * recorded otherwise. In a Cluster the keys must share a slot ({hash tag}).
     *
     * @param array{0: string, 1: Limiter} ...$clauses each a key and its limiter
     */
    public function all(array ...$clauses): AllDecision
    {
        if ([] === $clauses) {
            throw new \InvalidArgumentException('rl: ALL needs at least one clause');
        }
        $keys = $parts = [];
        foreach ($clauses as $i => $clause) {
            if (!isset($clause[0], $clause[1]) || !\is_string($clause[0]) || !$clause[1] instanceof Limiter) {
                throw new \InvalidArgumentException(sprintf('rl: ALL clause %d must be [string $key, Limiter $limiter]', $i + 1));
            }
            $keys[] = $clause[0];
            array_push($parts, $clause[1]->name, ...$clause[1]->args());
        }
        $n = \count($keys);
        $reply = $this->call(fn (Edition $e) => array_merge(
            Edition::Module === $e ? ['RL.ALL', $n] : ['FCALL', 'rl_all', $n],
            $keys,
            $parts,
        ), $keys[0]);
        $top = Reply::integers($reply, 2, 'RL.ALL');
        if (\count($reply) !== 2 + $n) {
            throw new \UnexpectedValueException(sprintf('rl: RL.ALL replied %d elements for %d clauses', \count($reply), $n));
        }
        $decisions = [];
        foreach ($clauses as $i => $clause) {
            $decisions[] = Decision::fromReply($reply[2 + $i], 'RL.ALL', $clause[1]->cost);
        }

        return new AllDecision(1 === $top[0], $top[1], $decisions);
    }

    // -- leases -------------------------------------------------------------------

    /** RL.RELEASE: allowed is "released", remaining the leases still held. */
    public function release(string $key, string $lease): Decision
    {
        return Decision::fromReply($this->command('RELEASE', null, $key, [$lease]), 'RL.RELEASE', 0);
    }

    /** RL.RENEW: the lease then lasts $leaseMs from now; allowed is "renewed". */
    public function renew(string $key, string $lease, int|float $leaseMs): Decision
    {
        $ms = Args::ms('RENEW', 'leaseMs', $leaseMs);

        return Decision::fromReply($this->command('RENEW', null, $key, [$lease, $ms]), 'RL.RENEW', 0);
    }

    /** DEL: the key's limit starts afresh. */
    public function delete(string $key): bool
    {
        return 1 === Reply::integer($this->transport->send(['DEL', $key], $key), 'DEL');
    }

    // -- the edition --------------------------------------------------------------

    /**
     * Which edition the server runs, found once: RL.PEEK SLIDE of PROBE_KEY,
     * else FCALL_RO rl_version 0. Calls need not ask first: the first call
     * finds it by its own command.
     */
    public function edition(): Edition
    {
        if (null !== $this->edition) {
            return $this->edition;
        }
        try {
            $this->call(fn () => ['RL.PEEK', 'SLIDE', self::PROBE_KEY, 1, 1000], self::PROBE_KEY, true);
        } catch (ServerException $e) {
            // An error of rl's own (rl:probe holding another kind of key) still showed the module.
            if (null === $this->edition) {
                throw $e;
            }
        }

        return $this->edition ?? throw new \LogicException('rl: the edition was not found');
    }

    /**
     * Loads the function library this package ships (FUNCTION LOAD, on
     * every primary), for servers that cannot load the module. A library
     * already loaded (this one, or another version someone loaded on
     * purpose) is kept.
     */
    public function loadLibrary(): void
    {
        $code = file_get_contents(Library::path());
        foreach ($this->transport->onEveryPrimary(['FUNCTION', 'LOAD', $code]) as $reply) {
            if ($reply instanceof ServerException && !str_contains($reply->getMessage(), 'already exists')) {
                throw $reply;
            }
        }
        $this->edition = null;
    }

    /** @internal the transport, for the adapters (Symfony, Laravel) built on this client */
    public function transport(): Transport
    {
        return $this->transport;
    }

    private function decide(string $key, Limiter $limiter, int|float|null $blockMs, bool $upto, int|float|null $waitMs): Decision
    {
        $args = $limiter->args();
        if (null !== $blockMs) {
            array_push($args, 'BLOCK', Args::ms($limiter->name, 'blockMs', $blockMs));
        }
        if ($upto) {
            $args[] = 'UPTO';
        }
        if (null !== $waitMs) {
            array_push($args, 'WAIT', Args::ms($limiter->name, 'waitMs', $waitMs));
        }

        return Decision::fromReply($this->command($limiter->name, null, $key, $args), 'RL.'.$limiter->name, $limiter->cost, $upto);
    }

    /**
     * RL.<verb> [limiter] key args on the module, FCALL rl_<verb> 1 key
     * [limiter] args on the library: the one place the editions differ.
     *
     * @param list<int|string> $args
     */
    private function command(string $verb, ?string $limiter, string $key, array $args): mixed
    {
        $before = null === $limiter ? [] : [$limiter];

        return $this->call(fn (Edition $e) => Edition::Module === $e
            ? array_merge(['RL.'.$verb], $before, [$key], $args)
            : array_merge(['PEEK' === $verb ? 'FCALL_RO' : 'FCALL', 'rl_'.strtolower($verb), 1, $key], $before, $args), $key);
    }

    /**
     * Sends the line $build makes for the server's edition. While the
     * edition is unknown it sends the module's: any reply, or an error of
     * rl's own (a bad argument, WRONGTYPE), shows the module; "unknown
     * command" shows it is not there, and then the library is asked for
     * (FCALL_RO rl_version 0) and, if loaded, sent the library's line
     * (unless $probe: the question was only which edition). NOPERM and
     * connection errors come back as they are, the edition still unknown.
     * A known edition the server answers it lacks is forgotten and found
     * again by this call.
     *
     * @param \Closure(Edition): list<int|string> $build
     */
    private function call(\Closure $build, string $key, bool $probe = false): mixed
    {
        if (Edition::Library === $this->edition) {
            try {
                return $this->transport->send($build(Edition::Library), $key);
            } catch (ServerException $e) {
                if (!self::saysNoLibrary($e->getMessage())) {
                    throw $e;
                }
                $this->edition = null;
            }
        } elseif (Edition::Module === $this->edition) {
            try {
                return $this->transport->send($build(Edition::Module), $key);
            } catch (ServerException $e) {
                if (!self::saysNoModule($e->getMessage())) {
                    throw $e;
                }
                $this->edition = null;

                return $this->library($build, $key, $probe);
            }
        }
        try {
            $reply = $this->transport->send($build(Edition::Module), $key);
        } catch (ServerException $e) {
            if (str_starts_with($e->getMessage(), 'NOPERM')) {
                throw $e;
            }
            if (self::saysNoModule($e->getMessage())) {
                return $this->library($build, $key, $probe);
            }
            $this->edition = Edition::Module;
            throw $e;
        }
        $this->edition = Edition::Module;

        return $reply;
    }

    /** @param \Closure(Edition): list<int|string> $build */
    private function library(\Closure $build, string $key, bool $probe): mixed
    {
        try {
            $this->transport->send(['FCALL_RO', 'rl_version', 0], $key);
        } catch (ServerException $e) {
            if (self::saysNoLibrary($e->getMessage())) {
                throw new NotLoadedException('FCALL_RO rl_version 0 answered: '.$e->getMessage());
            }
            throw $e;
        }
        $this->edition = Edition::Library;

        return $probe ? null : $this->transport->send($build(Edition::Library), $key);
    }

    private static function saysNoModule(string $error): bool
    {
        return str_contains(strtolower($error), 'unknown command');
    }

    private static function saysNoLibrary(string $error): bool
    {
        $error = strtolower($error);

        return str_contains($error, 'function not found') || str_contains($error, 'unknown command');
    }

    private static function name(Limiter|string $limiter): string
    {
        if ($limiter instanceof Limiter) {
            return $limiter->name;
        }
        $name = strtoupper($limiter);
        if (!\in_array($name, ['SLIDE', 'BUCKETS', 'THROTTLE', 'FIXED'], true)) {
            throw new \InvalidArgumentException(sprintf('rl: limiter must be SLIDE, BUCKETS, THROTTLE or FIXED, not "%s"', $limiter));
        }

        return $name;
    }
}
