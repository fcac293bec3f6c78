<?php

declare(strict_types=1);

namespace Rl\Symfony;

use Rl\Limiter;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * sliding_window: RL.BUCKETS, a sliding window of counters (see
 * RlRateLimiterFactory for why not RL.SLIDE).
 */
final class RlSlidingWindowLimiter extends RlLimiter
{
    public function __construct(\Rl\Client $rl, string $key, int $limit, private readonly int $intervalMs)
    {
        parent::__construct($rl, $key, $limit);
    }

    /**
     * One RL.BUCKETS. More tokens than the limit are never accepted (as in
     * Symfony's sliding window): RL.PEEK says what is left, and
     * getRetryAfter() is an interval away.
     */
    public function consume(int $tokens = 1): RateLimit
    {
        self::tokens($tokens);
        $now = microtime(true);
        if (0 === $tokens || $tokens > $this->limit) {
            $d = $this->rl->peek($this->key, Limiter::buckets($this->limit, $this->intervalMs));

            return 0 === $tokens
                ? new RateLimit(self::available($d), self::at($now), true, $this->limit)
                : new RateLimit(self::available($d), self::at($now + $this->intervalMs / 1000), false, $this->limit);
        }

        return $this->rateLimit($this->rl->buckets($this->key, $this->limit, $this->intervalMs, $tokens), $now);
    }

    /** Not supported, as by Symfony's sliding window. */
    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        throw new ReserveNotSupportedException(__CLASS__);
    }
}
