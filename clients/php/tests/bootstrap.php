<?php

declare(strict_types=1);

// The tests' classes: rl's package (PSR-4 Rl\ => src/, as composer.json
// says) and Rl\Tests\ => tests/, then the frameworks and clients from
// Debian's packages (/usr/share/php), as a Debian system without Packagist
// has them. tests/run checks each is installed first.
require __DIR__.'/autoload.php';

require_once 'Predis/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';
require_once 'Symfony/Component/HttpKernel/autoload.php';
require_once 'Symfony/Component/HttpFoundation/autoload.php';
require_once 'Symfony/Component/Cache/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
