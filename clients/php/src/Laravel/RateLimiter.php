<?php

declare(strict_types=1);

namespace Rl\Laravel;

use Closure;
use Illuminate\Cache\RateLimiter as CacheRateLimiter;
use Rl\Client;
use Rl\Decision;
use Rl\Limiter;
use Rl\Slot;

/**
 * Laravel's RateLimiter (the RateLimiter facade, RateLimiter::for(),
 * attempt(), hit(), ...) on rl: each key is one RL.FIXED counter whose
 * expiry is its window's end, the fixed window Laravel's cache limiter
 * keeps in two cache entries (the count and its ":timer").
 *
 *   attempt()         one RL.FIXED: counts and decides at once (Laravel
 *                     asks tooManyAttempts, then hits); a callback that
 *                     throws gets its attempt back (RL.REFUND FIXED)
 *   hit(), increment() RL.CHARGE FIXED: counted whatever the count
 *   tooManyAttempts(), attempts(), remaining(), availableIn()
 *                     RL.PEEK FIXED: reads, writes nothing
 *   resetAttempts(), clear()  DEL
 *
 * Keys are "<prefix><key>", the prefix rl:lv: by default.
 */
class RateLimiter extends CacheRateLimiter
{
    /** RL.FIXED's largest limit: hit() counts against it, so it is never refused. */
    private const UNLIMITED = 1_000_000_000_000_000;

    /** The window a read names; RL.PEEK FIXED reads the window from the key itself. */
    private const ANY_WINDOW_MS = 1000;

    /** RL.ALL takes at most 8 keys. */
    private const ALL_MAX_CLAUSES = 8;

    /** Laravel's parent keeps the cache here; this limiter has none (every method that used it is replaced). */
    public function __construct(private readonly Client $rl, private readonly string $prefix = 'rl:lv:')
    {
    }

    /** The rl client this limiter sends through. */
    public function client(): Client
    {
        return $this->rl;
    }

    /** Copies the named limiters (RateLimiter::for()) another limiter holds. */
    public function adopt(CacheRateLimiter $other): static
    {
        if ($other !== $this) {
            $this->limiters = array_merge((fn () => $this->limiters)->call($other), $this->limiters);
        }

        return $this;
    }

    public function attempt($key, $maxAttempts, Closure $callback, $decaySeconds = 60)
    {
        $d = $this->decide((string) $key, (int) $maxAttempts, (int) $decaySeconds);
        if (!$d->allowed) {
            return false;
        }
        try {
            return $callback() ?: true;
        } catch (\Throwable $e) {
            // Laravel counts an attempt after its callback returns: one that throws is not counted.
            $this->rl->refund($this->rlKey($key), Limiter::fixed((int) $maxAttempts, self::windowMs($decaySeconds)));
            throw $e;
        }
    }

    public function tooManyAttempts($key, $maxAttempts)
    {
        if ((int) $maxAttempts < 1) {
            return true;
        }

        return !$this->rl->peek($this->rlKey($key), Limiter::fixed((int) $maxAttempts, self::ANY_WINDOW_MS))->allowed;
    }

    public function hit($key, $decaySeconds = 60)
    {
        return $this->increment($key, $decaySeconds);
    }

    /** Laravel 11's increment(): $amount hits at once. */
    public function increment($key, $decaySeconds = 60, $amount = 1)
    {
        $charged = $this->rl->charge($this->rlKey($key), Limiter::fixed(self::UNLIMITED, self::windowMs($decaySeconds)), (int) $amount);

        return self::counted($charged);
    }

    /** Laravel 11's decrement(): gives $amount hits back (never below zero). */
    public function decrement($key, $decaySeconds = 60, $amount = 1)
    {
        $back = $this->rl->refund($this->rlKey($key), Limiter::fixed(self::UNLIMITED, self::windowMs($decaySeconds), (int) $amount));

        return self::counted($back);
    }

    public function attempts($key)
    {
        return self::counted($this->read($key));
    }

    public function resetAttempts($key)
    {
        return $this->rl->delete($this->rlKey($key));
    }

    public function remaining($key, $maxAttempts)
    {
        return max(0, (int) $maxAttempts - $this->attempts($key));
    }

    public function clear($key)
    {
        $this->resetAttempts($key);
    }

    /** Seconds until the key's window ends (rounded up); 0 when nothing is counted. */
    public function availableIn($key)
    {
        $peek = $this->read($key);

        return 0 === self::counted($peek) ? 0 : (int) ceil($peek->resetAfterMs / 1000);
    }

    /** One RL.FIXED: admits and counts, or refuses and writes nothing. */
    public function decide(string $key, int $maxAttempts, int $decaySeconds): Decision
    {
        return $this->rl->fixed($this->rlKey($key), self::limit($maxAttempts), self::windowMs($decaySeconds));
    }

    /**
     * Several limits on one request, in order: one RL.ALL when their keys
     * share a hash slot (always, outside a Cluster; at most 8), which
     * counts the request in every key or in none; else one RL.FIXED each,
     * stopping at the first refusal, whose earlier limits keep their count
     * (as Laravel's throttle middleware does). The decisions are in the
     * limits' order; those after a refusal are null.
     *
     * @param list<array{0: string, 1: int, 2: int}> $limits each [key, maxAttempts, decaySeconds]
     *
     * @return list<Decision|null>
     */
    public function decideAll(array $limits): array
    {
        $keys = array_map(fn ($l) => $this->rlKey($l[0]), $limits);
        if (\count($limits) > 1 && \count($limits) <= self::ALL_MAX_CLAUSES && $this->oneSlot($keys)) {
            $clauses = [];
            foreach ($limits as $i => [, $max, $decay]) {
                $clauses[] = [$keys[$i], Limiter::fixed(self::limit($max), self::windowMs($decay))];
            }

            return $this->rl->all(...$clauses)->clauses;
        }
        $out = [];
        foreach ($limits as [$key, $max, $decay]) {
            $d = empty($out) || end($out)?->allowed ? $this->decide($key, $max, $decay) : null;
            $out[] = $d;
        }

        return $out;
    }

    /** The rl key of a Laravel limiter key. */
    public function rlKey(string $key): string
    {
        return $this->prefix.$this->cleanRateLimiterKey($key);
    }

    /** @param list<string> $keys */
    private function oneSlot(array $keys): bool
    {
        if (\count(array_unique($keys)) !== \count($keys)) {
            return false;
        }
        if (!$this->rl->transport()->isCluster()) {
            return true;
        }

        return 1 === \count(array_unique(array_map([Slot::class, 'of'], $keys)));
    }

    private function read(string $key): Decision
    {
        return $this->rl->peek($this->rlKey($key), Limiter::fixed(self::UNLIMITED, self::ANY_WINDOW_MS));
    }

    /**
     * The count a peek at UNLIMITED shows (RL.PEEK, and the peek RL.CHARGE
     * and RL.REFUND reply with): its remaining is what one more hit would
     * leave.
     */
    private static function counted(Decision $peek): int
    {
        return self::UNLIMITED - $peek->remaining - 1;
    }

    private static function limit(int $maxAttempts): int
    {
        if ($maxAttempts < 1) {
            throw new \InvalidArgumentException(sprintf('rl: maxAttempts must be at least 1, not %d', $maxAttempts));
        }

        return $maxAttempts;
    }

    private static function windowMs(mixed $decaySeconds): int
    {
        if (!is_numeric($decaySeconds) || $decaySeconds <= 0) {
            throw new \InvalidArgumentException(sprintf('rl: decaySeconds must be a positive number of seconds, not %s', var_export($decaySeconds, true)));
        }

        return \Rl\Args::ms('FIXED', 'decaySeconds * 1000', $decaySeconds * 1000);
    }
}
