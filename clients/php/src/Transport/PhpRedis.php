<?php

declare(strict_types=1);

namespace Rl\Transport;

use Rl\ServerException;

/**
 * @internal phpredis's \Redis. rawCommand answers an error reply with false
 * and the text in getLastError(); its OPT_PREFIX and OPT_SERIALIZER do not
 * apply to it, so rl's keys are the names given.
 */
final class PhpRedis implements Transport
{
    public function __construct(private readonly \Redis $redis)
    {
    }

    public function send(array $args, string $key): mixed
    {
        $this->redis->clearLastError();
        $reply = $this->redis->rawCommand(...$args);
        if (false === $reply && null !== ($error = $this->redis->getLastError())) {
            $this->redis->clearLastError();
            throw new ServerException($error);
        }

        return $reply;
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
