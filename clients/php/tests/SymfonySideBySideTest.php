<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Tests\Support\Clock;
use Rl\Tests\Support\Server;

/**
 * The same consume()/reserve() calls through Symfony's own limiter (its
 * Redis cache pool and lock) and through rl's, side by side in one process
 * (apps/side-by-side.php) on one Valkey 9.1, with the module and with only
 * the library, on a clock stopped for both (libfaketime) and moved between
 * calls. Where the algorithms agree, every answer is the same; where they
 * cannot (Symfony's sliding window is an estimate from two fixed windows),
 * the bound docs/clients.md states is checked.
 */
final class SymfonySideBySideTest extends TestCase
{
    private const SEED = 47;

    /** @return iterable<string, array{string}> */
    public static function editions(): iterable
    {
        yield 'module' => ['valkey9-module'];
        yield 'library' => ['valkey9'];
    }

    /**
     * Fixed window, 5 per 10 s, the clock moved by multiples of 300 ms (a
     * window's end, 10 s after its first hit, is never a step: there
     * Symfony's window still counts for that instant and rl's has ended).
     * The same acceptances and remaining tokens; getRetryAfter() the same
     * instant once rounded as Symfony rounds (down to a whole second now,
     * the wait up to whole seconds).
     *
     * @dataProvider editions
     */
    public function testFixedWindowAgrees(string $kind): void
    {
        mt_srand(self::SEED);
        $steps = [];
        for ($i = 0; $i < 120; ++$i) {
            $steps[] = ['advanceMs' => [0, 0, 0, 300, 600, 900, 1500, 3000, 6000][mt_rand(0, 8)], 'op' => 'consume', 'tokens' => [1, 1, 1, 2, 3, 5][mt_rand(0, 5)]];
        }
        $rows = $this->sideBySide($kind, ['id' => 'api', 'policy' => 'fixed_window', 'limit' => 5, 'interval' => '10 seconds'], $steps);
        $accepted = 0;
        foreach ($rows as $i => ['nowMs' => $now, 'symfony' => $sf, 'rl' => $rl]) {
            $at = "step $i at +".($now - $rows[0]['nowMs']).' ms: '.json_encode([$sf, $rl]);
            self::assertSame([$sf['accepted'], $sf['remaining'], 5], [$rl['accepted'], $rl['remaining'], $rl['limit']], $at);
            if ($rl['accepted']) {
                ++$accepted;
                self::assertSame([intdiv($now, 1000) * 1000, $now], [$sf['retryAfterMs'], $rl['retryAfterMs']], $at);
            } else {
                $wait = (int) ceil(($rl['retryAfterMs'] - $now) / 1000);
                self::assertSame(intdiv($now + $wait * 1000, 1000) * 1000, $sf['retryAfterMs'], $at);
            }
        }
        self::assertGreaterThan(20, $accepted);
        self::assertLessThan(\count($rows) - 20, $accepted, 'the sequence reaches the limit often');
    }

    /**
     * Token bucket of 5, 1 token every 2 s, the clock moved by whole
     * intervals from the bucket's first call (Symfony adds tokens at each
     * interval's end, rl one every interval from the last take: on those
     * steps they hold the same tokens). Then reserve(): the tokens taken
     * now and the reservation acting when they have dripped back, beyond
     * maxTime refused without taking them.
     *
     * @dataProvider editions
     */
    public function testTokenBucketAgrees(string $kind): void
    {
        mt_srand(self::SEED);
        $config = ['id' => 'api', 'policy' => 'token_bucket', 'limit' => 5, 'rate' => ['interval' => '2 seconds', 'amount' => 1]];
        $steps = [];
        for ($i = 0; $i < 120; ++$i) {
            $steps[] = ['advanceMs' => [0, 0, 0, 2000, 2000, 4000, 6000, 12000, 30000][mt_rand(0, 8)], 'op' => 'consume', 'tokens' => [1, 1, 1, 2, 3][mt_rand(0, 4)]];
        }
        $rows = $this->sideBySide($kind, $config, $steps);
        foreach ($rows as $i => ['nowMs' => $now, 'symfony' => $sf, 'rl' => $rl]) {
            $at = "step $i: ".json_encode([$sf, $rl]);
            self::assertSame([$sf['accepted'], $sf['remaining'], $sf['limit']], [$rl['accepted'], $rl['remaining'], $rl['limit']], $at);
            self::assertSame($sf['retryAfterMs'], $rl['retryAfterMs'], $at);
        }

        $reserve = [
            ['advanceMs' => 0, 'op' => 'consume', 'tokens' => 5],
            ['advanceMs' => 0, 'op' => 'reserve', 'tokens' => 2],
            ['advanceMs' => 2000, 'op' => 'consume', 'tokens' => 1],
            ['advanceMs' => 4000, 'op' => 'consume', 'tokens' => 1],
            ['advanceMs' => 0, 'op' => 'reserve', 'tokens' => 1, 'maxTime' => 1.0],
            ['advanceMs' => 2000, 'op' => 'consume', 'tokens' => 1],
            ['advanceMs' => 0, 'op' => 'reserve', 'tokens' => 3, 'maxTime' => 10.0],
            ['advanceMs' => 10000, 'op' => 'consume', 'tokens' => 1],
        ];
        $rows = $this->sideBySide($kind, $config + [], $reserve, 'reserve');
        $want = [
            [true, 0, null], // the bucket emptied
            [false, 0, 4000], // 2 reserved: acting in 4 s
            [false, 0, null], // in debt
            [true, 0, null], // the debt repaid, one token back
            'MaxWaitDurationExceededException', // 2 s is past 1 s: nothing taken
            [true, 0, null],
            [false, 0, 6000],
            [true, 0, null], // 10 s: the 3 reserved came back, and 2 more
        ];
        foreach ($rows as $i => ['nowMs' => $now, 'symfony' => $sf, 'rl' => $rl]) {
            $at = "reserve step $i: ".json_encode([$sf, $rl]);
            if (\is_string($want[$i])) {
                self::assertStringContainsString($want[$i], $sf['error'] ?? '', $at);
                self::assertStringContainsString($want[$i], $rl['error'] ?? '', $at);
                continue;
            }
            [$accepted, $remaining, $acts] = $want[$i];
            self::assertSame([$accepted, $accepted, max(0, $sf['remaining'])], [$sf['accepted'], $rl['accepted'], $rl['remaining']], $at);
            if (null !== $acts) {
                self::assertSame([$now + $acts, $now + $acts], [$sf['timeToActMs'], $rl['timeToActMs']], $at);
            }
        }
    }

    /**
     * Sliding window, 5 per 10 s. Symfony estimates the count from two fixed
     * windows (the previous one's hits, weighted by how much of it the
     * sliding window still covers, plus the current one's); rl's RL.BUCKETS
     * counts the hits in the window. Within Symfony's first window the two
     * are the same count, and so is every answer. After it, rl never admits
     * more than 5 in any 10 s, and Symfony at most 10 (twice the limit: a
     * window's hits late in it and the next window's early in it).
     *
     * @dataProvider editions
     */
    public function testSlidingWindowAgreesInTheFirstWindowThenIsBounded(string $kind): void
    {
        mt_srand(self::SEED);
        $steps = [];
        for ($i = 0; $i < 160; ++$i) {
            $steps[] = ['advanceMs' => [0, 0, 500, 500, 1000, 2000, 4000][mt_rand(0, 6)], 'op' => 'consume', 'tokens' => [1, 1, 1, 2][mt_rand(0, 3)]];
        }
        $rows = $this->sideBySide($kind, ['id' => 'api', 'policy' => 'sliding_window', 'limit' => 5, 'interval' => '10 seconds'], $steps);
        $start = $rows[0]['nowMs'];
        $admitted = ['symfony' => [], 'rl' => []];
        $compared = $differ = 0;
        foreach ($rows as $i => $row) {
            $now = $row['nowMs'];
            if ($now < $start + 10_000) {
                ++$compared;
                self::assertSame([$row['symfony']['accepted'], $row['symfony']['remaining']], [$row['rl']['accepted'], $row['rl']['remaining']], "step $i: ".json_encode($row));
            } elseif ($row['symfony']['accepted'] !== $row['rl']['accepted']) {
                ++$differ;
            }
            foreach ($admitted as $name => $_) {
                if ($row[$name]['accepted']) {
                    $admitted[$name][] = [$now, $steps[$i]['tokens']];
                }
            }
        }
        self::assertGreaterThan(5, $compared);
        self::assertGreaterThan(0, $differ, 'the sequence shows where the estimate and the count part');
        self::assertLessThanOrEqual(5, $this->mostInAnyWindow($admitted['rl'], 10_000));
        self::assertLessThanOrEqual(10, $this->mostInAnyWindow($admitted['symfony'], 10_000));
    }

    /** @param list<array{int, int}> $hits [time, tokens] */
    private function mostInAnyWindow(array $hits, int $windowMs): int
    {
        $most = 0;
        foreach ($hits as [$end]) {
            $in = 0;
            foreach ($hits as [$t, $tokens]) {
                if ($t > $end - $windowMs && $t <= $end) {
                    $in += $tokens;
                }
            }
            $most = max($most, $in);
        }

        return $most;
    }

    /**
     * @param list<array{advanceMs: int, op: string, tokens: int}> $steps
     *
     * @return list<array{nowMs: int, symfony: array, rl: array}>
     */
    private function sideBySide(string $kind, array $config, array $steps, string $key = 'side'): array
    {
        $server = Server::start($kind, true);
        try {
            $startMs = (intdiv($server->now(), 1000) + 2) * 1000;
            $input = json_encode(['address' => $server->address(), 'clockFile' => $server->clockFile(), 'startMs' => $startMs, 'config' => $config, 'steps' => $steps]);
            $process = proc_open([PHP_BINARY, __DIR__.'/apps/side-by-side.php'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, __DIR__, Clock::env($server->clockFile()) + getenv());
            fwrite($pipes[0], $input);
            fclose($pipes[0]);
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            $rc = proc_close($process);
            self::assertSame(0, $rc, "side-by-side.php exited $rc: $err $out");
            $rows = json_decode($out, true, 512, JSON_THROW_ON_ERROR);
            self::assertCount(\count($steps), $rows);

            return $rows;
        } finally {
            $server->stop();
        }
    }
}
