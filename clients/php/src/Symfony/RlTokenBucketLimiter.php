<?php

declare(strict_types=1);

namespace Rl\Symfony;

use Rl\Limiter;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * token_bucket: RL.THROTTLE, GCRA, the token bucket of `limit` tokens
 * refilled with rate.amount every rate.interval, one token every
 * interval / amount (Symfony adds the amount at once at each interval's
 * end).
 */
final class RlTokenBucketLimiter extends RlLimiter
{
    private readonly Limiter $bucket;

    public function __construct(\Rl\Client $rl, string $key, int $limit, private readonly int $amount, private readonly int $intervalMs)
    {
        parent::__construct($rl, $key, $limit);
        $this->bucket = Limiter::throttle($limit - 1, $amount, $intervalMs, 1);
    }

    /** One RL.THROTTLE; 0 tokens only looks (quantity 0). */
    public function consume(int $tokens = 1): RateLimit
    {
        $this->check($tokens);
        $now = microtime(true);

        return $this->rateLimit($this->rl->throttle($this->key, $this->limit - 1, $this->amount, $this->intervalMs, $tokens), $now);
    }

    /**
     * One RL.CHARGE THROTTLE: the tokens are taken now whether or not the
     * bucket holds them (it goes into debt, as Symfony's does), and the
     * reservation acts when they would have been admitted: the charge's
     * one-token wait less one token's interval. Past $maxTime the tokens
     * are given back (RL.REFUND) and MaxWaitDurationExceededException
     * thrown, as Symfony throws it without taking them; meanwhile other
     * requests may have been refused for them, never admitted.
     */
    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        $this->check($tokens);
        if (0 === $maxTime || 0.0 === $maxTime || 0 === $tokens) {
            // Nothing may wait: the plain decision, which writes nothing when denied.
            $now = microtime(true);
            $d = $this->rl->throttle($this->key, $this->limit - 1, $this->amount, $this->intervalMs, $tokens);
            if ($d->allowed) {
                return new Reservation($now, $this->rateLimit($d, $now));
            }
            throw new MaxWaitDurationExceededException(sprintf('The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).', $d->retryAfterMs / 1000, $maxTime ?? 0), $this->rateLimit($d, $now));
        }
        $now = microtime(true);
        $charged = $this->rl->charge($this->key, $this->bucket, $tokens);
        // One token's interval in µs as rl rounds it (up), so the wait is never short.
        $tokenUs = intdiv($this->intervalMs * 1000 + $this->amount - 1, $this->amount);
        $waitMs = max(0, (int) ceil(($charged->retryAfterMs * 1000 - $tokenUs) / 1000));
        $wait = $waitMs / 1000;
        if (0 === $waitMs) {
            return new Reservation($now, new RateLimit(self::available($charged), self::at($now), true, $this->limit));
        }
        $rateLimit = new RateLimit(0, self::at($now + $wait), false, $this->limit);
        if (null !== $maxTime && $wait > $maxTime) {
            $back = $this->rl->refund($this->key, Limiter::throttle($this->limit - 1, $this->amount, $this->intervalMs, $tokens));
            throw new MaxWaitDurationExceededException(sprintf('The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).', $wait, $maxTime), new RateLimit(self::available($back), self::at($now + $wait), false, $this->limit));
        }

        return new Reservation($now + $wait, $rateLimit);
    }

    private function check(int $tokens): void
    {
        self::tokens($tokens);
        if ($tokens > $this->limit) {
            throw new \InvalidArgumentException(sprintf('Cannot reserve more tokens (%d) than the burst size of the rate limiter (%d).', $tokens, $this->limit));
        }
    }
}
