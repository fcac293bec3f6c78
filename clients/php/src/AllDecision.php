<?php

declare(strict_types=1);

namespace Rl;

/** RL.ALL's reply: admitted only if every clause admitted, one Decision per clause in order. */
final class AllDecision
{
    /** @param list<Decision> $clauses */
    public function __construct(
        public readonly bool $allowed,
        /** 0 when admitted; else the wait after which every clause admits. */
        public readonly int $retryAfterMs,
        public readonly array $clauses,
    ) {
    }
}
