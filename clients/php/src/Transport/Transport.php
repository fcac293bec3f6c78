<?php

declare(strict_types=1);

namespace Rl\Transport;

use Rl\ServerException;

/**
 * @internal What rl needs of a Redis client: one command at a time, routed
 * by its key in a cluster. An error reply throws ServerException with the
 * server's text; a connection error is the client's own exception.
 */
interface Transport
{
    /** @param list<int|string> $args the command and its arguments */
    public function send(array $args, string $key): mixed;

    /**
     * Runs $args on every primary (FUNCTION LOAD); an error reply of a node
     * comes back as its ServerException, in the list.
     *
     * @param list<int|string> $args
     *
     * @return list<mixed|ServerException>
     */
    public function onEveryPrimary(array $args): array;

    /** Whether keys in different hash slots may live on different nodes. */
    public function isCluster(): bool;
}
