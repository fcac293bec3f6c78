<?php

declare(strict_types=1);

namespace Rl\Tests\Support;

/** An app served by PHP's built-in server on a free loopback port, with the environment given. */
final class App
{
    /** @var resource */
    private $process;

    private function __construct(public readonly int $port, $process, private readonly string $log)
    {
        $this->process = $process;
    }

    /** @param array<string, string> $env */
    public static function start(string $script, array $env, string $docroot = null): self
    {
        $port = Ports::free();
        $log = tempnam(sys_get_temp_dir(), 'rl-php-app-');
        $args = [PHP_BINARY, '-S', "127.0.0.1:$port"];
        if (null !== $docroot) {
            array_push($args, '-t', $docroot);
        }
        $args[] = $script;
        $process = proc_open($args, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']], $pipes, \dirname($script), $env + getenv());
        $app = new self($port, $process, $log);
        $deadline = microtime(true) + 20;
        while (true) {
            $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.5);
            if (false !== $socket) {
                fclose($socket);

                return $app;
            }
            if (!proc_get_status($process)['running'] || microtime(true) > $deadline) {
                $out = $app->log();
                $app->stop();
                throw new \RuntimeException("the app $script did not listen on $port:\n$out");
            }
            usleep(20_000);
        }
    }

    /**
     * A GET: its status, headers (names lower-cased) and body.
     *
     * @param array<string, string> $headers
     *
     * @return array{int, array<string, string>, string}
     */
    public function get(string $path, array $headers = []): array
    {
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        $context = stream_context_create(['http' => ['method' => 'GET', 'header' => $lines, 'ignore_errors' => true, 'timeout' => 30]]);
        $body = @file_get_contents("http://127.0.0.1:{$this->port}$path", false, $context);
        if (false === $body || !isset($http_response_header[0])) {
            throw new \RuntimeException("GET $path failed; the app's log:\n".$this->log());
        }
        preg_match('{^HTTP/\S+ (\d+)}', $http_response_header[0], $m);
        $out = [];
        foreach (\array_slice($http_response_header, 1) as $line) {
            [$name, $value] = array_map('trim', explode(':', $line, 2)) + [1 => ''];
            $out[strtolower($name)] = $value;
        }

        return [(int) $m[1], $out, $body];
    }

    public function log(): string
    {
        return (string) @file_get_contents($this->log);
    }

    public function stop(): void
    {
        if (\is_resource($this->process)) {
            // php -S runs as our child; its workers, if any, end with it.
            proc_terminate($this->process, 9);
            proc_close($this->process);
        }
        @unlink($this->log);
    }
}
