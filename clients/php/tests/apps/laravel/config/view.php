<?php

declare(strict_types=1);

// No views of the app's own: a 429 renders with Laravel's error page.
return [
    'paths' => [],
    'compiled' => (getenv('RL_APP_SCRATCH') ?: sys_get_temp_dir()).'/views',
];
