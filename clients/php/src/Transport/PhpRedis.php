<?php

declare(strict_types=1);

namespace Rl\Transport;

use Rl\ServerException;

/**
 * @internal phpredis's \Redis. rawCommand answers an error reply with false
 * and the text in getLastError(), or, for errors phpredis deems not the
 * caller's (NOPERM, LOADING, BUSY, ...), throws a RedisException with that
 * text; both become ServerException. Its OPT_PREFIX and OPT_SERIALIZER do
 * not apply to rawCommand, so rl's keys are the names given.
 */
final class PhpRedis implements Transport
{
    public function __construct(private readonly \Redis $redis)
    {
    }

    public function send(array $args, string $key): mixed
    {
        $this->redis->clearLastError();
        try {
            $reply = $this->redis->rawCommand(...$args);
        } catch (\RedisException $e) {
            throw self::replied($this->redis->getLastError(), $e);
        }
        if (false === $reply && null !== ($error = $this->redis->getLastError())) {
            $this->redis->clearLastError();
            throw new ServerException($error);
        }

        return $reply;
    }

    /** A RedisException whose text is the server's error reply is that reply; any other (the connection) stays as it is. */
    public static function replied(?string $lastError, \RedisException $e): \Throwable
    {
        if (null !== $lastError && $lastError === $e->getMessage()) {
            return new ServerException($lastError, 0, $e);
        }

        return $e;
    }

    public function onEveryPrimary(array $args): array
    {
        try {
            return [$this->send($args, '')];
        } catch (ServerException $e) {
            return [$e];
        }
    }

    public function isCluster(): bool
    {
        return false;
    }
}
