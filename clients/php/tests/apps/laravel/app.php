<?php

declare(strict_types=1);

namespace App;

use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Http\Request;
use Illuminate\Support\Facades\RateLimiter;
use Illuminate\Support\Facades\Route;
use Illuminate\Support\ServiceProvider;

/** The app's HTTP kernel, as a Laravel 8 skeleton's app/Http/Kernel.php declares throttle. */
class Kernel extends \Illuminate\Foundation\Http\Kernel
{
    protected $middlewareGroups = [
        'api' => [],
    ];

    protected $routeMiddleware = [
        'throttle' => \Illuminate\Routing\Middleware\ThrottleRequests::class,
    ];
}

/** Named limiters and routes, as an app's RouteServiceProvider has them. */
class RouteServiceProvider extends ServiceProvider
{
    public function boot(): void
    {
        // Two limits on one route: 3 a minute per user, 5 a minute per team.
        RateLimiter::for('uploads', fn (Request $request) => [
            Limit::perMinute(3)->by('user:'.$request->header('X-User')),
            Limit::perMinute(5)->by('team:'.$request->header('X-Team')),
        ]);
        RateLimiter::for('reports', fn (Request $request) => Limit::perMinute(2)->by($request->header('X-User'))
            ->response(fn (Request $request, array $headers) => response('slow down', 429, $headers)));

        // Two limits by the same key: Laravel counts each request twice in one entry, rl keeps one counter each.
        RateLimiter::for('twice', fn () => [Limit::perMinute(2)->by('same'), Limit::perMinutes(2, 5)->by('same')]);
        Route::middleware('throttle:3,1')->get('/fixed', fn () => 'fixed');
        Route::middleware('throttle:uploads')->get('/uploads', fn () => 'uploaded');
        Route::middleware('throttle:reports')->get('/reports', fn () => 'report');
        Route::middleware('throttle:twice')->get('/twice', fn () => 'twice');
        Route::get('/attempt', function (Request $request) {
            $sent = RateLimiter::attempt('send-message:'.$request->header('X-User'), 2, fn () => 'sent', 60);

            return $sent ? response($sent) : response('too many messages', 429, ['Retry-After' => RateLimiter::availableIn('send-message:'.$request->header('X-User'))]);
        });
        Route::get('/attempts', fn (Request $request) => response()->json([
            'attempts' => RateLimiter::attempts($request->query('key')),
            'remaining' => RateLimiter::remaining($request->query('key'), (int) $request->query('max')),
            'tooMany' => RateLimiter::tooManyAttempts($request->query('key'), (int) $request->query('max')),
            'availableIn' => RateLimiter::availableIn($request->query('key')),
        ]));
        Route::get('/hit', fn (Request $request) => response()->json(['hits' => RateLimiter::hit($request->query('key'), 60)]));
        Route::get('/clear', function (Request $request) {
            RateLimiter::clear($request->query('key'));

            return 'cleared';
        });
        Route::get('/boom', fn () => RateLimiter::attempt('boom', 5, fn () => throw new \RuntimeException('boom'), 60));
        Route::get('/limiter', fn () => \get_class(app(\Illuminate\Cache\RateLimiter::class)));
    }
}
