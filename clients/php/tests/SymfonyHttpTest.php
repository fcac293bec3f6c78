<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Tests\Support\App;
use Rl\Tests\Support\Registry;

/**
 * A Symfony HttpKernel app (apps/symfony.php) over HTTP, served by PHP's
 * built-in server, its limiter made by RlRateLimiterFactory: 5 a minute
 * per user (token bucket: 5, then 1 every 10 s). The burst is admitted
 * with the remaining count, then 429 with Retry-After; on Redis 7.0 with
 * the module and Valkey 9.1 with only the library, through phpredis and
 * Predis; and the same app on Symfony's own limiter answers the same.
 */
final class SymfonyHttpTest extends TestCase
{
    /** @return iterable<string, array{string, string, string}> */
    public static function cases(): iterable
    {
        foreach (['redis7', 'valkey9'] as $kind) {
            foreach (['fixed_window', 'sliding_window', 'token_bucket'] as $policy) {
                yield "$kind $policy (phpredis)" => [$kind, $policy, 'phpredis'];
            }
            yield "$kind fixed_window (predis)" => [$kind, 'fixed_window', 'predis'];
        }
    }

    /** @dataProvider cases */
    public function testBurstThen429WithRetryAfter(string $kind, string $policy, string $via): void
    {
        $server = Registry::fresh($kind);
        $app = App::start(__DIR__.'/apps/symfony.php', ['RL_REDIS' => $server->address(), 'RL_POLICY' => $policy, 'RL_CLIENT' => $via]);
        try {
            $this->assertBurstThen429($app, 'alice', $policy);
            // Another user has a limit of their own.
            [$status, $headers] = $app->get('/', ['X-User' => 'bob']);
            self::assertSame([200, '4'], [$status, $headers['x-ratelimit-remaining']]);
        } finally {
            $app->stop();
        }
        $type = ['fixed_window' => 'string', 'sliding_window' => 'hash', 'token_bucket' => 'string'][$policy];
        self::assertSame(['rl:sf:api-alice', 'rl:sf:api-bob'], $this->sorted($server->call('KEYS', '*')));
        self::assertSame($type, $server->type('rl:sf:api-alice'));
    }

    /** The one-line switch back: the app on Symfony's own limiter answers the same sequence. */
    public function testSymfonysOwnLimiterAnswersTheSame(): void
    {
        $server = Registry::fresh('redis7');
        foreach (['fixed_window', 'sliding_window', 'token_bucket'] as $policy) {
            $app = App::start(__DIR__.'/apps/symfony.php', ['RL_REDIS' => $server->address(), 'RL_POLICY' => $policy, 'RL_LIMITER' => 'symfony']);
            try {
                $this->assertBurstThen429($app, "sf-$policy", $policy);
            } finally {
                $app->stop();
            }
        }
        self::assertSame([], array_values(array_filter($server->call('KEYS', '*'), fn ($k) => str_starts_with($k, 'rl:'))), 'Symfony\'s limiter wrote no rl: key');
    }

    private function assertBurstThen429(App $app, string $user, string $policy): void
    {
        $started = microtime(true);
        for ($left = 4; $left >= 0; --$left) {
            [$status, $headers, $body] = $app->get('/', ['X-User' => $user]);
            self::assertSame([200, 'hello'], [$status, $body], $app->log());
            self::assertSame((string) $left, $headers['x-ratelimit-remaining']);
            self::assertSame('5', $headers['x-ratelimit-limit']);
            self::assertArrayNotHasKey('retry-after', $headers);
        }
        // Refill: a minute for the windows (rl's sliding window, RL.BUCKETS,
        // frees a bucket of a 60th of it whole: up to 61 s), 10 s for one
        // token of the bucket.
        $wait = ['fixed_window' => 60, 'sliding_window' => 61, 'token_bucket' => 10][$policy];
        for ($i = 0; $i < 2; ++$i) {
            [$status, $headers] = $app->get('/', ['X-User' => $user]);
            self::assertSame(429, $status);
            self::assertSame('0', $headers['x-ratelimit-remaining']);
            $elapsed = microtime(true) - $started;
            self::assertGreaterThanOrEqual($wait - 1 - $elapsed, (int) $headers['retry-after']);
            self::assertLessThanOrEqual($wait, (int) $headers['retry-after']);
            self::assertEqualsWithDelta(microtime(true) + (int) $headers['retry-after'], (float) $headers['x-ratelimit-retry-after'], 1.5);
        }
    }

    /** @param list<string> $keys */
    private function sorted(array $keys): array
    {
        sort($keys);

        return $keys;
    }
}
