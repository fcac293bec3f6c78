<?php

declare(strict_types=1);

namespace Rl\Symfony;

use Rl\Limiter;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * fixed_window: RL.FIXED, a window from the first accepted request, as
 * Symfony's starts at its first hit.
 */
final class RlFixedWindowLimiter extends RlLimiter
{
    public function __construct(\Rl\Client $rl, string $key, int $limit, private readonly int $intervalMs)
    {
        parent::__construct($rl, $key, $limit);
    }

    public function consume(int $tokens = 1): RateLimit
    {
        try {
            return $this->reserve($tokens, 0)->getRateLimit();
        } catch (MaxWaitDurationExceededException $e) {
            return $e->getRateLimit();
        }
    }

    /**
     * One RL.FIXED. Past the limit, the reservation is for the window's
     * end; as in Symfony's fixed window (whose next window starts from
     * zero) the reserved tokens are not counted in the next window.
     */
    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        self::tokens($tokens);
        if ($tokens > $this->limit) {
            throw new \InvalidArgumentException(sprintf('Cannot reserve more tokens (%d) than the size of the rate limiter (%d).', $tokens, $this->limit));
        }
        $limiter = Limiter::fixed($this->limit, $this->intervalMs, max(1, $tokens));
        $now = microtime(true);
        $d = 0 === $tokens ? $this->rl->peek($this->key, $limiter) : $this->rl->fixed($this->key, $this->limit, $this->intervalMs, $tokens);
        if (0 === $tokens) {
            return new Reservation($now, new RateLimit(self::available($d), self::at($now), true, $this->limit));
        }
        if ($d->allowed) {
            return new Reservation($now, new RateLimit($d->remaining, self::at($now), true, $this->limit));
        }
        $wait = $d->retryAfterMs / 1000;
        $rateLimit = $this->rateLimit($d, $now);
        if (null !== $maxTime && $wait > $maxTime) {
            throw new MaxWaitDurationExceededException(sprintf('The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).', $wait, $maxTime), $rateLimit);
        }

        return new Reservation($now + $wait, $rateLimit);
    }
}
