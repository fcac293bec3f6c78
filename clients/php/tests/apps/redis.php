<?php

declare(strict_types=1);

// The apps' Redis client, from the environment the test sets:
//   RL_CLIENT  phpredis (default), predis or cluster (phpredis's RedisCluster)
//   RL_REDIS   host:port (cluster: host:port,host:port,...)
//   RL_USER, RL_PASSWORD  an ACL user, if set
function rl_test_redis(): object
{
    $address = getenv('RL_REDIS') ?: '127.0.0.1:6379';
    $user = getenv('RL_USER') ?: null;
    $password = getenv('RL_PASSWORD') ?: null;
    $auth = null === $user ? $password : [$user, $password];
    switch (getenv('RL_CLIENT') ?: 'phpredis') {
        case 'cluster':
            return new RedisCluster(null, explode(',', $address), 5.0, 5.0, false, $auth);
        case 'predis':
            [$host, $port] = explode(':', $address);

            return new Predis\Client(['host' => $host, 'port' => (int) $port] + (null === $user ? [] : ['username' => $user]) + (null === $password ? [] : ['password' => $password]));
        default:
            [$host, $port] = explode(':', $address);
            $redis = new Redis();
            $redis->connect($host, (int) $port, 5.0);
            if (null !== $auth) {
                $redis->auth($auth);
            }

            return $redis;
    }
}
