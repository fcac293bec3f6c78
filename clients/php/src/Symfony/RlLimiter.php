<?php

declare(strict_types=1);

namespace Rl\Symfony;

use Rl\Client;
use Rl\Decision;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\RateLimit;

/**
 * What the three policies share: the key, reset() as DEL, and Symfony's
 * RateLimit made from rl's decision. getRetryAfter() is when the same
 * request would be accepted: now when accepted, now + retry_after_ms when
 * not, in this process's clock.
 */
abstract class RlLimiter implements LimiterInterface
{
    public function __construct(
        protected readonly Client $rl,
        protected readonly string $key,
        protected readonly int $limit,
    ) {
    }

    /** DEL: the key's limit starts afresh. */
    public function reset(): void
    {
        $this->rl->delete($this->key);
    }

    /** The rl key this limiter decides on. */
    public function key(): string
    {
        return $this->key;
    }

    protected function rateLimit(Decision $d, float $now): RateLimit
    {
        return new RateLimit($d->remaining, self::at($now + ($d->allowed ? 0 : $d->retryAfterMs / 1000)), $d->allowed, $this->limit);
    }

    /**
     * The tokens left, from an RL.PEEK (or the peek RL.CHARGE and RL.REFUND
     * reply with): its remaining is what one more token would leave.
     */
    protected static function available(Decision $peek): int
    {
        return 0 === $peek->retryAfterMs ? $peek->remaining + 1 : 0;
    }

    protected static function at(float $time): \DateTimeImmutable
    {
        return \DateTimeImmutable::createFromFormat('U.u', sprintf('%.6F', $time));
    }

    protected static function tokens(int $tokens): void
    {
        if ($tokens < 0) {
            throw new \InvalidArgumentException(sprintf('rl: tokens must be zero or more, not %d', $tokens));
        }
    }
}
