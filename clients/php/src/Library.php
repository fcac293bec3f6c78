<?php

declare(strict_types=1);

namespace Rl;

/** The function library this package ships: rl-<version>.lua beside composer.json (in a checkout, functions/rl.lua). */
final class Library
{
    public static function path(): string
    {
        $package = \dirname(__DIR__);
        $candidates = [$package.'/rl-'.Client::VERSION.'.lua', \dirname($package, 2).'/functions/rl.lua'];
        foreach ($candidates as $path) {
            if (is_file($path)) {
                return $path;
            }
        }
        throw new \RuntimeException('rl: the function library is not in this package (looked for '.implode(', ', $candidates).')');
    }
}
