<?php

declare(strict_types=1);

namespace Rl\Symfony;

/** @internal Symfony's interval strings ('1 minute', '500 milliseconds') in whole milliseconds. */
final class Interval
{
    /**
     * Read as Symfony reads them: "+<interval>" from now, as a relative
     * date (https://www.php.net/datetime.formats.relative), so '1 month'
     * is this month's length. rl counts milliseconds where Symfony 5.4
     * truncates to seconds: '1500 milliseconds' is 1.5 s here.
     */
    public static function toMs(string $option, mixed $interval): int
    {
        if (!\is_string($interval)) {
            throw new \InvalidArgumentException(sprintf('rl: the rate limiter option "%s" must be a string such as "1 minute", not %s', $option, get_debug_type($interval)));
        }
        $now = \DateTimeImmutable::createFromFormat('U', (string) time());
        try {
            $later = @$now->modify('+'.$interval);
        } catch (\Throwable) {
            $later = false;
        }
        if (false === $later) {
            throw new \InvalidArgumentException(sprintf('rl: cannot parse the rate limiter option "%s" ("%s"): use a relative time such as "1 minute", see https://www.php.net/datetime.formats.relative', $option, $interval));
        }
        $us = ((int) $later->format('U') - (int) $now->format('U')) * 1_000_000 + (int) $later->format('u');
        if ($us <= 0 || 0 !== $us % 1000) {
            throw new \InvalidArgumentException(sprintf('rl: the rate limiter option "%s" ("%s") must be a positive whole number of milliseconds, not %s ms', $option, $interval, rtrim(rtrim(sprintf('%.3F', $us / 1000), '0'), '.')));
        }

        return intdiv($us, 1000);
    }
}
