<?php

declare(strict_types=1);

// Runs one sequence of consume()/reserve() calls through Symfony's own
// limiter (RateLimiterFactory over its Redis cache pool and Redis lock) and
// through rl's (RlRateLimiterFactory), on the same server, step by step,
// each step first moving the stopped clock this process and the server
// share (libfaketime reads FAKETIME_TIMESTAMP_FILE, the file written here).
// Input (stdin, JSON): {address, clockFile, startMs, config, steps: [{advanceMs, op, tokens}]}.
// Output (stdout, JSON): per step {nowMs, symfony: result, rl: result}, a
// result {accepted, remaining, retryAfterMs, limit, timeToActMs?} or {error}.
require __DIR__.'/../autoload.php';
require __DIR__.'/../debian.php';

use Rl\Symfony\RlRateLimiterFactory;
use Rl\Tests\Support\Clock;
use Symfony\Component\Cache\Adapter\RedisAdapter;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\RateLimiterFactory;
use Symfony\Component\RateLimiter\Reservation;
use Symfony\Component\RateLimiter\Storage\CacheStorage;

$in = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
[$host, $port] = explode(':', $in['address']);
$redis = new Redis();
$redis->connect($host, (int) $port, 5.0);

$setClock = static function (int $ms) use ($in): void {
    file_put_contents($in['clockFile'].'.part', Clock::text($ms));
    rename($in['clockFile'].'.part', $in['clockFile']);
};
$now = $in['startMs'];
$setClock($now);
if (abs(microtime(true) * 1000 - $now) > 1) {
    fwrite(STDERR, 'this process\'s clock is not the stopped one: run it with LD_PRELOAD=libfaketime'.PHP_EOL);
    exit(2);
}

$limiters = [
    'symfony' => (new RateLimiterFactory($in['config'], new CacheStorage(new RedisAdapter($redis)), new LockFactory(new RedisStore($redis))))->create('side'),
    'rl' => (new RlRateLimiterFactory($in['config'], $redis))->create('side'),
];
$ms = static fn (DateTimeImmutable $t): int => (int) round((float) $t->format('U.u') * 1000);
$result = static fn (RateLimit $r): array => ['accepted' => $r->isAccepted(), 'remaining' => $r->getRemainingTokens(), 'retryAfterMs' => $ms($r->getRetryAfter()), 'limit' => $r->getLimit()];

$out = [];
foreach ($in['steps'] as $step) {
    $now += $step['advanceMs'];
    $setClock($now);
    $row = ['nowMs' => $now];
    foreach ($limiters as $name => $limiter) {
        try {
            if ('reserve' === $step['op']) {
                $r = $limiter->reserve($step['tokens'], $step['maxTime'] ?? null);
                $row[$name] = $result($r->getRateLimit()) + ['timeToActMs' => (int) round($r->getTimeToAct() * 1000)];
            } else {
                $row[$name] = $result($limiter->consume($step['tokens']));
            }
        } catch (Throwable $e) {
            $row[$name] = ['error' => get_class($e).': '.$e->getMessage()];
        }
    }
    $out[] = $row;
}
echo json_encode($out), PHP_EOL;
