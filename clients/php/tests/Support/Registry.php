<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/**
 * The servers this test process started: one of each kind shared by the
 * tests that ask for it (a test flushes it first), all stopped when the
 * process ends, even after a failure.
 */
final class Registry
{
    /** @var array<int, Server> */
    private static array $running = [];
    /** @var array<string, Server> */
    private static array $shared = [];
    private static bool $hooked = false;

    /** The shared server of $kind, emptied (FLUSHALL) for the test that asks. */
    public static function fresh(string $kind): Server
    {
        $server = self::$shared[$kind] ??= Server::start($kind);
        $server->flush();

        return $server;
    }

    public static function add(Server $server): void
    {
        self::$running[spl_object_id($server)] = $server;
        if (!self::$hooked) {
            self::$hooked = true;
            register_shutdown_function([self::class, 'stopAll']);
        }
    }

    public static function remove(Server $server): void
    {
        unset(self::$running[spl_object_id($server)]);
        foreach (self::$shared as $kind => $s) {
            if ($s === $server) {
                unset(self::$shared[$kind]);
            }
        }
    }

    public static function stopAll(): void
    {
        foreach (self::$running as $server) {
            $server->stop();
        }
    }
}
