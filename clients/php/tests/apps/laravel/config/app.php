<?php

declare(strict_types=1);

return [
    'name' => 'rl-test',
    'env' => 'testing',
    'debug' => false,
    'url' => 'http://localhost',
    'timezone' => 'UTC',
    'locale' => 'en',
    'fallback_locale' => 'en',
    'key' => 'base64:'.base64_encode(str_repeat('k', 32)),
    'cipher' => 'AES-256-CBC',
    'providers' => array_values(array_filter([
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        Illuminate\Translation\TranslationServiceProvider::class,
        Illuminate\View\ViewServiceProvider::class,
        Rl\Laravel\RlServiceProvider::class, // rl: the RateLimiter facade and throttle
        App\RouteServiceProvider::class,
        // RL_LIMITER=laravel: the app without that line, on Laravel's own limiter.
    ], fn (string $provider) => !('laravel' === getenv('RL_LIMITER') && Rl\Laravel\RlServiceProvider::class === $provider))),
    'aliases' => [
        'RateLimiter' => Illuminate\Support\Facades\RateLimiter::class,
        'Route' => Illuminate\Support\Facades\Route::class,
    ],
];
