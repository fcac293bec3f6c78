<?php

declare(strict_types=1);

namespace Rl;

/** A key's Cluster hash slot: CRC16 (XMODEM) of the key or its {hash tag}, mod 16384. */
final class Slot
{
    /** @var list<int>|null */
    private static ?array $table = null;

    public static function of(string $key): int
    {
        $open = strpos($key, '{');
        if (false !== $open) {
            $close = strpos($key, '}', $open + 1);
            if (false !== $close && $close > $open + 1) {
                $key = substr($key, $open + 1, $close - $open - 1);
            }
        }
        $table = self::$table ??= self::table();
        $crc = 0;
        for ($i = 0, $n = \strlen($key); $i < $n; ++$i) {
            $crc = (($crc << 8) & 0xFF00) ^ $table[(($crc >> 8) ^ \ord($key[$i])) & 0xFF];
        }

        return $crc & 0x3FFF;
    }

    /** @return list<int> */
    private static function table(): array
    {
        $table = [];
        for ($i = 0; $i < 256; ++$i) {
            $crc = $i << 8;
            for ($bit = 0; $bit < 8; ++$bit) {
                $crc = ($crc & 0x8000) ? (($crc << 1) ^ 0x1021) & 0xFFFF : ($crc << 1) & 0xFFFF;
            }
            $table[] = $crc;
        }

        return $table;
    }
}
