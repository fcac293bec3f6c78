<?php

declare(strict_types=1);

namespace Rl;

/** How a server runs rl. */
enum Edition: string
{
    /** The module: RL.* commands. */
    case Module = 'module';
    /** The function library: FCALL rl_*. */
    case Library = 'library';
}
