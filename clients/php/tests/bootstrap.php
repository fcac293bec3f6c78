<?php

declare(strict_types=1);

// The tests' classes: rl's package (PSR-4 Rl\ => src/, as composer.json
// says) and Rl\Tests\ => tests/, then the frameworks and clients from
// Debian's packages (debian.php).
require __DIR__.'/autoload.php';
require __DIR__.'/debian.php';
