<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Tests\Support\Paths;
use Rl\Tests\Support\Registry;

/**
 * The PHP of the docs, as a reader runs it: docs/clients.md's PHP programs
 * run against Valkey 9.1 with the module, their output compared with the
 * block the docs show after them; every line of the other PHP blocks (the
 * switches in README.md, docs/clients.md and the package's README) is a
 * line of the apps the HTTP tests serve, or of those programs; the install
 * lines are the same everywhere (tests/dist runs them).
 */
final class DocsTest extends TestCase
{
    private const SECTION = '## PHP: Symfony RateLimiter, Laravel, typed calls';

    /** @return iterable<string, array{string, string}> */
    public static function programs(): iterable
    {
        foreach (self::blocks(self::section()) as $i => [$line, $info, $code, $directive]) {
            if ('php' === $info && str_starts_with($code, '<?php')) {
                $next = self::blocks(self::section())[$i + 1] ?? null;
                $prints = null !== $next && 'prints' === trim($next[3]) ? $next[2] : null;
                yield "docs/clients.md:$line" => [$code, (string) $prints];
            }
        }
    }

    /** @dataProvider programs */
    public function testProgramPrintsWhatTheDocsShow(string $code, string $prints): void
    {
        self::assertNotSame('', $prints, 'a program is followed by the output it prints');
        $server = Registry::fresh('valkey9-module');
        $dir = sys_get_temp_dir().'/rl-php-docs-'.getmypid().'-'.mt_rand();
        mkdir("$dir/vendor", 0777, true);
        // What `composer require rl/rl` gives a reader (its autoloader), and the Debian packages.
        file_put_contents("$dir/vendor/autoload.php", "<?php\nrequire '".\dirname(__DIR__)."/tests/autoload.php';\nrequire_once 'Predis/autoload.php';\nrequire_once 'Symfony/Component/RateLimiter/autoload.php';\n");
        self::assertStringContainsString("->connect('127.0.0.1', 6379);", $code);
        file_put_contents("$dir/app.php", str_replace("->connect('127.0.0.1', 6379);", "->connect('127.0.0.1', {$server->port});", $code));
        exec(sprintf('cd %s && %s app.php 2>&1', escapeshellarg($dir), escapeshellarg(PHP_BINARY)), $out, $rc);
        exec('rm -rf '.escapeshellarg($dir));
        self::assertSame(0, $rc, implode("\n", $out));
        $want = explode("\n", rtrim($prints, "\n"));
        self::assertCount(\count($want), $out, implode("\n", $out));
        foreach ($want as $i => $line) {
            if (str_ends_with($line, ' (varies)')) {
                $head = substr($line, 0, -\strlen('(varies)'));
                self::assertStringStartsWith($head, $out[$i]);
                self::assertGreaterThan(\strlen($head), \strlen($out[$i]));
            } else {
                self::assertSame($line, $out[$i]);
            }
        }
    }

    /** The fragments: each line is a line of an app the tests serve, or of a program above. */
    public function testEveryFragmentLineIsRunByTheTests(): void
    {
        $known = [];
        foreach (['apps/symfony.php', 'apps/laravel/app.php', 'apps/laravel/config/app.php'] as $app) {
            foreach (file(__DIR__.'/'.$app) as $line) {
                $known[trim($line)] = true;
            }
        }
        foreach (self::programs() as [$code]) {
            foreach (explode("\n", $code) as $line) {
                $known[trim($line)] = true;
            }
        }
        $sources = [
            'README.md' => self::cut((string) file_get_contents(Paths::root().'/README.md'), '## From your framework'),
            'docs/clients.md' => self::section(),
            'clients/php/README.md' => (string) file_get_contents(\dirname(__DIR__).'/README.md'),
        ];
        foreach ($sources as $where => $text) {
            $lines = 0;
            foreach (self::blocks($text) as [$at, $info, $code]) {
                if ('php' !== $info || str_starts_with($code, '<?php')) {
                    continue;
                }
                foreach (explode("\n", trim($code)) as $line) {
                    ++$lines;
                    self::assertArrayHasKey(trim($line), $known, "$where (block at its line $at): `$line` is in no app or program the tests run");
                }
            }
            self::assertGreaterThan(0, $lines, "$where has PHP lines");
        }
        self::assertStringContainsString('Rl\Laravel\RlServiceProvider::class, // rl: the RateLimiter facade and throttle', $sources['README.md']);
    }

    /** The install lines: the package README's are docs/clients.md's, and docs/install.md's block holds them. */
    public function testInstallLinesAreTheSameEverywhere(): void
    {
        $install = static function (string $text): string {
            foreach (self::blocks($text) as [, $info, $code]) {
                if ('' === $info && str_contains($code, 'composer require')) {
                    return $code;
                }
            }
            self::fail('no composer require block');
        };
        $docs = $install(self::section());
        self::assertSame($docs, $install((string) file_get_contents(\dirname(__DIR__).'/README.md')));
        self::assertSame($docs, $install((string) file_get_contents(Paths::root().'/docs/install.md')));
        self::assertStringContainsString('rl-php-'.\Rl\Client::VERSION.'.zip', $docs);
        self::assertStringContainsString('rl/rl:'.\Rl\Client::VERSION, $docs);
    }

    private static function section(): string
    {
        return self::cut((string) file_get_contents(Paths::root().'/docs/clients.md'), self::SECTION);
    }

    /** From $heading to the next "## " heading. */
    private static function cut(string $text, string $heading): string
    {
        $at = strpos($text, $heading);
        if (false === $at) {
            throw new \RuntimeException("no \"$heading\"");
        }
        $rest = substr($text, $at);
        $end = strpos($rest, "\n## ", \strlen($heading));

        return false === $end ? $rest : substr($rest, 0, $end);
    }

    /**
     * The fenced blocks: [line in $text, info string, code, the docs-test directive before it].
     *
     * @return list<array{int, string, string, string}>
     */
    private static function blocks(string $text): array
    {
        preg_match_all('/^(?:<!-- docs-test: ([^>]*)-->\n)?```(\w*)\n(.*?)^```$/ms', $text, $m, PREG_SET_ORDER | PREG_OFFSET_CAPTURE);
        $out = [];
        foreach ($m as $match) {
            $out[] = [substr_count(substr($text, 0, $match[0][1]), "\n") + 1, $match[2][0], $match[3][0], $match[1][0] ?? ''];
        }

        return $out;
    }
}
