<?php

declare(strict_types=1);

namespace Rl;

/** @internal Checks a reply's shape once, so a surprise reads as rl's error, not a TypeError. */
final class Reply
{
    /** @return list<int> the first $count elements, each an integer */
    public static function integers(mixed $reply, int $count, string $what): array
    {
        if (!\is_array($reply) || \count($reply) < $count) {
            throw new \UnexpectedValueException(sprintf('rl: %s replied %s, not an array of %d integers', $what, json_encode($reply), $count));
        }
        $out = [];
        for ($i = 0; $i < $count; ++$i) {
            if (!\is_int($reply[$i])) {
                throw new \UnexpectedValueException(sprintf('rl: %s replied %s, not integers', $what, json_encode($reply)));
            }
            $out[] = $reply[$i];
        }

        return $out;
    }

    public static function integer(mixed $reply, string $what): int
    {
        if (!\is_int($reply)) {
            throw new \UnexpectedValueException(sprintf('rl: %s replied %s, not an integer', $what, json_encode($reply)));
        }

        return $reply;
    }
}
