<?php

declare(strict_types=1);

namespace Rl\Tests;

use PHPUnit\Framework\TestCase;
use Rl\Client;
use Rl\Edition;
use Rl\NotLoadedException;
use Rl\Tests\Support\Clients;
use Rl\Tests\Support\Registry;

/**
 * The edition is found by the first call's own command, kept, and found
 * again when the server says it lacks it; with neither edition a call
 * says how to load one.
 */
final class EditionTest extends TestCase
{
    /** @dataProvider matrix */
    public function testFirstCallFindsTheEditionByItsOwnCommand(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        $monitor = $this->commandsSeen($server, function () use ($rl) {
            self::assertTrue($rl->slide('rl:e:first', 1, 60_000)->allowed);
            self::assertFalse($rl->slide('rl:e:first', 1, 60_000)->allowed);
        });
        // MONITOR does not show a command the server does not know: the
        // library's first RL.SLIDE, refused, is not listed.
        $want = Edition::Module === $server->edition()
            ? ['RL.SLIDE', 'RL.SLIDE']
            : ['FCALL_RO', 'FCALL', 'FCALL'];
        self::assertSame($want, $monitor);
        self::assertSame($server->edition(), $rl->edition());
    }

    /** @dataProvider matrix */
    public function testEditionAsksThroughRlUnderRl(string $kind, string $via): void
    {
        $server = Registry::fresh($kind);
        $rl = new Client(Clients::redis($server, $via));
        self::assertSame($server->edition(), $rl->edition());
        self::assertSame([], $server->call('KEYS', '*'), 'edition() wrote nothing');
    }

    public function testNeitherEditionSaysHowToLoadOne(): void
    {
        $server = Registry::fresh('valkey9-bare');
        foreach (['phpredis', 'predis'] as $via) {
            $rl = new Client(Clients::redis($server, $via));
            try {
                $rl->fixed("rl:e:none:$via", 1, 1000);
                self::fail('no error');
            } catch (NotLoadedException $e) {
                self::assertStringContainsString('neither the module', $e->getMessage());
                self::assertStringContainsString('FUNCTION LOAD', $e->getMessage());
                self::assertStringContainsString('Function not found', $e->getMessage());
            }
            // Not remembered: once the library is loaded, the next call finds it.
            $rl->loadLibrary();
            self::assertTrue($rl->fixed("rl:e:none:$via", 1, 1000)->allowed);
            self::assertSame(Edition::Library, $rl->edition());
            $server->call('FUNCTION', 'DELETE', 'rl');
        }
    }

    public function testLoadLibraryKeepsALoadedLibrary(): void
    {
        $server = Registry::fresh('valkey9');
        $rl = new Client($server->phpredis());
        $rl->loadLibrary();
        self::assertSame(Client::VERSION, $server->call('FCALL_RO', 'rl_version', '0'));
        self::assertTrue($rl->slide('rl:e:lib', 1, 1000)->allowed);
    }

    /**
     * Told the library on a server with only the module: FCALL answers that
     * the function is not there, and the call is sent again as RL.*.
     */
    public function testAWrongEditionIsFoundAgain(): void
    {
        $server = Registry::fresh('valkey9-module');
        $rl = new Client($server->predis(), Edition::Library);
        self::assertTrue($rl->fixed('rl:e:again', 2, 60_000)->allowed);
        self::assertSame(Edition::Module, $rl->edition());
        self::assertSame('1', $server->call('GET', 'rl:e:again'));
    }

    /** A library that goes away (FUNCTION DELETE) is found missing by the next call, which says so. */
    public function testALibraryThatGoesAwayIsAskedForAgain(): void
    {
        $server = Registry::fresh('valkey9');
        $rl = new Client($server->phpredis());
        self::assertTrue($rl->slide('rl:e:gone', 2, 60_000)->allowed);
        $server->call('FUNCTION', 'DELETE', 'rl');
        try {
            $rl->slide('rl:e:gone', 2, 60_000);
            self::fail('no error');
        } catch (NotLoadedException $e) {
            self::assertStringContainsString('neither the module', $e->getMessage());
        }
        $server->call('FUNCTION', 'LOAD', file_get_contents(\Rl\Tests\Support\Paths::library()));
        $d = $rl->slide('rl:e:gone', 2, 60_000);
        self::assertSame([true, 0], [$d->allowed, $d->remaining]);
    }

    /** An error of rl's own (WRONGTYPE, a bad argument) shows the module as well as a reply does. */
    public function testAnErrorOfRlsOwnShowsTheModule(): void
    {
        $server = Registry::fresh('redis7');
        $server->call('SET', 'rl:e:str', 'x');
        $rl = new Client($server->phpredis());
        try {
            $rl->slide('rl:e:str', 1, 1000);
            self::fail('no error');
        } catch (\Rl\ServerException $e) {
            self::assertStringStartsWith('WRONGTYPE', $e->getMessage());
        }
        $seen = $this->commandsSeen($server, fn () => self::assertSame(Edition::Module, $rl->edition()));
        self::assertSame([], $seen, 'the edition was known');
    }

    public static function matrix(): array
    {
        return Clients::matrix();
    }

    /**
     * The commands clients sent while $fn ran, by name, from MONITOR
     * (without those a function runs inside the server).
     *
     * @return list<string>
     */
    private function commandsSeen(\Rl\Tests\Support\Server $server, \Closure $fn): array
    {
        $monitor = stream_socket_client('tcp://'.$server->address(), $errno, $error, 5);
        fwrite($monitor, "MONITOR\r\n");
        self::assertSame("+OK\r\n", fgets($monitor));
        $fn();
        $marker = 'rl-marker-'.mt_rand();
        $server->call('ECHO', $marker);
        $seen = [];
        stream_set_timeout($monitor, 5);
        while (false !== ($line = fgets($monitor))) {
            if (str_contains($line, $marker)) {
                break;
            }
            if (preg_match('/^\+\S+ \[\d+ [^\]]+\] "([^"]+)"/', $line, $m) && !preg_match('/\[\d+ lua\]/', $line)) {
                $seen[] = strtoupper($m[1]);
            }
        }
        fclose($monitor);

        return $seen;
    }
}
