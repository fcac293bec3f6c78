<?php

declare(strict_types=1);

namespace Rl\Transport;

use Rl\ServerException;

/**
 * @internal phpredis's \RedisCluster: rawCommand's first argument routes
 * the command, by key or by node address.
 */
final class PhpRedisCluster implements Transport
{
    public function __construct(private readonly \RedisCluster $redis)
    {
    }

    public function send(array $args, string $key): mixed
    {
        return $this->at($key, $args);
    }

    public function onEveryPrimary(array $args): array
    {
        $out = [];
        foreach ($this->redis->_masters() as $node) {
            try {
                $out[] = $this->at($node, $args);
            } catch (ServerException $e) {
                $out[] = $e;
            }
        }

        return $out;
    }

    public function isCluster(): bool
    {
        return true;
    }

    /** @param string|array{0: string, 1: int} $where */
    private function at(string|array $where, array $args): mixed
    {
        $this->redis->clearLastError();
        try {
            $reply = $this->redis->rawCommand($where, ...$args);
        } catch (\RedisClusterException|\RedisException $e) {
            throw PhpRedis::replied($this->redis->getLastError(), $e);
        }
        if (false === $reply && null !== ($error = $this->redis->getLastError())) {
            $this->redis->clearLastError();
            throw new ServerException($error);
        }

        return $reply;
    }
}
