<?php

declare(strict_types=1);

// Rl\Laravel\RlServiceProvider's settings (all optional).
return [
    'connection' => 'default',
    'prefix' => 'rl:lv:',
    'edition' => getenv('RL_EDITION') ?: null,
];
