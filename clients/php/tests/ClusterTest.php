<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Client;
use Rl\Edition;
use Rl\Limiter;
use Rl\Slot;
use Rl\Tests\Support\App;
use Rl\Tests\Support\Cluster;

/**
 * A three-primary Cluster through phpredis's RedisCluster (and Predis's
 * cluster for the typed calls): every call goes to its key's node, on the
 * module (Redis 7.0) and on the library (Valkey 9.1); the Symfony and
 * Laravel apps over HTTP on the module's Cluster, Laravel's with its Redis
 * key prefix set (rl's keys do not take it).
 */
final class ClusterTest extends TestCase
{
    /** @var array<string, Cluster> */
    private static array $clusters = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$clusters as $cluster) {
            $cluster->stop();
        }
        self::$clusters = [];
    }

    /** @return iterable<string, array{string, string}> */
    public static function cases(): iterable
    {
        yield 'redis7 module (RedisCluster)' => ['redis7', 'phpredis'];
        yield 'valkey9 library (RedisCluster)' => ['valkey9', 'phpredis'];
        yield 'redis7 module (Predis cluster)' => ['redis7', 'predis'];
    }

    /** @dataProvider cases */
    public function testEveryCallGoesToItsKeysNode(string $kind, string $via): void
    {
        $cluster = self::cluster($kind);
        $redis = 'phpredis' === $via ? $cluster->phpredis() : new \Predis\Client(array_map(fn ($s) => "tcp://$s", $cluster->seeds()), ['cluster' => 'redis']);
        $rl = new Client($redis);
        // Keys on every node: users chosen until each node holds one.
        $keys = [];
        for ($i = 0; \count($keys) < 3; ++$i) {
            $keys[$cluster->nodeOf("rl:c:user:$i")->port] ??= "rl:c:user:$i";
        }
        foreach ($keys as $port => $key) {
            self::assertTrue($rl->slide($key, 2, 60_000)->allowed);
            self::assertTrue($rl->fixed("$key:f", 2, 60_000)->allowed);
            self::assertSame(1, $rl->throttle("$key:t", 0, 1, 60_000)->granted);
            self::assertFalse($rl->throttle("$key:t", 0, 1, 60_000)->allowed);
            self::assertSame(0, $rl->peek($key, Limiter::slide(2, 60_000))->remaining);
            self::assertSame(1, (int) $cluster->nodeOf($key)->call('EXISTS', $key), "$key on its node");
            $lease = $rl->acquire("$key:j", 1, 60_000);
            self::assertTrue($rl->release("$key:j", $lease->lease)->allowed);
            self::assertTrue($rl->delete("$key:f"));
        }
        // RL.ALL: keys of one slot (a hash tag).
        $all = $rl->all(['rl:c:{acme}:s', Limiter::slide(10, 1000)], ['rl:c:{acme}:h', Limiter::buckets(100, 3_600_000)]);
        self::assertTrue($all->allowed);
        self::assertSame(Slot::of('rl:c:{acme}:s'), Slot::of('rl:c:{acme}:h'));
        self::assertSame(1, (int) $cluster->nodeOf('rl:c:{acme}:h')->call('EXISTS', 'rl:c:{acme}:h'));
        self::assertSame($cluster->nodes[0]->edition(), $rl->edition());
    }

    public function testLoadLibraryLoadsEveryPrimary(): void
    {
        $cluster = Cluster::start('valkey9-bare');
        try {
            $rl = new Client($cluster->phpredis());
            $rl->loadLibrary();
            foreach ($cluster->nodes as $node) {
                self::assertSame(Client::VERSION, $node->call('FCALL_RO', 'rl_version', '0'));
            }
            self::assertTrue($rl->slide('rl:c:loaded', 1, 1000)->allowed);
            self::assertSame(Edition::Library, $rl->edition());
        } finally {
            $cluster->stop();
        }
    }

    public function testSymfonyAppOverHttp(): void
    {
        $cluster = self::cluster('redis7');
        $app = App::start(__DIR__.'/apps/symfony.php', ['RL_REDIS' => implode(',', $cluster->seeds()), 'RL_CLIENT' => 'cluster', 'RL_POLICY' => 'sliding_window']);
        try {
            foreach (['u1', 'u2', 'u3', 'u4'] as $user) {
                for ($left = 4; $left >= 0; --$left) {
                    [$status, $headers] = $app->get('/', ['X-User' => $user]);
                    self::assertSame([200, (string) $left], [$status, $headers['x-ratelimit-remaining']], $app->log());
                }
                [$status, $headers] = $app->get('/', ['X-User' => $user]);
                self::assertSame(429, $status);
                self::assertGreaterThanOrEqual(59, (int) $headers['retry-after']);
                self::assertSame(1, (int) $cluster->nodeOf("rl:sf:api-$user")->call('EXISTS', "rl:sf:api-$user"));
            }
        } finally {
            $app->stop();
        }
        self::assertGreaterThan(1, \count(array_unique(array_map(fn ($u) => $cluster->nodeOf("rl:sf:api-$u")->port, ['u1', 'u2', 'u3', 'u4']))), 'the users\' keys are on more than one node');
    }

    public function testLaravelAppOverHttp(): void
    {
        $cluster = self::cluster('redis7');
        $app = LaravelHttpTest::app(implode(',', $cluster->seeds()), ['RL_CLIENT' => 'cluster']);
        try {
            (new LaravelHttpTest('x'))->assertBurstThen429($app, '/fixed', [], 3);
            // Two limits whose keys are in different slots: one RL.FIXED each.
            foreach ([2, 1, 0] as $left) {
                [$status, $headers] = $app->get('/uploads', ['X-User' => 'a', 'X-Team' => 't']);
                self::assertSame([200, (string) $left], [$status, $headers['x-ratelimit-remaining']], $app->log());
            }
            self::assertSame(429, $app->get('/uploads', ['X-User' => 'a', 'X-Team' => 't'])[0]);
        } finally {
            $app->stop();
        }
        foreach ($cluster->nodes as $node) {
            self::assertStringNotContainsString('errorstat_MOVED', $node->call('INFO', 'errorstats'), 'every call went to its key\'s node first (Laravel\'s prefix did not reroute it)');
        }
        $user = 'rl:lv:'.md5('uploadsuser:a');
        self::assertSame('3', $cluster->nodeOf($user)->call('GET', $user), 'rl\'s key without Laravel\'s prefix, on its node');
    }

    private static function cluster(string $kind): Cluster
    {
        $cluster = self::$clusters[$kind] ??= Cluster::start($kind);
        $cluster->flush();

        return $cluster;
    }
}
