<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/** The servers × clients the tests run on: each edition, on phpredis and on Predis. */
final class Clients
{
    /** @return array<string, array{string, string}> [server kind, client] */
    public static function matrix(): array
    {
        $out = [];
        foreach (['redis7', 'valkey9'] as $kind) {
            foreach (['phpredis', 'predis'] as $via) {
                $out["$kind ($via)"] = [$kind, $via];
            }
        }

        return $out;
    }

    public static function redis(Server $server, string $via): object
    {
        return 'phpredis' === $via ? $server->phpredis() : $server->predis();
    }
}
