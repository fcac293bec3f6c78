"""The PHP package of the release (rl-php-<version>.zip), as a user gets
it, for tests/dist/dist_test.py: what the zip holds, then Composer
installing it from an artifact repository that holds it alone, into a
fresh project, with docs/install.md's lines as written, and a Symfony app
(Debian's Symfony, as the app's own) limiting over HTTP with the module,
and with the library the app loads from the package."""

import json
import os
import re
import shutil
import tempfile
import zipfile

# A user's app on the installed package: Composer's autoloader for rl/rl,
# Debian's Symfony for the rest (Packagist is not reachable here).
SYMFONY_APP = """\
<?php
require __DIR__.'/vendor/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';

use Rl\\Client;
use Rl\\Symfony\\RlRateLimiterFactory;

$redis = new Redis();
$redis->connect('127.0.0.1', %(port)d);
$rl = new Client($redis);
if (%(load)s) {
    $rl->loadLibrary(); // the rl-%(version)s.lua the package carries
}
$factory = new RlRateLimiterFactory(['id' => 'app', 'policy' => 'fixed_window', 'limit' => 3, 'interval' => '1 minute'], $rl);
$limit = $factory->create($_SERVER['REMOTE_ADDR'])->consume();
http_response_code($limit->isAccepted() ? 200 : 429);
echo $limit->isAccepted() ? 'hello' : 'too many';
"""


def zip_holds_its_files(work, h):
    path = os.path.join(work, h.PHP_ZIP)
    with zipfile.ZipFile(path) as z:
        names = sorted(z.namelist())
        top = sorted({n.split("/")[0] for n in names})
        want = sorted(["composer.json", "LICENSE", "README.md", "src", h.LUA])
        h.check(top == want, f"{h.PHP_ZIP} holds {top}, not {want}")
        composer = json.loads(z.read("composer.json"))
        h.check((composer.get("name"), composer.get("version")) == ("rl/rl", h.VERSION),
                f"{h.PHP_ZIP}'s composer.json names {composer.get('name')} {composer.get('version')}")
        h.check(composer.get("autoload") == {"psr-4": {"Rl\\": "src/"}}, f"autoload: {composer.get('autoload')}")
        h.check("src/Client.php" in names and "src/Symfony/RlRateLimiterFactory.php" in names
                and "src/Laravel/RlServiceProvider.php" in names, f"{h.PHP_ZIP} lacks sources: {names}")
        h.check(z.read(h.LUA) == open(os.path.join(work, h.LUA), "rb").read(), f"{h.PHP_ZIP}'s {h.LUA} is not {h.LUA}")
        version = re.search(rb"const VERSION = '([^']+)'", z.read("src/Client.php"))
        h.check(version and version[1].decode() == h.VERSION, f"Rl\\Client::VERSION is {version}")


def composer_project(work, h):
    """A fresh project (its composer.json, as every app has one) beside
    the zip, and docs/install.md's lines run in it as written."""
    folder = tempfile.mkdtemp(prefix="php-", dir=work)
    with open(os.path.join(folder, "composer.json"), "w") as f:
        f.write('{ "name": "acme/app", "require": {} }\n')
    shutil.copy(os.path.join(work, h.PHP_ZIP), folder)
    env = dict(os.environ, COMPOSER_HOME=os.path.join(folder, ".composer"),
               COMPOSER_CACHE_DIR=os.path.join(folder, ".composer-cache"), COMPOSER_NO_INTERACTION="1")
    blocks = [(where, lines) for where, lines in h.documented_lines("composer require")
              if where.startswith("docs/install.md")]
    h.check(len(blocks) == 1, f"docs/install.md's Composer block: {blocks}")
    for line in blocks[0][1]:
        h.shell(line, folder, env=env)
    installed = os.path.join(folder, "vendor", "rl", "rl")
    h.check(os.path.isdir(installed) and not os.path.islink(installed), f"rl/rl not installed as a copy at {installed}")
    h.check(open(os.path.join(installed, h.LUA), "rb").read() == open(os.path.join(work, h.LUA), "rb").read(),
            f"the installed package's {h.LUA} is not {h.LUA}")
    return folder


def symfony_app_limits(work, h, folder, edition):
    server = h.Server("Valkey 9.1", work, h.config_with_module(work, "redis") if edition == "module" else "")
    try:
        app = os.path.join(folder, f"app-{edition}.php")
        with open(app, "w") as f:
            f.write(SYMFONY_APP % {"port": server.port, "load": "true" if edition == "library" else "false",
                                   "version": h.VERSION})
        port = h.free_port()
        codes = h.run_app(["php", "-S", f"127.0.0.1:{port}", app], folder, port, 5)
        h.check(codes == [200, 200, 200, 429, 429], f"{edition}: statuses {codes}, want 3 x 200, 2 x 429")
        if edition == "library":
            h.check("rl" in server.cli("FUNCTION", "LIST", "LIBRARYNAME", "rl"), "the app did not load the library")
        h.check(server.cli("KEYS", "rl:sf:app-*").strip() == "rl:sf:app-127.0.0.1", "the app's key")
    finally:
        server.stop()


def run_tests(t, work, h):
    t.run(f"{h.PHP_ZIP}: composer.json, README, LICENSE, src/ and {h.LUA}", zip_holds_its_files, work, h)
    folder = None

    def install():
        nonlocal folder
        folder = composer_project(work, h)

    t.run(f"{h.PHP_ZIP} installs into a fresh project from a Composer artifact repository (docs/install.md)", install)
    if folder:
        t.run("Symfony app on the installed package: limits over HTTP (module)", symfony_app_limits, work, h, folder, "module")
        t.run("Symfony app on the installed package: limits over HTTP (library loaded from the package)",
              symfony_app_limits, work, h, folder, "library")
    else:
        t.failed += 2
        print("FAIL the two PHP app tests: the install failed")
