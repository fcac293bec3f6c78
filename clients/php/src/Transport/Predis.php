<?php

declare(strict_types=1);

namespace Rl\Transport;

use Predis\ClientInterface;
use Predis\Command\RawCommand;
use Predis\Response\ErrorInterface;
use Predis\Response\ResponseInterface;
use Rl\ServerException;
use Rl\Slot;

/**
 * @internal Predis 1.1 and 2. Commands go to the connection as raw commands
 * (as executeRaw sends them); in a cluster each carries its key's slot, so
 * Predis routes commands it does not know.
 */
final class Predis implements Transport
{
    public function __construct(private readonly ClientInterface $client)
    {
    }

    public function send(array $args, string $key): mixed
    {
        $command = RawCommand::create(...array_map('strval', $args));
        if ($this->isCluster()) {
            $command->setSlot(Slot::of($key));
        }

        return $this->reply($this->client->getConnection()->executeCommand($command));
    }

    public function onEveryPrimary(array $args): array
    {
        if ($this->isCluster()) {
            throw new \LogicException('rl: loading the library through a Predis cluster is not supported: load it on every primary with redis-cli, or through phpredis\'s RedisCluster');
        }
        try {
            return [$this->send($args, '')];
        } catch (ServerException $e) {
            return [$e];
        }
    }

    public function isCluster(): bool
    {
        $connection = $this->client->getConnection();

        // Predis 1 names the interface Aggregate\ClusterInterface, Predis 2 Cluster\ClusterInterface.
        return $connection instanceof \Predis\Connection\Aggregate\ClusterInterface
            || $connection instanceof \Predis\Connection\Cluster\ClusterInterface;
    }

    private function reply(mixed $reply): mixed
    {
        if ($reply instanceof ErrorInterface) {
            throw new ServerException($reply->getMessage());
        }
        if ($reply instanceof ResponseInterface) {
            return (string) $reply;
        }
        if (\is_array($reply)) {
            return array_map(fn ($r) => $r instanceof ErrorInterface || $r instanceof ResponseInterface ? (string) $r : $r, $reply);
        }

        return $reply;
    }
}
