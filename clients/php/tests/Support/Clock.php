<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/** libfaketime's absolute time for a stopped clock. */
final class Clock
{
    /**
     * `YYYY-MM-DD HH:MM:SS.mmm000500`: half a µs past the ms, so the
     * double it is read as is not a µs short.
     */
    public static function text(int $ms): string
    {
        return gmdate('Y-m-d H:i:s', intdiv($ms, 1000)).sprintf('.%03d000500', $ms % 1000)."\n";
    }

    /** The environment that stops a process's clock at the file's time. */
    public static function env(string $file): array
    {
        return ['TZ' => 'UTC', 'LD_PRELOAD' => Paths::faketime(), 'FAKETIME_TIMESTAMP_FILE' => $file, 'FAKETIME_NO_CACHE' => '1'];
    }
}
