<?php

declare(strict_types=1);

// A Symfony HttpKernel app limiting GET / per user (the X-User header, else
// the client's address), as Symfony's rate limiter docs do, served by PHP's
// built-in server (php -S 127.0.0.1:PORT apps/symfony.php). RL_LIMITER=symfony
// runs it on Symfony's own limiter (its Redis cache pool and lock) instead:
// the switch is the one line marked below. RL_POLICY picks the policy.
require __DIR__.'/../autoload.php';
require __DIR__.'/../debian.php';
require __DIR__.'/redis.php';

use Rl\Symfony\RlRateLimiterFactory;
use Symfony\Component\Cache\Adapter\RedisAdapter;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\RequestStack;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpKernel\Controller\ArgumentResolver;
use Symfony\Component\HttpKernel\Controller\ControllerResolver;
use Symfony\Component\HttpKernel\Event\RequestEvent;
use Symfony\Component\HttpKernel\HttpKernel;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\RateLimiter\RateLimiterFactory;
use Symfony\Component\RateLimiter\Storage\CacheStorage;

$config = [
    'id' => 'api',
    'policy' => getenv('RL_POLICY') ?: 'fixed_window',
    'limit' => 5,
    'interval' => '1 minute',
    'rate' => ['interval' => '10 seconds', 'amount' => 1],
];
$redis = rl_test_redis();
if ('symfony' === getenv('RL_LIMITER')) {
    // The app before the switch: Symfony's own limiter.
    $factory = new RateLimiterFactory($config, new CacheStorage(new RedisAdapter($redis)), new LockFactory(new RedisStore($redis)));
} else {
    $factory = new RlRateLimiterFactory($config, $redis); // was: new RateLimiterFactory($config, new CacheStorage(new RedisAdapter($redis)), new LockFactory(new RedisStore($redis)))
}

$api = static function (Request $request) use ($factory): Response {
    $limit = $factory->create($request->headers->get('X-User', $request->getClientIp()))->consume(1);
    $headers = [
        'X-RateLimit-Remaining' => $limit->getRemainingTokens(),
        'X-RateLimit-Retry-After' => $limit->getRetryAfter()->format('U.u'),
        'X-RateLimit-Limit' => $limit->getLimit(),
    ];
    if (!$limit->isAccepted()) {
        $headers['Retry-After'] = (int) ceil((float) $limit->getRetryAfter()->format('U.u') - microtime(true));

        return new Response('Too Many Requests', Response::HTTP_TOO_MANY_REQUESTS, $headers);
    }

    return new Response('hello', Response::HTTP_OK, $headers);
};

$dispatcher = new EventDispatcher();
$dispatcher->addListener(KernelEvents::REQUEST, static function (RequestEvent $event) use ($api): void {
    $event->getRequest()->attributes->set('_controller', $api);
});
$kernel = new HttpKernel($dispatcher, new ControllerResolver(), new RequestStack(), new ArgumentResolver());
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
