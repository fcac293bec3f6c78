<?php

declare(strict_types=1);

// The frameworks and clients the tests and their apps use, from Debian's
// packages (/usr/share/php, on the include path), as a Debian system without
// Packagist has them: each package's own autoloader. tests/run checks each
// is installed first.
require_once 'Predis/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';
require_once 'Symfony/Component/HttpKernel/autoload.php';
require_once 'Symfony/Component/HttpFoundation/autoload.php';
require_once 'Symfony/Component/Cache/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
