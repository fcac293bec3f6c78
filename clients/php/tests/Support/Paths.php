<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/** Where the servers, the module and the library are, resolved as the other tests resolve them. */
final class Paths
{
    public static function root(): string
    {
        return \dirname(__DIR__, 4);
    }

    public static function redis7(): string
    {
        return self::need(getenv('RL_REDIS7') ?: '/usr/bin/redis-server', 'Redis 7.0 (redis-server)', 'make deps installs it');
    }

    public static function valkey9(): string
    {
        return self::need(getenv('RL_VALKEY9') ?: self::root().'/.deps/valkey/valkey-server', 'Valkey 9.1', 'make deps fetches it');
    }

    public static function module(): string
    {
        return self::need(getenv('RL_MODULE') ?: self::root().'/target/release/librl.so', 'the module', 'make build');
    }

    public static function library(): string
    {
        return self::need(self::root().'/functions/rl.lua', 'the function library', 'a checkout has it');
    }

    public static function faketime(): string
    {
        return self::need(getenv('RL_FAKETIME_LIB') ?: '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', 'libfaketime', 'make deps: apt-get install faketime');
    }

    private static function need(string $path, string $what, string $fix): string
    {
        if (!is_file($path)) {
            throw new \RuntimeException("$what not found at $path ($fix)");
        }

        return $path;
    }
}
