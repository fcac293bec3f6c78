<?php

declare(strict_types=1);

namespace Rl;

/**
 * An error the server replied (a bad argument, WRONGTYPE, a key rl did not
 * write, NOPERM): the message is the server's own text.
 */
class ServerException extends \RuntimeException
{
}
