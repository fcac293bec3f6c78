<?php

declare(strict_types=1);

namespace Rl\Laravel;

use Closure;
use Illuminate\Cache\RateLimiter as CacheRateLimiter;
use Illuminate\Http\Exceptions\HttpResponseException;
use Illuminate\Http\Exceptions\ThrottleRequestsException;
use Illuminate\Routing\Middleware\ThrottleRequests as LaravelThrottleRequests;
use Rl\Decision;

/**
 * Laravel's throttle middleware (throttle:60,1, throttle:<named limiter>)
 * deciding on rl: one RL.FIXED per request, or one RL.ALL for a named
 * limiter's several limits (see RateLimiter::decideAll), where Laravel
 * asks and then hits each limit. Its headers (X-RateLimit-Limit,
 * X-RateLimit-Remaining, and on 429 Retry-After and X-RateLimit-Reset),
 * ThrottleRequestsException and a Limit's response() callback are
 * Laravel's own.
 */
class ThrottleRequests extends LaravelThrottleRequests
{
    private readonly RateLimiter $rl;

    public function __construct(CacheRateLimiter $limiter)
    {
        if (!$limiter instanceof RateLimiter) {
            throw new \LogicException('rl: the throttle middleware needs rl\'s RateLimiter: register Rl\Laravel\RlServiceProvider (config/app.php providers)');
        }
        parent::__construct($limiter);
        $this->rl = $limiter;
    }

    protected function handleRequest($request, Closure $next, array $limits)
    {
        $seen = [];
        $asked = [];
        foreach ($limits as $limit) {
            // Laravel 11+ gives decaySeconds, earlier releases decayMinutes.
            $decay = (int) ($limit->decaySeconds ?? $limit->decayMinutes * 60);
            $key = (string) $limit->key;
            // Two limits by the same key (perMinute(10)->by($ip), perDay(1000)->by($ip)) would
            // share one cache entry in Laravel; rl keeps each its own counter.
            if (isset($seen[$key])) {
                $key .= ':'.$decay.'s'.(isset($seen[$key.':'.$decay.'s']) ? ':'.\count($seen) : '');
            }
            $seen[$key] = true;
            $asked[] = [$key, (int) $limit->maxAttempts, $decay];
        }
        $decisions = $this->rl->decideAll($asked);
        foreach ($limits as $i => $limit) {
            $d = $decisions[$i];
            if (null !== $d && !$d->allowed) {
                throw $this->refusal($request, $limit, $d);
            }
        }

        $response = $next($request);
        foreach ($limits as $i => $limit) {
            $response = $this->addHeaders($response, $limit->maxAttempts, $decisions[$i]->remaining);
        }

        return $response;
    }

    /** Laravel's buildException, with the wait rl's decision gives (whole seconds, rounded up). */
    private function refusal($request, object $limit, Decision $d): HttpResponseException|ThrottleRequestsException
    {
        $retryAfter = (int) ceil($d->retryAfterMs / 1000);
        $headers = $this->getHeaders($limit->maxAttempts, 0, $retryAfter);
        $callback = $limit->responseCallback ?? null;

        return \is_callable($callback)
            ? new HttpResponseException($callback($request, $headers))
            : new ThrottleRequestsException('Too Many Attempts.', null, $headers);
    }
}
