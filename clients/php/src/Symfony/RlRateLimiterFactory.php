<?php

declare(strict_types=1);

namespace Rl\Symfony;

use Rl\Client;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\Policy\NoLimiter;

/**
 * Symfony's RateLimiterFactory on rl: the same options (id, policy, limit,
 * interval, rate: {interval, amount}), and create($key) returns a
 * LimiterInterface whose consume() is one rl command, atomic in the
 * server, with no lock and no cache pool:
 *
 *   fixed_window    RL.FIXED    key limit interval COST tokens
 *   sliding_window  RL.BUCKETS  key limit interval COST tokens
 *   token_bucket    RL.THROTTLE key limit-1 rate.amount rate.interval tokens
 *   no_limit        Symfony's own NoLimiter
 *
 * The sliding window is RL.BUCKETS, not RL.SLIDE: it takes any number of
 * tokens per consume() (RL.SLIDE stores one entry per unit, at most 100 a
 * call) in a fixed amount of memory per key, as Symfony's two counters do,
 * and it never admits more than the limit in any interval (a bucket leaves
 * the window whole, up to interval / 60 late), where Symfony's estimate
 * from two fixed windows may.
 *
 * Keys are "<prefix><id>-<key>", the prefix rl:sf: by default, under rl:
 * so that the README's ACL recipe covers them.
 */
final class RlRateLimiterFactory
{
    private readonly Client $rl;
    private readonly string $id;
    private readonly string $policy;
    private readonly int $limit;
    private readonly int $intervalMs;
    private readonly int $amount;

    /**
     * @param array{id: string, policy: string, limit?: int, interval?: string, rate?: array{interval?: string, amount?: int}} $config
     * @param object $redis an Rl\Client, or what it takes: \Redis, \RedisCluster, \Predis\ClientInterface
     */
    public function __construct(array $config, object $redis, private readonly string $prefix = 'rl:sf:')
    {
        $this->rl = $redis instanceof Client ? $redis : new Client($redis);
        $unknown = array_diff(array_keys($config), ['id', 'policy', 'limit', 'interval', 'rate']);
        if ([] !== $unknown) {
            throw new \InvalidArgumentException(sprintf('rl: unknown rate limiter option(s) "%s": the options are id, policy, limit, interval, rate', implode('", "', $unknown)));
        }
        if (!isset($config['id']) || !\is_string($config['id'])) {
            throw new \InvalidArgumentException('rl: the rate limiter option "id" is required (a string)');
        }
        $this->id = $config['id'];
        $policy = $config['policy'] ?? throw new \InvalidArgumentException('rl: the rate limiter option "policy" is required');
        if (!\is_string($policy)) {
            throw new \InvalidArgumentException(sprintf('rl: the rate limiter option "policy" must be a string, not %s', get_debug_type($policy)));
        }
        $this->policy = $policy;
        [$limit, $intervalMs, $amount] = match ($this->policy) {
            'no_limit' => [0, 0, 0],
            'fixed_window', 'sliding_window' => [
                self::limit($config),
                Interval::toMs('interval', $config['interval'] ?? throw new \InvalidArgumentException(sprintf('rl: the %s policy needs the option "interval"', $this->policy))),
                0,
            ],
            'token_bucket' => [self::limit($config), ...self::rate($config)],
            default => throw new \InvalidArgumentException(sprintf('rl: the rate limiter policy "%s" does not exist: use "token_bucket", "sliding_window", "fixed_window" or "no_limit"', $this->policy)),
        };
        $this->limit = $limit;
        $this->intervalMs = $intervalMs;
        $this->amount = $amount;
    }

    public function create(?string $key = null): LimiterInterface
    {
        $rlKey = $this->prefix.$this->id.'-'.$key;

        return match ($this->policy) {
            'fixed_window' => new RlFixedWindowLimiter($this->rl, $rlKey, $this->limit, $this->intervalMs),
            'sliding_window' => new RlSlidingWindowLimiter($this->rl, $rlKey, $this->limit, $this->intervalMs),
            'token_bucket' => new RlTokenBucketLimiter($this->rl, $rlKey, $this->limit, $this->amount, $this->intervalMs),
            default => new NoLimiter(),
        };
    }

    /** @return array{int, int} the refill interval in ms, and the tokens it brings */
    private static function rate(array $config): array
    {
        $rate = $config['rate'] ?? null;
        if (!\is_array($rate) || !isset($rate['interval'])) {
            throw new \InvalidArgumentException('rl: the token_bucket policy needs the option "rate" with an "interval" (and an "amount", default 1)');
        }
        $amount = $rate['amount'] ?? 1;
        if (!\is_int($amount) || $amount < 1) {
            throw new \InvalidArgumentException(sprintf('rl: the rate limiter option "rate.amount" must be an integer of at least 1, not %s', var_export($amount, true)));
        }

        return [Interval::toMs('rate.interval', $rate['interval']), $amount];
    }

    private static function limit(array $config): int
    {
        $limit = $config['limit'] ?? null;
        if (!\is_int($limit) || $limit < 1) {
            throw new \InvalidArgumentException(sprintf('rl: the rate limiter option "limit" must be an integer of at least 1, not %s', var_export($limit, true)));
        }

        return $limit;
    }
}
