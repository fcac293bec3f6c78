<?php

declare(strict_types=1);

namespace Rl\Laravel;

use Illuminate\Cache\RateLimiter as CacheRateLimiter;
use Illuminate\Support\ServiceProvider;
use Rl\Client;
use Rl\Edition;

/**
 * The one line that moves a Laravel app's rate limits to rl (config/app.php
 * providers, or bootstrap/providers.php): the RateLimiter facade and
 * RateLimiter::for() get rl's RateLimiter, and the throttle middleware
 * alias rl's ThrottleRequests.
 *
 * Config (optional, config/rl.php or any config file's "rl" key):
 *   rl.connection  the Redis connection of config/database.php (default "default")
 *   rl.prefix      the keys' prefix (default "rl:lv:")
 *   rl.edition     "module" or "library": the edition the server runs, so
 *                  that each request's first call need not find it (PHP
 *                  forgets it between requests; on the library, finding it
 *                  costs two more round trips). Wrong, it is found again.
 */
class RlServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->app->singleton(Client::class, function ($app) {
            $connection = $app['redis']->connection($app['config']->get('rl.connection', 'default'));

            $edition = $app['config']->get('rl.edition');

            // PhpRedisConnection, PhpRedisClusterConnection, PredisConnection: their client.
            return new Client($connection->client(), null === $edition ? null : Edition::from($edition));
        });
        $make = fn ($app) => new RateLimiter($app->make(Client::class), $app['config']->get('rl.prefix', 'rl:lv:'));
        if (!$this->app->bound(CacheRateLimiter::class)) {
            $this->app->singleton(CacheRateLimiter::class, $make);
        }
        // Laravel's CacheServiceProvider (deferred) binds its own limiter when first asked for: replace it then.
        $this->app->extend(CacheRateLimiter::class, fn ($limiter, $app) => $limiter instanceof RateLimiter
            ? $limiter
            : $make($app)->adopt($limiter));
        $this->app->alias(CacheRateLimiter::class, RateLimiter::class);
    }

    public function boot(): void
    {
        // After the HTTP kernel gave the router its aliases: this one wins.
        $this->app['router']->aliasMiddleware('throttle', ThrottleRequests::class);
    }
}
