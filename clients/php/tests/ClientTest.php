<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Client;
use Rl\Limiter;
use Rl\ServerException;
use Rl\Tests\Support\Clients;
use Rl\Tests\Support\Registry;

/**
 * Every verb of Rl\Client, on Redis 7.0 with the module and Valkey 9.1 with
 * only the library, through phpredis and through Predis: each one command,
 * its reply typed.
 */
final class ClientTest extends TestCase
{
    /** @dataProvider matrix */
    public function testLimitersAdmitThenRefuse(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        foreach ([[true, 1], [true, 0], [false, 0]] as $i => [$allowed, $remaining]) {
            $d = $rl->slide('rl:t:slide', 2, 60_000);
            self::assertSame([$allowed, $remaining], [$d->allowed, $d->remaining], "slide call $i");
        }
        self::assertGreaterThan(59_000, $d->retryAfterMs);
        self::assertSame(0, $d->granted);

        $d = $rl->buckets('rl:t:buckets', 5, 60_000, cost: 3, precisionMs: 1000);
        self::assertSame([true, 2, 0, 3], [$d->allowed, $d->remaining, $d->retryAfterMs, $d->granted]);
        $d = $rl->buckets('rl:t:buckets', 5, 60_000, cost: 3, precisionMs: 1000);
        self::assertSame([false, 2], [$d->allowed, $d->remaining]);

        // A bucket of 3, 1 a second: 3 at once, then refused for about a second.
        foreach ([2, 1, 0] as $left) {
            self::assertSame([true, $left], [($d = $rl->throttle('rl:t:throttle', 2, 1, 1000))->allowed, $d->remaining]);
        }
        $d = $rl->throttle('rl:t:throttle', 2, 1, 1000);
        self::assertFalse($d->allowed);
        self::assertGreaterThan(900, $d->retryAfterMs);
        self::assertLessThanOrEqual(1000, $d->retryAfterMs);

        $d = $rl->fixed('rl:t:fixed', 3, 60_000, cost: 2);
        self::assertSame([true, 1, 2], [$d->allowed, $d->remaining, $d->granted]);
        $d = $rl->fixed('rl:t:fixed', 3, 60_000, cost: 2);
        self::assertSame([false, 1, 0], [$d->allowed, $d->remaining, $d->granted]);
        self::assertSame('2', $server->call('GET', 'rl:t:fixed'));
    }

    /** @dataProvider matrix */
    public function testOptions(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        // UPTO: what fits of 3 when 1 is left.
        $rl->fixed('rl:t:upto', 3, 60_000, cost: 2);
        $d = $rl->fixed('rl:t:upto', 3, 60_000, cost: 3, upto: true);
        self::assertSame([true, 0, 1], [$d->allowed, $d->remaining, $d->granted]);
        $d = $rl->throttle('rl:t:upto2', 9, 10, 1000, quantity: 8, upto: true);
        self::assertSame([true, 8], [$d->allowed, $d->granted]);
        $d = $rl->throttle('rl:t:upto2', 9, 10, 1000, quantity: 5, upto: true);
        self::assertSame([true, 2, 0], [$d->allowed, $d->granted, $d->remaining]);
        // BLOCK: a refusal blocks the key for the time given.
        $rl->slide('rl:t:block', 1, 60_000, blockMs: 120_000);
        $d = $rl->slide('rl:t:block', 1, 60_000, blockMs: 120_000);
        self::assertFalse($d->allowed);
        self::assertGreaterThan(119_000, $d->retryAfterMs);
        // Quantity 0 only looks.
        $d = $rl->throttle('rl:t:look', 4, 1, 1000, quantity: 0);
        self::assertSame([true, 5], [$d->allowed, $d->remaining]);
        self::assertSame(0, (int) $server->call('EXISTS', 'rl:t:look'));
    }

    /** @dataProvider matrix */
    public function testPeekRefundChargeWriteAsDocumented(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $slide = Limiter::slide(3, 60_000);
        // remaining: what the peeked request (one unit) would leave.
        $d = $rl->peek('rl:t:peek', $slide);
        self::assertSame([true, 2], [$d->allowed, $d->remaining]);
        self::assertSame(0, (int) $server->call('EXISTS', 'rl:t:peek'));
        $rl->slide('rl:t:peek', 3, 60_000, cost: 2);
        $d = $rl->peek('rl:t:peek', $slide, oldest: true);
        self::assertSame([true, 0], [$d->allowed, $d->remaining]);
        self::assertGreaterThan(59_000, $d->oldestMs);

        $back = $rl->refund('rl:t:peek', Limiter::slide(3, 60_000, cost: 2));
        // remaining: what one more unit would leave after the refund.
        self::assertSame([true, 2, 2], [$back->allowed, $back->granted, $back->remaining]);

        $charged = $rl->charge('rl:t:charge', Limiter::fixed(5, 60_000), 7);
        self::assertSame([true, 7, 0], [$charged->allowed, $charged->granted, $charged->remaining]);
        self::assertFalse($rl->fixed('rl:t:charge', 5, 60_000)->allowed);
        $charged = $rl->charge('rl:t:charge2', Limiter::throttle(4, 1, 1000), 2);
        self::assertSame([2, 2], [$charged->granted, $charged->remaining]);
    }

    /** @dataProvider matrix */
    public function testBlockAndUnblock(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $end = $rl->block('rl:t:ban', Limiter::fixed(10, 60_000), 30_000);
        self::assertEqualsWithDelta(microtime(true) * 1000 + 30_000, $end, 5_000);
        $d = $rl->fixed('rl:t:ban', 10, 60_000);
        self::assertFalse($d->allowed);
        self::assertTrue($rl->unblock('rl:t:ban', 'fixed'));
        self::assertFalse($rl->unblock('rl:t:ban', 'FIXED'));
        self::assertTrue($rl->fixed('rl:t:ban', 10, 60_000)->allowed);
    }

    /** @dataProvider matrix */
    public function testAllIsAllOrNothing(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $clauses = [['rl:t:{u}:s', Limiter::slide(2, 1000)], ['rl:t:{u}:h', Limiter::buckets(1, 3_600_000)], ['rl:t:{u}:j', Limiter::acquire(3, 60_000)]];
        $all = $rl->all(...$clauses);
        self::assertTrue($all->allowed);
        self::assertSame([1, 0, 2], array_map(fn ($d) => $d->remaining, $all->clauses));
        self::assertIsString($all->clauses[2]->lease);
        $all = $rl->all(...$clauses);
        self::assertFalse($all->allowed);
        self::assertGreaterThan(3_500_000, $all->retryAfterMs);
        self::assertSame([true, false, true], array_map(fn ($d) => $d->allowed, $all->clauses));
        self::assertNull($all->clauses[2]->lease);
        // Nothing recorded by the refusal: the slide clause still admits one.
        self::assertTrue($rl->peek('rl:t:{u}:s', Limiter::slide(2, 1000))->allowed);
    }

    /** @dataProvider matrix */
    public function testLeases(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $a = $rl->acquire('rl:t:jobs', 2, 60_000);
        $b = $rl->acquire('rl:t:jobs', 2, 60_000, id: 'job-b');
        self::assertSame([true, 1, true, 0, 'job-b'], [$a->allowed, $a->remaining, $b->allowed, $b->remaining, $b->lease]);
        $c = $rl->acquire('rl:t:jobs', 2, 60_000);
        self::assertSame([false, null], [$c->allowed, $c->lease]);
        $renewed = $rl->renew('rl:t:jobs', 'job-b', 120_000);
        self::assertSame([true, 2], [$renewed->allowed, $renewed->remaining]);
        $released = $rl->release('rl:t:jobs', $a->lease);
        self::assertSame([true, 1], [$released->allowed, $released->remaining]);
        self::assertFalse($rl->release('rl:t:jobs', $a->lease)->allowed);
        self::assertTrue($rl->delete('rl:t:jobs'));
        self::assertFalse($rl->delete('rl:t:jobs'));
    }

    /** @dataProvider matrix */
    public function testServerErrorsCarryTheServersText(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $server->call('SET', 'rl:t:str', 'x');
        try {
            $rl->slide('rl:t:str', 2, 1000);
            self::fail('no error');
        } catch (ServerException $e) {
            self::assertSame('WRONGTYPE Operation against a key holding the wrong kind of value', $e->getMessage());
        }
        try {
            $rl->slide('rl:t:cost', 2, 1000, cost: 3);
            self::fail('no error');
        } catch (ServerException $e) {
            self::assertSame('ERR COST must not exceed limit', $e->getMessage());
        }
        self::assertSame('x', $server->call('GET', 'rl:t:str'));
        // The client goes on after an error.
        self::assertTrue($rl->slide('rl:t:ok', 2, 1000)->allowed);
    }

    /** @return iterable<string, array{string, \Closure(Client): mixed, string}> */
    public static function badArguments(): iterable
    {
        yield 'limit 0' => [fn (Client $rl) => $rl->slide('rl:x', 0, 1000), 'rl: SLIDE limit must be at least 1, not 0'];
        yield 'negative cost' => [fn (Client $rl) => $rl->fixed('rl:x', 5, 1000, cost: -1), 'rl: FIXED cost must be at least 1, not -1'];
        yield 'fractional window' => [fn (Client $rl) => $rl->buckets('rl:x', 5, 1000.5), 'rl: BUCKETS windowMs must be a positive whole number of milliseconds, not 1000.5'];
        yield 'zero period' => [fn (Client $rl) => $rl->throttle('rl:x', 1, 1, 0), 'rl: THROTTLE periodMs must be a positive whole number of milliseconds, not 0'];
        yield 'negative quantity' => [fn (Client $rl) => $rl->throttle('rl:x', 1, 1, 1000, quantity: -2), 'rl: THROTTLE quantity must be zero or more, not -2'];
        yield 'negative burst' => [fn (Client $rl) => $rl->throttle('rl:x', -1, 1, 1000), 'rl: THROTTLE maxBurst must be zero or more, not -1'];
        yield 'fractional block' => [fn (Client $rl) => $rl->slide('rl:x', 1, 1000, blockMs: 0.5), 'rl: SLIDE blockMs must be a positive whole number of milliseconds, not 0.5'];
        yield 'charge 0' => [fn (Client $rl) => $rl->charge('rl:x', Limiter::fixed(1, 1000), 0), 'rl: CHARGE cost must be at least 1, not 0'];
        yield 'bad lease' => [fn (Client $rl) => $rl->renew('rl:x', 'a', 1.25), 'rl: RENEW leaseMs must be a positive whole number of milliseconds, not 1.25'];
        yield 'no clause' => [fn (Client $rl) => $rl->all(), 'rl: ALL needs at least one clause'];
        yield 'bad clause' => [fn (Client $rl) => $rl->all(['rl:x', 'SLIDE']), 'rl: ALL clause 1 must be [string $key, Limiter $limiter]'];
        yield 'bad limiter name' => [fn (Client $rl) => $rl->unblock('rl:x', 'window'), 'rl: limiter must be SLIDE, BUCKETS, THROTTLE or FIXED, not "window"'];
    }

    /**
     * @dataProvider badArguments
     *
     * @param \Closure(Client): mixed $call
     */
    public function testBadArgumentsAreRefusedBeforeAnythingIsSent(\Closure $call, string $message): void
    {
        $server = Registry::fresh('redis7');
        $rl = new Client($server->phpredis());
        $before = $this->commandsProcessed($server);
        try {
            $call($rl);
            self::fail('no exception');
        } catch (\InvalidArgumentException $e) {
            self::assertSame($message, $e->getMessage());
        }
        // Only the INFO that reads the count ran.
        self::assertSame($before + 1, $this->commandsProcessed($server));
    }

    public function testClientRefusesWhatIsNotARedisClient(): void
    {
        $this->expectExceptionMessage('rl: Client takes a \Redis, \RedisCluster or \Predis\ClientInterface, not stdClass');
        new Client(new \stdClass());
    }

    public function testVersionIsTheRelease(): void
    {
        $cargo = (string) file_get_contents(\Rl\Tests\Support\Paths::root().'/Cargo.toml');
        self::assertMatchesRegularExpression('/^version = "'.preg_quote(Client::VERSION, '/').'"$/m', $cargo);
    }

    public static function matrix(): array
    {
        return Clients::matrix();
    }

    private function commandsProcessed(\Rl\Tests\Support\Server $server): int
    {
        preg_match('/total_commands_processed:(\d+)/', $server->call('INFO', 'stats'), $m);

        return (int) $m[1];
    }
}
