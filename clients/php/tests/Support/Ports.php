<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

final class Ports
{
    /** A port the kernel just handed out on 127.0.0.1 (bind to 0, close). */
    public static function free(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if (false === $socket) {
            throw new \RuntimeException("no free port: $error");
        }
        $name = stream_socket_get_name($socket, false);
        fclose($socket);

        return (int) substr($name, strrpos($name, ':') + 1);
    }
}
