<?php

declare(strict_types=1);

// composer.json's PSR-4 map for a checkout (no vendor/ here: Packagist is
// not reachable, and the package needs nothing from it): Rl\ => src/,
// Rl\Tests\ => tests/. The apps the tests serve load this file too.
spl_autoload_register(static function (string $class): void {
    foreach (['Rl\\Tests\\' => __DIR__.'/', 'Rl\\' => \dirname(__DIR__).'/src/'] as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir.str_replace('\\', '/', substr($class, \strlen($prefix))).'.php';
            if (is_file($file)) {
                require $file;
            }

            return;
        }
    }
});
