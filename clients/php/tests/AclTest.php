<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Client;
use Rl\Edition;
use Rl\Limiter;
use Rl\ServerException;
use Rl\Tests\Support\App;
use Rl\Tests\Support\Paths;
use Rl\Tests\Support\Registry;
use Rl\Tests\Support\Server;

/**
 * A user made by the README's ACL recipe, as written (+@ratelimit ~rl:*;
 * module ACL categories: Valkey 9.1): every verb, the Symfony app and the
 * Laravel app limit with nothing else granted, COMMAND refused to it, and
 * write only rl: keys.
 */
final class AclTest extends TestCase
{
    private static function recipe(Server $server): array
    {
        preg_match('/`(ACL SETUSER [^`]+)`/', (string) file_get_contents(Paths::root().'/README.md'), $m);
        self::assertNotEmpty($m, 'README.md has no `ACL SETUSER ...` recipe');
        $words = preg_split('/\s+/', $m[1]);
        $server->call(...$words);
        $password = substr(current(array_filter($words, fn ($w) => str_starts_with($w, '>'))), 1);

        return [$words[2], $password];
    }

    /** @return iterable<string, array{string}> */
    public static function clients(): iterable
    {
        yield 'phpredis' => ['phpredis'];
        yield 'predis' => ['predis'];
    }

    /** @dataProvider clients */
    public function testEveryVerbAsTheRecipesUser(string $via): void
    {
        $server = Registry::fresh('valkey9-module');
        [$user, $password] = self::recipe($server);
        if ('phpredis' === $via) {
            $redis = $server->phpredis();
            $redis->auth([$user, $password]);
            try {
                $redis->rawCommand('COMMAND', 'INFO', 'rl.slide');
                self::fail('the recipe\'s user may send COMMAND: the test shows nothing');
            } catch (\RedisException $e) {
                self::assertStringStartsWith('NOPERM', $e->getMessage());
            }
        } else {
            $redis = new \Predis\Client(['host' => '127.0.0.1', 'port' => $server->port, 'username' => $user, 'password' => $password]);
        }
        $rl = new Client($redis);
        self::assertSame(Edition::Module, $rl->edition());
        self::assertTrue($rl->slide('rl:acl:s', 1, 60_000)->allowed);
        self::assertFalse($rl->slide('rl:acl:s', 1, 60_000)->allowed);
        self::assertTrue($rl->buckets('rl:acl:b', 1, 60_000)->allowed);
        self::assertTrue($rl->throttle('rl:acl:t', 0, 1, 60_000)->allowed);
        self::assertTrue($rl->fixed('rl:acl:f', 2, 60_000)->allowed);
        self::assertTrue($rl->peek('rl:acl:f', Limiter::fixed(2, 60_000))->allowed);
        self::assertSame(1, $rl->refund('rl:acl:f', Limiter::fixed(2, 60_000))->granted);
        self::assertSame(3, $rl->charge('rl:acl:f', Limiter::fixed(2, 60_000), 3)->granted);
        self::assertTrue($rl->all(['rl:acl:{a}:1', Limiter::slide(1, 1000)], ['rl:acl:{a}:2', Limiter::fixed(1, 1000)])->allowed);
        $lease = $rl->acquire('rl:acl:j', 1, 60_000);
        self::assertTrue($rl->renew('rl:acl:j', $lease->lease, 60_000)->allowed);
        self::assertTrue($rl->release('rl:acl:j', $lease->lease)->allowed);
        self::assertGreaterThan(0, $rl->block('rl:acl:ban', 'SLIDE', 1000));
        self::assertTrue($rl->unblock('rl:acl:ban', 'SLIDE'));
        // A key outside rl: is the user's own error; the client goes on.
        $fresh = new Client($redis);
        try {
            $fresh->slide('other:acl', 1, 1000);
            self::fail('no error');
        } catch (ServerException $e) {
            self::assertStringStartsWith('NOPERM', $e->getMessage());
        }
        self::assertTrue($fresh->slide('rl:acl:after', 1, 1000)->allowed);
        foreach ($server->call('KEYS', '*') as $key) {
            self::assertStringStartsWith('rl:', $key);
        }
        $server->call('ACL', 'DELUSER', $user);
    }

    public function testTheAppsAsTheRecipesUser(): void
    {
        $server = Registry::fresh('valkey9-module');
        [$user, $password] = self::recipe($server);
        $env = ['RL_REDIS' => $server->address(), 'RL_USER' => $user, 'RL_PASSWORD' => $password];
        $app = App::start(__DIR__.'/apps/symfony.php', $env + ['RL_POLICY' => 'token_bucket']);
        try {
            self::assertSame([200, 200, 200, 200, 200, 429], array_map(fn () => $app->get('/', ['X-User' => 'acl'])[0], range(1, 6)), $app->log());
        } finally {
            $app->stop();
        }
        // Predis: Laravel 8's phpredis connector sends a password only, never a user name.
        $app = LaravelHttpTest::app($server, ['RL_CLIENT' => 'predis', 'RL_USER' => $user, 'RL_PASSWORD' => $password]);
        try {
            (new LaravelHttpTest('x'))->assertBurstThen429($app, '/fixed', [], 3);
            self::assertSame(200, $app->get('/uploads', ['X-User' => 'a', 'X-Team' => 't'])[0], $app->log());
        } finally {
            $app->stop();
        }
        $keys = $server->call('KEYS', '*');
        sort($keys);
        self::assertCount(4, $keys);
        foreach ($keys as $key) {
            self::assertMatchesRegularExpression('/^rl:(sf|lv):/', $key);
        }
        $server->call('ACL', 'DELUSER', $user);
    }
}
