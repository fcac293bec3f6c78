<?php

declare(strict_types=1);

// The Redis connection from the environment apps/redis.php reads.
$address = getenv('RL_REDIS') ?: '127.0.0.1:6379';
$client = getenv('RL_CLIENT') ?: 'phpredis';
$auth = array_filter(['username' => getenv('RL_USER') ?: null, 'password' => getenv('RL_PASSWORD') ?: null]);
$node = static function (string $hostPort) use ($auth): array {
    [$host, $port] = explode(':', $hostPort);

    // No database: Predis would send SELECT, which the README's ACL recipe does not grant.
    return ['host' => $host, 'port' => (int) $port] + $auth;
};

return [
    'redis' => 'cluster' === $client
        ? [
            'client' => 'phpredis',
            'options' => ['cluster' => 'redis', 'prefix' => 'laravel_database_'],
            'clusters' => ['default' => array_map($node, explode(',', $address))],
        ]
        : [
            'client' => $client,
            'options' => ['prefix' => 'laravel_database_'],
            'default' => $node($address),
        ],
];
