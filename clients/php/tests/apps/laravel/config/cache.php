<?php

declare(strict_types=1);

// Laravel's own limiter (RL_LIMITER=laravel) keeps its counts in the Redis cache.
return [
    'default' => 'redis',
    'stores' => [
        'redis' => ['driver' => 'redis', 'connection' => 'default'],
    ],
    'prefix' => 'laravel_cache',
];
