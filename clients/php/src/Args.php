<?php

declare(strict_types=1);

namespace Rl;

/** @internal Argument checks: an \InvalidArgumentException naming the argument, before anything is sent. */
final class Args
{
    /** A duration in whole milliseconds, as rl takes them. */
    public static function ms(string $command, string $arg, int|float $value): int
    {
        if (\is_float($value)) {
            if (!is_finite($value) || floor($value) !== $value || $value > PHP_INT_MAX) {
                throw new \InvalidArgumentException(sprintf('rl: %s %s must be a positive whole number of milliseconds, not %s', $command, $arg, var_export($value, true)));
            }
            $value = (int) $value;
        }
        if ($value < 1) {
            throw new \InvalidArgumentException(sprintf('rl: %s %s must be a positive whole number of milliseconds, not %d', $command, $arg, $value));
        }

        return $value;
    }

    public static function atLeast(string $command, string $arg, int $value, int $min): void
    {
        if ($value < $min) {
            throw new \InvalidArgumentException(sprintf('rl: %s %s must be %s, not %d', $command, $arg, 0 === $min ? 'zero or more' : "at least $min", $value));
        }
    }
}
