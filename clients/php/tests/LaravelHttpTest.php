<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Tests\Support\App;
use Rl\Tests\Support\Registry;
use Rl\Tests\Support\Server;

/**
 * A Laravel 8 app (apps/laravel) over HTTP, served by PHP's built-in
 * server, with Rl\Laravel\RlServiceProvider in its providers: throttle:3,1,
 * a named limiter of two limits, a Limit's response callback and
 * RateLimiter::attempt() answer as Laravel's do, Laravel's headers and
 * all, with one rl command per request; on Redis 7.0 with the module and
 * Valkey 9.1 with only the library, through phpredis and Predis. Without
 * that line (Laravel's own limiter) the app answers the same.
 */
final class LaravelHttpTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function cases(): iterable
    {
        yield 'redis7 (phpredis)' => ['redis7', 'phpredis'];
        yield 'valkey9 (phpredis)' => ['valkey9', 'phpredis'];
        yield 'redis7 (predis)' => ['redis7', 'predis'];
        yield 'valkey9 (predis)' => ['valkey9', 'predis'];
    }

    /** @dataProvider cases */
    public function testThrottleMiddleware(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $app = self::app($server, ['RL_CLIENT' => $via]);
        try {
            self::assertSame('Rl\Laravel\RateLimiter', $app->get('/limiter')[2]);
            $this->assertBurstThen429($app, '/fixed', [], 3);
            $this->assertSame(3 + 2, $this->rlCalls($server, 'fixed'), 'one command per request');
            self::assertSame([1], array_values(array_unique(array_map(fn ($k) => (int) str_starts_with($k, 'rl:lv:'), $server->call('KEYS', '*')))));
            $key = $server->call('KEYS', '*')[0];
            self::assertEqualsWithDelta(60_000, $server->admin()->pttl($key), 5_000);
        } finally {
            $app->stop();
        }
    }

    /**
     * Two limits on one route (3 a minute per user, 5 per team): one RL.ALL
     * a request, counted in both keys or in neither.
     *
     * @dataProvider cases
     */
    public function testNamedLimiterWithTwoLimits(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $app = self::app($server, ['RL_CLIENT' => $via]);
        try {
            $a = ['X-User' => 'a', 'X-Team' => 't'];
            $b = ['X-User' => 'b', 'X-Team' => 't'];
            // a: 3 (its own limit, the team's: 2 left); the smallest remaining is the header's.
            foreach ([2, 1, 0] as $left) {
                [$status, $headers] = $app->get('/uploads', $a);
                self::assertSame([200, (string) $left, '3'], [$status, $headers['x-ratelimit-remaining'], $headers['x-ratelimit-limit']]);
            }
            [$status, $headers] = $app->get('/uploads', $a);
            self::assertSame([429, '3'], [$status, $headers['x-ratelimit-limit']]);
            // b: 2 more fill the team's 5; then the team's limit refuses.
            foreach ([1, 0] as $left) {
                [$status, $headers] = $app->get('/uploads', $b);
                self::assertSame([200, (string) $left], [$status, $headers['x-ratelimit-remaining']]);
            }
            [$status, $headers] = $app->get('/uploads', $b);
            self::assertSame([429, '5', '0'], [$status, $headers['x-ratelimit-limit'], $headers['x-ratelimit-remaining']]);
            self::assertGreaterThanOrEqual(59, (int) $headers['retry-after']);
            // The refused request counted nowhere: b's own count is still 2.
            self::assertSame(2, $this->json($app, '/attempts?key='.md5('uploadsuser:b').'&max=3')['attempts']);
            self::assertSame(5, $this->json($app, '/attempts?key='.md5('uploadsteam:t').'&max=5')['attempts']);
            self::assertSame(7, $this->rlCalls($server, 'all'), 'one RL.ALL per request');
        } finally {
            $app->stop();
        }
    }

    /** Two limits of a route by the same key keep a counter each: rl:lv:<key> and rl:lv:<key>:<decay>s. */
    public function testTwoLimitsBySameKey(): void
    {
        $server = Registry::fresh('redis7');
        $app = self::app($server);
        try {
            self::assertSame([200, 200, 429], array_map(fn () => $app->get('/twice')[0], [1, 2, 3]));
        } finally {
            $app->stop();
        }
        $key = 'rl:lv:'.md5('twicesame');
        self::assertSame(['2', '2'], [$server->call('GET', $key), $server->call('GET', "$key:120s")]);
    }

    /** @dataProvider cases */
    public function testResponseCallbackAndAttempt(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $app = self::app($server, ['RL_CLIENT' => $via]);
        try {
            self::assertSame([200, 200], [$app->get('/reports', ['X-User' => 'c'])[0], $app->get('/reports', ['X-User' => 'c'])[0]]);
            [$status, $headers, $body] = $app->get('/reports', ['X-User' => 'c']);
            self::assertSame([429, 'slow down', '2', '0'], [$status, $body, $headers['x-ratelimit-limit'], $headers['x-ratelimit-remaining']]);
            self::assertArrayHasKey('retry-after', $headers);

            foreach (['sent', 'sent'] as $want) {
                self::assertSame([200, $want], [$app->get('/attempt', ['X-User' => 'd'])[0], $app->get('/attempt', ['X-User' => 'e'])[2]]);
            }
            [$status, $headers, $body] = $app->get('/attempt', ['X-User' => 'd']);
            self::assertSame([429, 'too many messages'], [$status, $body]);
            self::assertEqualsWithDelta(60, (int) $headers['retry-after'], 1);

            // hit(), attempts(), remaining(), tooManyAttempts(), availableIn(), clear().
            self::assertSame(['hits' => 1], $this->json($app, '/hit?key=k'));
            self::assertSame(['hits' => 2], $this->json($app, '/hit?key=k'));
            self::assertSame(['attempts' => 2, 'remaining' => 1, 'tooMany' => false, 'availableIn' => 60], $this->json($app, '/attempts?key=k&max=3'));
            self::assertSame(['attempts' => 2, 'remaining' => 0, 'tooMany' => true, 'availableIn' => 60], $this->json($app, '/attempts?key=k&max=2'));
            self::assertSame('cleared', $app->get('/clear?key=k')[2]);
            self::assertSame(['attempts' => 0, 'remaining' => 2, 'tooMany' => false, 'availableIn' => 0], $this->json($app, '/attempts?key=k&max=2'));
            // A callback that throws is not counted, as in Laravel.
            self::assertSame(500, $app->get('/boom')[0]);
            self::assertSame(0, $this->json($app, '/attempts?key=boom&max=5')['attempts']);
        } finally {
            $app->stop();
        }
    }

    /**
     * Told the edition (rl.edition), each request sends its one command and
     * nothing else: on the library, no refused RL.* and no FCALL_RO
     * rl_version first.
     */
    public function testANamedEditionSendsOneCommandPerRequest(): void
    {
        $server = Registry::fresh('valkey9');
        $app = self::app($server, ['RL_EDITION' => 'library']);
        try {
            $this->assertBurstThen429($app, '/fixed', [], 3);
            $stats = $server->call('INFO', 'commandstats');
            self::assertMatchesRegularExpression('/^cmdstat_fcall:calls=5,/m', $stats);
            self::assertDoesNotMatchRegularExpression('/^cmdstat_fcall_ro:/m', $stats);
            self::assertDoesNotMatchRegularExpression('/^errorstat_/m', $server->call('INFO', 'errorstats'));
        } finally {
            $app->stop();
        }
    }

    /** Without the provider line: Laravel's own limiter, the same answers. */
    public function testLaravelsOwnLimiterAnswersTheSame(): void
    {
        $server = Registry::fresh('redis7');
        $app = self::app($server, ['RL_LIMITER' => 'laravel']);
        try {
            self::assertSame('Illuminate\Cache\RateLimiter', $app->get('/limiter')[2]);
            $this->assertBurstThen429($app, '/fixed', [], 3);
            self::assertSame([200, 200, 429], array_map(fn () => $app->get('/attempt', ['X-User' => 'f'])[0], [1, 2, 3]));
            self::assertSame(0, $this->rlCalls($server, 'fixed'));
        } finally {
            $app->stop();
        }
    }

    /** @param array<string, string> $env */
    public static function app(Server|string $server, array $env = []): App
    {
        $address = $server instanceof Server ? $server->address() : $server;
        $scratch = sys_get_temp_dir().'/rl-laravel-'.getmypid().'-'.mt_rand();

        return App::start(__DIR__.'/apps/laravel/index.php', ['RL_REDIS' => $address, 'RL_APP_SCRATCH' => $scratch] + $env);
    }

    /** @param array<string, string> $headers */
    public function assertBurstThen429(App $app, string $path, array $headers, int $limit): void
    {
        for ($left = $limit - 1; $left >= 0; --$left) {
            [$status, $h] = $app->get($path, $headers);
            self::assertSame([200, (string) $limit, (string) $left], [$status, $h['x-ratelimit-limit'] ?? null, $h['x-ratelimit-remaining'] ?? null], $app->log());
            self::assertArrayNotHasKey('retry-after', $h);
        }
        for ($i = 0; $i < 2; ++$i) {
            [$status, $h] = $app->get($path, $headers);
            self::assertSame([429, (string) $limit, '0'], [$status, $h['x-ratelimit-limit'], $h['x-ratelimit-remaining']]);
            self::assertEqualsWithDelta(60, (int) $h['retry-after'], 1);
            self::assertEqualsWithDelta(time() + (int) $h['retry-after'], (int) $h['x-ratelimit-reset'], 1);
        }
    }

    private function json(App $app, string $path): array
    {
        [$status, , $body] = $app->get($path);
        self::assertSame(200, $status, $body);

        return json_decode($body, true, 512, JSON_THROW_ON_ERROR);
    }

    /** How many times the server ran rl's <verb> (RL.<VERB>, or FCALL rl_<verb> on the library). */
    private function rlCalls(Server $server, string $verb): int
    {
        $stats = $server->call('INFO', 'commandstats');
        if (\Rl\Edition::Module === $server->edition()) {
            return preg_match('/^cmdstat_rl\.'.$verb.':calls=(\d+)/m', $stats, $m) ? (int) $m[1] : 0;
        }
        // The library's calls are FCALLs; Valkey counts each function's calls in FUNCTION STATS only while it
        // runs, so count FCALLs: every FCALL here is one of rl's.
        return preg_match('/^cmdstat_fcall:calls=(\d+)/m', $stats, $m) ? (int) $m[1] : 0;
    }
}
