<?php

declare(strict_types=1);

namespace Rl;

/**
 * A limiter's reply (RL.SLIDE, RL.BUCKETS, RL.THROTTLE, RL.FIXED, RL.PEEK,
 * RL.ACQUIRE and each RL.ALL clause): [allowed, remaining, retry_after_ms,
 * reset_after_ms] and what a fifth element adds.
 *
 * RL.REFUND and RL.CHARGE reply in the same shape: there `granted` is the
 * units given back or recorded and `allowed` whether that is above 0.
 * RL.RELEASE and RL.RENEW: `allowed` is released (renewed), `remaining` the
 * leases still held.
 */
final class Decision
{
    public function __construct(
        public readonly bool $allowed,
        public readonly int $remaining,
        /** 0 when admitted (unless shadow mode admitted a denial). */
        public readonly int $retryAfterMs,
        public readonly int $resetAfterMs,
        /**
         * The units granted: UPTO's fifth integer when asked for, else the
         * whole cost when admitted and 0 when denied, so one field answers
         * with or without a partial grant.
         */
        public readonly int $granted,
        /** The lease an admitted RL.ACQUIRE (or ACQUIRE clause) took. */
        public readonly ?string $lease = null,
        /** RL.PEEK ... OLDEST: ms until the oldest counted unit leaves. */
        public readonly ?int $oldestMs = null,
    ) {
    }

    /** @internal */
    public static function fromReply(mixed $reply, string $what, int $cost, bool $upto = false, bool $oldest = false): self
    {
        $r = Reply::integers($reply, ($upto || $oldest) ? 5 : 4, $what);
        $allowed = $r[0] === 1;
        $lease = null;
        if (\count($reply) >= 5 && \is_string($reply[4]) && !$upto && !$oldest) {
            $lease = $reply[4];
        }

        return new self(
            $allowed,
            $r[1],
            $r[2],
            $r[3],
            $upto ? $r[4] : ($allowed ? $cost : 0),
            $lease,
            $oldest ? $r[4] : null,
        );
    }

    /** @internal RL.REFUND's and RL.CHARGE's reply: the units first. */
    public static function fromUnits(mixed $reply, string $what): self
    {
        $r = Reply::integers($reply, 4, $what);

        return new self($r[0] > 0, $r[1], $r[2], $r[3], $r[0]);
    }
}
