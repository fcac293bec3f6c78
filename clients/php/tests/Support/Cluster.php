<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/** A cluster of three primaries, each a server of one kind, the slots split evenly. */
final class Cluster
{
    /** @param list<Server> $nodes */
    private function __construct(public readonly array $nodes)
    {
    }

    public static function start(string $kind, int $n = 3): self
    {
        $nodes = [];
        try {
            for ($i = 0; $i < $n; ++$i) {
                $nodes[] = Server::start($kind, false, ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000']);
            }
            $per = intdiv(16384 + $n - 1, $n);
            foreach ($nodes as $i => $node) {
                $node->call('CLUSTER', 'ADDSLOTSRANGE', (string) ($i * $per), (string) min(16383, ($i + 1) * $per - 1));
            }
            foreach (\array_slice($nodes, 1) as $node) {
                $nodes[0]->call('CLUSTER', 'MEET', '127.0.0.1', (string) $node->port);
            }
            $deadline = microtime(true) + 30;
            while (true) {
                $ok = true;
                foreach ($nodes as $node) {
                    $info = $node->call('CLUSTER', 'INFO');
                    $known = \count(explode("\n", trim($node->call('CLUSTER', 'NODES'))));
                    $ok = $ok && str_contains($info, 'cluster_state:ok') && $known === $n;
                }
                if ($ok) {
                    break;
                }
                if (microtime(true) > $deadline) {
                    throw new \RuntimeException("the $kind cluster did not come up");
                }
                usleep(100_000);
            }
        } catch (\Throwable $e) {
            foreach ($nodes as $node) {
                $node->stop();
            }
            throw $e;
        }

        return new self($nodes);
    }

    /** @return list<string> host:port of every node */
    public function seeds(): array
    {
        return array_map(fn (Server $s) => $s->address(), $this->nodes);
    }

    public function phpredis(): \RedisCluster
    {
        return new \RedisCluster(null, $this->seeds(), 5.0, 5.0);
    }

    /** The node holding $key. */
    public function nodeOf(string $key): Server
    {
        $slot = \Rl\Slot::of($key);
        $per = intdiv(16384 + \count($this->nodes) - 1, \count($this->nodes));

        return $this->nodes[intdiv($slot, $per)];
    }

    public function flush(): void
    {
        foreach ($this->nodes as $node) {
            $node->flush();
        }
    }

    public function stop(): void
    {
        foreach ($this->nodes as $node) {
            $node->stop();
        }
    }
}
