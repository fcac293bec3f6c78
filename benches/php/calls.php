<?php

declare(strict_types=1);

// The requests of benches/callgrind.sh's PHP rows, made by the libraries
// themselves (Debian's packages, as clients/php's tests use them): each
// request builds its limiter as a PHP request does (PHP keeps no object
// between requests) and makes one decision on a random subject of R.
//   symfony_<policy>  Symfony's RateLimiterFactory over its Redis cache pool
//                     (RedisAdapter) and Redis lock (RedisStore): consume(1)
//   php_<policy>      rl's RlRateLimiterFactory (clients/php): consume(1)
//                     <policy>: fixed (fixed_window), sliding (sliding_window),
//                     token (token_bucket); 100 a minute, a bucket of 100
//   laravel_redis     Laravel's ThrottleRequestsWithRedis: its DurationLimiter's
//                     acquire() (throttle:100,1)
//   php_laravel       rl's Laravel throttle middleware (throttle:100,1): one RL.FIXED
// Usage: php calls.php <row> <port> <requests> <subjects> [rounds]
//   rounds: instead, make that many requests with MONITOR on and print
//   "round_trips=<commands the client sent per request>".
require __DIR__.'/../../clients/php/tests/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';
require_once 'Symfony/Component/Cache/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
require_once 'Illuminate/autoload.php';

use Illuminate\Redis\Connections\PhpRedisConnection;
use Illuminate\Redis\Limiters\DurationLimiter;
use Rl\Client;
use Rl\Laravel\RateLimiter as RlLaravelLimiter;
use Rl\Symfony\RlRateLimiterFactory;
use Symfony\Component\Cache\Adapter\RedisAdapter;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\RateLimiter\RateLimiterFactory;
use Symfony\Component\RateLimiter\Storage\CacheStorage;

[, $row, $port, $requests, $subjects] = $argv + [4 => 2000];
$rounds = isset($argv[5]) ? (int) $argv[5] : 0;
$redis = new Redis();
$redis->connect('127.0.0.1', (int) $port, 30.0, null, 0, 120.0);

$policies = ['fixed' => 'fixed_window', 'sliding' => 'sliding_window', 'token' => 'token_bucket'];
$config = static fn (string $policy) => ['id' => "bench-$policy", 'policy' => $policies[$policy], 'limit' => 100, 'interval' => '1 minute',
    'rate' => ['interval' => '1 minute', 'amount' => 100]];
$request = match (true) {
    1 === preg_match('/^symfony_(fixed|sliding|token)$/', $row, $m) => static fn (string $user) => (new RateLimiterFactory(
        $config($m[1]),
        new CacheStorage(new RedisAdapter($redis)),
        new LockFactory(new RedisStore($redis)),
    ))->create($user)->consume(1),
    1 === preg_match('/^php_(fixed|sliding|token)$/', $row, $m) => static fn (string $user) => (new RlRateLimiterFactory($config($m[1]), $redis))->create($user)->consume(1),
    'laravel_redis' === $row => static fn (string $user) => (new DurationLimiter(new PhpRedisConnection($redis), sha1($user), 100, 60))->acquire(),
    'php_laravel' === $row => static fn (string $user) => (new RlLaravelLimiter(new Client($redis)))->decideAll([[sha1($user), 100, 60]]),
    default => throw new InvalidArgumentException("unknown row $row"),
};

if ($rounds > 0) {
    $monitor = stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 30);
    fwrite($monitor, "MONITOR\r\n");
    fgets($monitor);
    for ($i = 0; $i < $rounds; ++$i) {
        $request('u'.mt_rand(0, $subjects - 1));
    }
    $marker = 'rl-bench-marker-'.mt_rand();
    $redis->echo($marker);
    $sent = 0;
    while (false !== ($line = fgets($monitor))) {
        if (str_contains($line, $marker)) {
            break;
        }
        // Commands a script runs inside the server are tagged [<db> lua]: not round trips.
        if (str_starts_with($line, '+') && !preg_match('/\[\d+ lua\]/', $line)) {
            ++$sent;
        }
    }
    printf("round_trips=%.2f\n", $sent / $rounds);
    exit(0);
}
for ($i = 0; $i < $requests; ++$i) {
    $request('u'.mt_rand(0, $subjects - 1));
}
