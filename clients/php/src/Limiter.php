<?php

declare(strict_types=1);

namespace Rl;

/**
 * One of rl's limiters with its parameters, without the key: what RL.PEEK,
 * RL.REFUND, RL.CHARGE, RL.BLOCK and each RL.ALL clause take after the
 * limiter's name. Bad parameters throw an \InvalidArgumentException naming
 * the argument, before anything is sent.
 *
 * Durations are milliseconds: an int, or a float holding a whole number.
 */
final class Limiter
{
    /**
     * @param list<int|string> $params the parameters without the request's units
     * @param list<int|string> $units  the request's units as the command spells them (COST n, or THROTTLE's quantity)
     */
    private function __construct(
        public readonly string $name,
        private readonly array $params,
        private readonly array $units,
        /** The units this request asks for. */
        public readonly int $cost,
    ) {
    }

    /** RL.SLIDE's exact sliding-window log: at most $limit units in any $windowMs. */
    public static function slide(int $limit, int|float $windowMs, int $cost = 1): self
    {
        return self::counted('SLIDE', $limit, $windowMs, $cost, []);
    }

    /** RL.BUCKETS's sliding window of counters; $precisionMs null lets the server choose (window / 60). */
    public static function buckets(int $limit, int|float $windowMs, int $cost = 1, int|float|null $precisionMs = null): self
    {
        $extra = null === $precisionMs ? [] : ['PRECISION', Args::ms('BUCKETS', 'precisionMs', $precisionMs)];

        return self::counted('BUCKETS', $limit, $windowMs, $cost, $extra);
    }

    /** RL.FIXED's fixed window: one counter per window, from the first admitted request. */
    public static function fixed(int $limit, int|float $windowMs, int $cost = 1): self
    {
        return self::counted('FIXED', $limit, $windowMs, $cost, []);
    }

    /**
     * RL.THROTTLE's GCRA, a token bucket of $maxBurst + 1 refilled with
     * $count per $periodMs; $quantity 0 only looks.
     */
    public static function throttle(int $maxBurst, int $count, int|float $periodMs, int $quantity = 1): self
    {
        Args::atLeast('THROTTLE', 'maxBurst', $maxBurst, 0);
        Args::atLeast('THROTTLE', 'count', $count, 1);
        Args::atLeast('THROTTLE', 'quantity', $quantity, 0);

        return new self('THROTTLE', [$maxBurst, $count, Args::ms('THROTTLE', 'periodMs', $periodMs)], [$quantity], $quantity);
    }

    /** RL.ACQUIRE's concurrency limit: at most $limit leases of $leaseMs each; $id names the lease. */
    public static function acquire(int $limit, int|float $leaseMs, ?string $id = null): self
    {
        Args::atLeast('ACQUIRE', 'limit', $limit, 1);
        if (null !== $id && '' === $id) {
            throw new \InvalidArgumentException('rl: ACQUIRE id must not be empty');
        }

        return new self('ACQUIRE', [$limit, Args::ms('ACQUIRE', 'leaseMs', $leaseMs)], null === $id ? [] : ['ID', $id], 1);
    }

    /** @param list<int|string> $extra */
    private static function counted(string $name, int $limit, int|float $windowMs, int $cost, array $extra): self
    {
        Args::atLeast($name, 'limit', $limit, 1);
        Args::atLeast($name, 'cost', $cost, 1);
        $window = Args::ms($name, 'windowMs', $windowMs);

        return new self($name, array_merge([$limit, $window], $extra), 1 === $cost ? [] : ['COST', $cost], $cost);
    }

    /**
     * @internal the parameters after the key: with the request's units, or
     * without them (RL.CHARGE names its own)
     *
     * @return list<int|string>
     */
    public function args(bool $withUnits = true): array
    {
        return $withUnits ? array_merge($this->params, $this->units) : $this->params;
    }
}
