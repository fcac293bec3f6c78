<?php

declare(strict_types=1);

namespace Rl;

/** The server has neither edition of rl: the message says how to load one. */
final class NotLoadedException extends ServerException
{
    public function __construct(string $detail)
    {
        parent::__construct('rl is not loaded on this server: it has neither the module (RL.* is an unknown command) '
            .'nor the function library ('.$detail.'). Load the module (loadmodule /path/to/librl.so in the server\'s '
            .'config, or MODULE LOAD), or the library, on every primary: the release\'s rl-'.Client::VERSION.'.lua '
            .'(redis-cli -x FUNCTION LOAD REPLACE < rl-'.Client::VERSION.'.lua; Rl\Client::loadLibrary() loads the copy '
            .'this package carries), or in a checkout of rl functions/rl.lua (make load-functions)');
    }
}
