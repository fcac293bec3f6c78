<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Client;
use Rl\Symfony\RlRateLimiterFactory;
use Rl\Tests\Support\Registry;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\Policy\NoLimiter;

/** RlRateLimiterFactory's options, and the LimiterInterface calls the HTTP tests do not make. */
final class SymfonyFactoryTest extends TestCase
{
    /** @return iterable<string, array{array, string}> */
    public static function badConfigs(): iterable
    {
        $ok = ['id' => 'a', 'policy' => 'fixed_window', 'limit' => 5, 'interval' => '1 minute'];
        yield 'unknown option' => [$ok + ['cache_pool' => 'x'], 'rl: unknown rate limiter option(s) "cache_pool": the options are id, policy, limit, interval, rate'];
        yield 'no id' => [array_diff_key($ok, ['id' => 1]), 'rl: the rate limiter option "id" is required (a string)'];
        yield 'bad policy' => [['policy' => 'leaky_bucket'] + $ok, 'rl: the rate limiter policy "leaky_bucket" does not exist: use "token_bucket", "sliding_window", "fixed_window" or "no_limit"'];
        yield 'policy not a string' => [['policy' => 1] + $ok, 'rl: the rate limiter option "policy" must be a string, not int'];
        yield 'limit 0' => [['limit' => 0] + $ok, 'rl: the rate limiter option "limit" must be an integer of at least 1, not 0'];
        yield 'no interval' => [array_diff_key($ok, ['interval' => 1]), 'rl: the fixed_window policy needs the option "interval"'];
        yield 'bad interval' => [['interval' => 'soon'] + $ok, 'rl: cannot parse the rate limiter option "interval" ("soon"): use a relative time such as "1 minute", see https://www.php.net/datetime.formats.relative'];
        yield 'fractional ms' => [['interval' => '1500 usec'] + $ok, 'rl: the rate limiter option "interval" ("1500 usec") must be a positive whole number of milliseconds, not 1.5 ms'];
        yield 'no rate' => [['policy' => 'token_bucket'] + $ok, 'rl: the token_bucket policy needs the option "rate" with an "interval" (and an "amount", default 1)'];
        yield 'rate amount 0' => [['policy' => 'token_bucket', 'rate' => ['interval' => '1 second', 'amount' => 0]] + $ok, 'rl: the rate limiter option "rate.amount" must be an integer of at least 1, not 0'];
    }

    /** @dataProvider badConfigs */
    public function testABadOptionIsNamed(array $config, string $message): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage($message);
        new RlRateLimiterFactory($config, Registry::fresh('redis7')->phpredis());
    }

    public function testIntervalsAreMilliseconds(): void
    {
        $server = Registry::fresh('redis7');
        $limiter = (new RlRateLimiterFactory(['id' => 'ms', 'policy' => 'fixed_window', 'limit' => 1, 'interval' => '1500 milliseconds'], $server->phpredis()))->create('k');
        $limiter->consume();
        self::assertEqualsWithDelta(1500, $server->admin()->pttl('rl:sf:ms-k'), 50);
    }

    public function testTokensBeyondTheLimitAndZeroTokens(): void
    {
        $server = Registry::fresh('redis7');
        $rl = new Client($server->phpredis());
        $make = fn (string $policy, string $key = 'k') => (new RlRateLimiterFactory(['id' => $policy, 'policy' => $policy, 'limit' => 3, 'interval' => '1 minute', 'rate' => ['interval' => '1 second']], $rl))->create($key);
        foreach (['fixed_window' => 'Cannot reserve more tokens (4) than the size of the rate limiter (3).', 'token_bucket' => 'Cannot reserve more tokens (4) than the burst size of the rate limiter (3).'] as $policy => $message) {
            try {
                $make($policy)->consume(4);
                self::fail('no exception');
            } catch (\InvalidArgumentException $e) {
                self::assertSame($message, $e->getMessage());
            }
        }
        // Symfony's sliding window refuses them instead.
        $sliding = $make('sliding_window');
        $sliding->consume(1);
        $limit = $sliding->consume(4);
        self::assertSame([false, 2], [$limit->isAccepted(), $limit->getRemainingTokens()]);
        // Zero tokens: accepted, how many are left, nothing taken.
        foreach (['fixed_window', 'sliding_window', 'token_bucket'] as $policy) {
            $limiter = $make($policy, 'zero');
            $limiter->consume(1);
            $limit = $limiter->consume(0);
            self::assertSame([true, 2, 3], [$limit->isAccepted(), $limit->getRemainingTokens(), $limit->getLimit()], $policy);
            self::assertSame(2, $limiter->consume(0)->getRemainingTokens(), $policy);
        }
        $this->expectException(\InvalidArgumentException::class);
        $make('fixed_window')->consume(-1);
    }

    public function testReserveAndReset(): void
    {
        $server = Registry::fresh('valkey9');
        $factory = fn (string $policy) => new RlRateLimiterFactory(['id' => $policy, 'policy' => $policy, 'limit' => 2, 'interval' => '1 minute', 'rate' => ['interval' => '10 seconds', 'amount' => 1]], $server->predis());
        $bucket = $factory('token_bucket')->create('k');
        self::assertSame(0.0, round($bucket->reserve(2)->getWaitDuration()));
        $wait = $bucket->reserve(1)->getWaitDuration();
        self::assertEqualsWithDelta(10, $wait, 0.2);
        try {
            $bucket->reserve(1, 5.0);
            self::fail('no exception');
        } catch (MaxWaitDurationExceededException $e) {
            self::assertFalse($e->getRateLimit()->isAccepted());
        }
        // The refused reservation was given back: the next one waits 20 s, not 30.
        self::assertEqualsWithDelta(20, $bucket->reserve(1)->getWaitDuration(), 0.2);
        $bucket->reset();
        self::assertSame(0, (int) $server->call('EXISTS', 'rl:sf:token_bucket-k'));
        self::assertTrue($bucket->consume(2)->isAccepted());

        $fixed = $factory('fixed_window')->create('k');
        $fixed->consume(2);
        $reservation = $fixed->reserve(1);
        self::assertEqualsWithDelta(60, $reservation->getWaitDuration(), 0.5);
        self::assertFalse($reservation->getRateLimit()->isAccepted());

        $this->expectException(ReserveNotSupportedException::class);
        $factory('sliding_window')->create('k')->reserve();
    }

    public function testNoLimit(): void
    {
        $limiter = (new RlRateLimiterFactory(['id' => 'n', 'policy' => 'no_limit'], Registry::fresh('redis7')->phpredis()))->create('k');
        self::assertInstanceOf(NoLimiter::class, $limiter);
        self::assertTrue($limiter->consume(1000)->isAccepted());
    }
}
