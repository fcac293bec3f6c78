<?php

declare(strict_types=1);

// A Laravel 8 app (Debian's php-laravel-framework, no skeleton: this file
// is its public/index.php and bootstrap/app.php), served by PHP's built-in
// server: php -S 127.0.0.1:PORT index.php. Its routes (routes.php) use
// throttle:3,1, a named limiter of several limits and RateLimiter::attempt;
// config/app.php's providers hold the one line that puts them on rl.
// RL_LIMITER=laravel leaves that line out: Laravel's own cache limiter.
require __DIR__.'/../../autoload.php';
require_once 'Illuminate/autoload.php';
require_once 'Predis/autoload.php';
require __DIR__.'/../redis.php';
require __DIR__.'/app.php';

$scratch = getenv('RL_APP_SCRATCH') ?: sys_get_temp_dir().'/rl-laravel-'.getmypid();
@mkdir($scratch.'/framework', 0777, true);
putenv("APP_SERVICES_CACHE=$scratch/services.php");
putenv("APP_PACKAGES_CACHE=$scratch/packages.php");

$app = new Illuminate\Foundation\Application(__DIR__);
$app->useStoragePath($scratch);
$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, Illuminate\Foundation\Exceptions\Handler::class);

$kernel = $app->make(Illuminate\Contracts\Http\Kernel::class);
$response = $kernel->handle($request = Illuminate\Http\Request::capture());
$response->send();
$kernel->terminate($request, $response);
