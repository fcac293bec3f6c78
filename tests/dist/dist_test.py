"""The release files of `make dist`, tested as a user gets them: dist/ is
copied into a temporary folder outside the checkout and everything runs
there. Nothing from the checkout is used but the servers (.deps/) and this
script.

- SHA256SUMS lists every file and each matches;
- each tarball holds a stripped librl.so needing glibc 2.28 at most, its
  install README, LICENSE, CHANGELOG.md, redis.conf.example and the docs
  (docs/, contrib/), every relative link of its Markdown leading to a file
  and heading it holds; its README's install steps, as written, install
  the module from a fresh folder, and the server loading it answers;
- every client package carries a README for using it from that package
  (naming its own release file), the tarball's LICENSE byte for byte, and
  the POM names MIT;
- loaded with a `loadmodule` line in the tarball's redis.conf.example, the
  redis build answers on Redis 7.0, Redis 8.2 and Valkey 9.1 and the valkey
  build on Valkey 9.1 (Redis refuses it, saying why), each naming the
  release's version and its build;
- rl-<v>.lua loads into a bare Redis 7.0 and Valkey 9.1 and answers;
- rl-ratelimit's tarballs hold static binaries for linux/amd64 and arm64,
  and envoy.md, every relative link of it leading inside the tarball;
  the amd64 one, unpacked alone, answers /json beside the redis build;
- the wheel and the sdist, each in a fresh venv, carry that library byte for
  byte, and a Flask-Limiter app limits over HTTP;
- the npm tarball in a fresh project: an Express app limits over HTTP in
  CommonJS and as an ES module started from another directory, and
  `tsc --strict` passes on a file using the types;
- the gem, installed with docs/install.md's `gem install --local` line
  into a scratch GEM_HOME, carries that library byte for byte, and a Rack
  app with rack-attack's rl_throttle, served by thin, limits over HTTP on
  each edition;
- the PHP zip: what php.py says (Composer installs it, a Symfony app on it limits).

Last line: "dist: N passed, N failed, N skipped". Env: RL_DIST (default
dist/), RL_REDIS7, RL_REDIS8, RL_VALKEY9 as the other tests.
"""

import glob
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import zipfile

import php
import ratelimit
import ruby
import release_docs
from apps import EXPRESS_CJS, EXPRESS_ESM, FLASK_APP, RACK_APP, TYPED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIST = os.path.abspath(os.environ.get("RL_DIST", os.path.join(ROOT, "dist")))
MAX_GLIBC = (2, 28)
# What the apps are installed with, from the registries by name.
PY_APP_DEPS = ["Flask>=3,<4", "Flask-Limiter>=4,<5"]
NODE_APP_DEPS = ["express@^5", "express-rate-limit@^8", "rate-limiter-flexible@^11", "redis@^5",
                 "typescript@^5", "@types/express@^5", "@types/node@^20"]


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


def version():
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    return re.search(r'^version = "([^"]+)"', text, re.M)[1]


VERSION = version()
MODULE_VER = (lambda p: p[0] * 10000 + p[1] * 100 + p[2])([int(x) for x in VERSION.split(".")])
TARBALLS = {b: f"rl-{VERSION}-{b}-x86_64-linux-gnu.tar.gz" for b in ("redis", "valkey")}
LUA = f"rl-{VERSION}.lua"
WHEEL = f"limits_rl-{VERSION}-py3-none-any.whl"
SDIST = f"limits_rl-{VERSION}.tar.gz"
NPM = f"rl-stores-{VERSION}.tgz"
GO = f"rl-go-{VERSION}.tar.gz"
JAR = f"rl-{VERSION}.jar"
SOURCES_JAR = f"rl-{VERSION}-sources.jar"
POM = f"rl-{VERSION}.pom"
GEM = f"rl-{VERSION}.gem"
PHP_ZIP = f"rl-php-{VERSION}.zip"
EXPECTED = sorted([*TARBALLS.values(), LUA, WHEEL, SDIST, NPM, GO, JAR, SOURCES_JAR, POM, GEM, PHP_ZIP])


def servers():
    redis7 = os.environ.get("RL_REDIS7") or shutil.which("redis-server") or "/usr/bin/redis-server"
    return {
        "Redis 7.0": redis7,
        "Redis 8.2": os.environ.get("RL_REDIS8", os.path.join(ROOT, ".deps/redis8/redis-server")),
        "Valkey 9.1": os.environ.get("RL_VALKEY9", os.path.join(ROOT, ".deps/valkey/valkey-server")),
    }


def run(args, cwd, timeout=600, env=None):
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise Failure(f"{' '.join(args)} (in {cwd}) exited {r.returncode}:\n{(r.stdout + r.stderr)[-3000:]}")
    return r.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server on a free loopback port in its own folder; `config` lines
    go into its configuration file (a user's `loadmodule` line)."""

    def __init__(self, name, folder, config=""):
        binary = servers()[name]
        check(os.path.isfile(binary), f"{name} not found at {binary} (run make deps, or set RL_REDIS7/8, RL_VALKEY9)")
        self.dir = tempfile.mkdtemp(prefix="server-", dir=folder)
        self.port = free_port()
        conf = os.path.join(self.dir, "server.conf")
        with open(conf, "w") as f:
            f.write(config + f"\nport {self.port}\nbind 127.0.0.1\ndir {self.dir}\nsave \"\"\n"
                    f"appendonly no\nlogfile {self.dir}/server.log\n")
        self.proc = subprocess.Popen([binary, conf], cwd=self.dir, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure(f"{name} exited at start:\n{self.log()[-2000:]}")
            try:
                if self.cli("PING").strip() == "PONG":
                    return
            except Failure:
                pass
            time.sleep(0.05)
        self.stop()
        raise Failure(f"{name} did not answer on port {self.port}")

    def log(self):
        try:
            return open(os.path.join(self.dir, "server.log"), errors="replace").read()
        except OSError:
            return ""

    def cli(self, *args, stdin=None):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args], input=stdin,
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise Failure(f"redis-cli {' '.join(args)}: {r.stderr}")
        return r.stdout

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Tests:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def run(self, name, fn, *args):
        started = time.monotonic()
        try:
            fn(*args)
        except Failure as e:
            self.failed += 1
            print(f"FAIL {name}: {e}", flush=True)
            return
        except Exception:
            self.failed += 1
            print(f"FAIL {name}:\n{traceback.format_exc()}", flush=True)
            return
        self.passed += 1
        print(f"ok   {name} ({time.monotonic() - started:.1f} s)", flush=True)


# ------------------------------------------------------------ the files


def checksums_cover_every_file(work):
    listed = [l.split(None, 1)[1].strip() for l in open(os.path.join(work, "SHA256SUMS"))]
    present = sorted(f for f in os.listdir(work) if f != "SHA256SUMS")
    check(sorted(listed) == present, f"SHA256SUMS lists {sorted(listed)}, the folder holds {present}")
    for name in EXPECTED:
        check(name in present, f"{name} missing from the release: {present}")
    run(["sha256sum", "--check", "--strict", "SHA256SUMS"], work)


def highest_glibc(so):
    out = run(["objdump", "-T", so], os.path.dirname(so))
    versions = {tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", out)}
    check(versions, f"{so}: no GLIBC_ symbol versions at all: {out[:500]}")
    return max(versions)


# What a release user reads, in each tarball: the pages the tarball's README
# and CHANGELOG.md point to, and what those pages link to.
SHIPPED_DOCS = ["docs/" + f for f in ("README.md", "commands.md", "install.md", "operations.md", "clients.md",
                                      "guarantees.md", "functions.md", "versioning.md")] + \
    ["contrib/redis_exporter/rl.lua", "contrib/grafana/rl-dashboard.json"]


def tarball_holds_a_stripped_so_for_glibc_2_28(work, build):
    name = TARBALLS[build]
    with tarfile.open(os.path.join(work, name)) as t:
        names = t.getnames()
        top = name[: -len(".tar.gz")]
        outside = [n for n in names if n != top and not n.startswith(top + "/")]
        check(not outside, f"{name} holds {outside} outside {top}/")
        first = sorted({n.split("/")[1] for n in names if "/" in n})
        want = sorted(["librl.so", "README.md", "LICENSE", "CHANGELOG.md", "redis.conf.example", "docs", "contrib"])
        check(first == want, f"{name}'s {top}/ holds {first}, not {want}")
        missing = [f for f in SHIPPED_DOCS if f"{top}/{f}" not in names]
        check(not missing, f"{name} lacks {missing}")
        # Names checked above: nothing lands outside `work`.
        t.extractall(work)
    so = os.path.join(work, top, "librl.so")
    symtab = run(["readelf", "-S", so], work)
    check(".symtab" not in symtab and ".debug_info" not in symtab, f"{so} is not stripped")
    glibc = highest_glibc(so)
    check(glibc <= MAX_GLIBC, f"{so} needs GLIBC_{'.'.join(map(str, glibc))}, above 2.28")
    readme = open(os.path.join(work, top, "README.md")).read()
    check(f"rl {VERSION}" in readme and "loadmodule" in readme and "@" not in readme.split("\n")[0],
          f"{top}/README.md does not name the version or the loadmodule line")
    example = open(os.path.join(work, top, "redis.conf.example")).read()
    check("target/release" not in example, f"{top}/redis.conf.example names a checkout's build to load")


def tarball_links_lead_inside_it(work, build):
    """README.md, CHANGELOG.md and the docs: every relative link leads to a
    file and heading the tarball holds (tarball_holds... unpacked it)."""
    top = os.path.join(work, TARBALLS[build][: -len(".tar.gz")])
    check(os.path.isdir(top), f"{top} not unpacked (the tarball test failed)")
    readme = open(os.path.join(top, "README.md"), encoding="utf-8").read()
    linked = set(release_docs.relative_links(readme))
    for page in ("docs/commands.md", "docs/install.md", "docs/operations.md", "docs/clients.md"):
        check(page in linked, f"{TARBALLS[build]}'s README.md has no link to {page}")
    bad = release_docs.broken_links(top)
    check(not bad, f"{len(bad)} broken links in {TARBALLS[build]}:\n" + "\n".join(bad[:20]))


def tarball_readme_installs_from_a_fresh_folder(work, build):
    """The tarball README's steps as written, for what a test may not touch
    (`sudo`, /usr/local/lib/rl under a folder that does not exist yet, the
    server's port): check, install from the unpacked folder, load, ask."""
    name, server_name = TARBALLS[build], {"redis": "Redis 7.0", "valkey": "Valkey 9.1"}[build]
    folder = tempfile.mkdtemp(prefix="readme-", dir=work)
    for f in (name, "SHA256SUMS"):
        shutil.copy(os.path.join(work, f), folder)
    with tarfile.open(os.path.join(folder, name)) as t:
        t.extractall(folder)  # the names are checked by the tarball test
    top = os.path.join(folder, name[: -len(".tar.gz")])
    steps = release_docs.install_steps(open(os.path.join(top, "README.md"), encoding="utf-8").read())
    prefix = os.path.join(folder, "root", "usr-local-lib-rl")
    subst = {"/usr/local/lib/rl": prefix}
    kinds = ["sha256sum", "install", "loadmodule", "redis-cli"]
    check([k for k in kinds if any(l.split()[0] in (k, "sudo") and k in l for l in steps)] == kinds,
          f"{name}'s README install steps lack one of {kinds}: {steps}")
    loadmodule, server = None, None
    try:
        for line in steps:
            if line.startswith("sha256sum"):
                out = shell(line, folder, **subst)
                check(f"{name}: OK" in out, f"{line}: {out}")
            elif line.startswith("loadmodule"):
                loadmodule = line.replace("/usr/local/lib/rl", prefix)
            elif line.startswith("redis-cli"):
                if server is None:
                    check(loadmodule, f"{name}'s README asks the server before its loadmodule line")
                    server = Server(server_name, work, loadmodule)
                out = shell(line.replace("redis-cli ", f"redis-cli -p {server.port} ", 1), folder)
                if line.endswith("MODULE LIST"):
                    check(re.search(rf"^name\nrl\nver\n{MODULE_VER}$", out, re.M), f"{line}: {out}")
                elif line.endswith("INFO rl"):
                    check(f"rl_version:{VERSION}" in out and f"rl_build:{build}" in out, f"{line}: {out}")
                elif " RL." in line:
                    check(out.split()[0] == "1", f"{line} answered {out!r}")
            else:
                shell(line, top, **subst)  # installs from the unpacked folder, as the step says
        check(os.path.isfile(os.path.join(prefix, "librl.so")), f"the steps installed nothing at {prefix}")
    finally:
        if server:
            server.stop()


def every_package_has_a_readme(work):
    """Each package says how to use it from that package alone: a README
    where its ecosystem shows one, naming the package's own release file,
    with no relative link (it would lead nowhere in the package)."""
    names = {"wheel": WHEEL, "sdist": SDIST, "npm": NPM, "go": GO, "jar": JAR, "sources_jar": SOURCES_JAR, "gem": GEM, "php": PHP_ZIP}
    own = {WHEEL: WHEEL, SDIST: WHEEL, NPM: NPM, GO: GO, JAR: JAR, SOURCES_JAR: JAR, GEM: GEM, PHP_ZIP: PHP_ZIP}
    problems = []
    for where, text in release_docs.package_readmes(work, names).items():
        if text is None:
            problems.append(f"no README at {where}")
            continue
        package = where.split(":")[0]
        if package in (WHEEL, SDIST) and "unknown storage scheme" not in text:
            problems.append(f"{where} does not say what limits answers without `import limits_rl`")
        if own[package] not in text:
            problems.append(f"{where} does not name {own[package]}")
        if release_docs.relative_links(text):
            problems.append(f"{where} links {release_docs.relative_links(text)}")
        if "in the rl repository" in text:
            problems.append(f"{where} sends the reader to the repository")
    check(not problems, "\n".join(problems))


def every_package_carries_the_license(work):
    """MIT asks that copies carry the notice: each client package holds the
    LICENSE the module's tarball holds, byte for byte, where its ecosystem
    looks for it; the POM names the license too."""
    with tarfile.open(os.path.join(work, TARBALLS["redis"])) as t:
        top = TARBALLS["redis"][: -len(".tar.gz")]
        want = t.extractfile(f"{top}/LICENSE").read()
    check(b"MIT License" in want, f"{TARBALLS['redis']}'s LICENSE is not the MIT text: {want[:80]!r}")

    def in_zip(name, *members):
        with zipfile.ZipFile(os.path.join(work, name)) as z:
            found = [m for m in members if m in z.namelist()]
            return z.read(found[0]) if found else None

    def in_tar(name, member):
        with tarfile.open(os.path.join(work, name)) as t:
            try:
                return t.extractfile(member).read()
            except KeyError:
                return None

    def in_gem(name, member):
        # A .gem is a tar whose data.tar.gz holds the files.
        with tarfile.open(os.path.join(work, name)) as outer:
            with tarfile.open(fileobj=outer.extractfile("data.tar.gz")) as data:
                try:
                    return data.extractfile(member).read()
                except KeyError:
                    return None

    places = {
        # Where setuptools puts it since metadata 2.4, or before.
        f"{WHEEL}: limits_rl-{VERSION}.dist-info/[licenses/]LICENSE":
            in_zip(WHEEL, f"limits_rl-{VERSION}.dist-info/licenses/LICENSE",
                   f"limits_rl-{VERSION}.dist-info/LICENSE"),
        f"{SDIST}: limits_rl-{VERSION}/LICENSE": in_tar(SDIST, f"limits_rl-{VERSION}/LICENSE"),
        f"{NPM}: package/LICENSE": in_tar(NPM, "package/LICENSE"),
        f"{GO}: rl-go-{VERSION}/LICENSE": in_tar(GO, f"rl-go-{VERSION}/LICENSE"),
        f"{JAR}: META-INF/LICENSE": in_zip(JAR, "META-INF/LICENSE"),
        f"{SOURCES_JAR}: META-INF/LICENSE": in_zip(SOURCES_JAR, "META-INF/LICENSE"),
        f"{GEM}: LICENSE": in_gem(GEM, "LICENSE"),
        f"{PHP_ZIP}: LICENSE": in_zip(PHP_ZIP, "LICENSE"),
    }
    wrong = [where for where, got in places.items() if got != want]
    check(not wrong, f"no LICENSE, or another text, at: {wrong}")
    pom = open(os.path.join(work, POM), encoding="utf-8").read()
    check(re.search(r"<licenses>\s*<license>\s*<name>MIT</name>", pom), f"{POM} names no MIT license")


# ----------------------------------------------------------- the module


def config_with_module(work, build):
    """The tarball's redis.conf.example with the line the README says to add."""
    top = os.path.join(work, TARBALLS[build][: -len(".tar.gz")])
    example = open(os.path.join(top, "redis.conf.example")).read()
    return example + f"\nloadmodule {os.path.join(top, 'librl.so')}\n"


def module_answers(work, build, server_name):
    server = Server(server_name, work, config_with_module(work, build))
    try:
        modules = server.cli("MODULE", "LIST")
        check(re.search(rf"^name\nrl\nver\n{MODULE_VER}$", modules, re.M),
              f"MODULE LIST has no rl with ver {MODULE_VER}:\n{modules}")
        info = [l for l in server.cli("INFO", "rl").splitlines() if ":" in l]
        check(info[:2] == [f"rl_version:{VERSION}", f"rl_build:{build}"], f"INFO rl starts {info[:3]}")
        check(re.fullmatch(r"rl_commit:[0-9a-f]{12}", info[2]), f"INFO rl: {info[2]} (a release names its commit)")
        got = [server.cli("RL.SLIDE", "user:42", "2", "60000").split()[0] for _ in range(3)]
        check(got == ["1", "1", "0"], f"RL.SLIDE limit 2 admitted {got}, want 1 1 0")
    finally:
        server.stop()


def ratelimit_files(fn, *args):
    """One of ratelimit.py's checks, its failures reported as this file's."""
    try:
        fn(*args)
    except ratelimit.Failure as e:
        raise Failure(str(e)) from None


def ratelimit_answers(work):
    server = Server("Redis 7.0", work, config_with_module(work, "redis"))
    try:
        ratelimit.serves_json(work, VERSION, server.port)
    except ratelimit.Failure as e:
        raise Failure(str(e)) from None
    finally:
        server.stop()


def redis_refuses_the_valkey_build(work, server_name):
    try:
        server = Server(server_name, work, config_with_module(work, "valkey"))
    except Failure as e:
        check("RedisModule_OnLoad" in str(e), f"{server_name} refused the valkey build, not saying why: {e}")
        return
    server.stop()
    raise Failure(f"{server_name} loaded the native Valkey build")


# ---------------------------------------------------------- the library


def library_loads_into_a_bare_server(work, server_name):
    server = Server(server_name, work)
    try:
        # As docs/install.md says: the file on standard input.
        with open(os.path.join(work, LUA)) as f:
            loaded = server.cli("-x", "FUNCTION", "LOAD", "REPLACE", stdin=f.read())
        check(loaded.strip() == "rl", f"FUNCTION LOAD answered {loaded!r}")
        got = server.cli("FCALL_RO", "rl_version", "0").strip()
        check(got == VERSION, f"rl_version answers {got}, the release is {VERSION}")
        got = [server.cli("FCALL", "rl_slide", "1", "user:42", "2", "60000").split()[0] for _ in range(3)]
        check(got == ["1", "1", "0"], f"rl_slide limit 2 admitted {got}, want 1 1 0")
    finally:
        server.stop()


# ---------------------------------------- the docs' lines, as written

MARKER = "run by tests/dist/dist_test.py"


def documented_lines(word):
    """The shell lines of every README.md / docs/install.md block marked as
    run here that mention `word`, each block once."""
    blocks = []
    for doc in ("README.md", "docs/install.md"):
        lines = open(os.path.join(ROOT, doc), encoding="utf-8").read().splitlines()
        for i, line in enumerate(lines):
            if MARKER in line and lines[i + 1].startswith("```"):
                body = []
                for l in lines[i + 2:]:
                    if l.startswith("```"):
                        break
                    body.append(l.split("  #")[0].rstrip())
                if any(word in l for l in body):
                    blocks.append((f"{doc}:{i + 2}", [l for l in body if l]))
    check(blocks, f"no block marked '{MARKER}' mentions {word}")
    return blocks


def shell(line, cwd, env=None, **subst):
    """A documented line as written, but for what a test may not touch:
    `sudo` (the test is its own user) and the paths and servers in `subst`."""
    for old, new in subst.items():
        line = line.replace(old, new)
    return run(["bash", "-c", line.replace("sudo ", "")], cwd, env=env)


def documented_module_lines_work(work):
    for where, lines in documented_lines("sha256sum"):
        folder = tempfile.mkdtemp(prefix="docs-", dir=work)
        for f in (TARBALLS["redis"], "SHA256SUMS"):
            shutil.copy(os.path.join(work, f), folder)
        prefix = os.path.join(folder, "usr-local-lib-rl")
        subst = {"/usr/local/lib/rl": prefix}
        for line in lines:
            out = shell(line, folder, **subst)
            if line.startswith("sha256sum"):
                check(f"{TARBALLS['redis']}: OK" in out, f"{where}: {line}: {out}")
        server = Server("Redis 7.0", work, f"loadmodule {prefix}/librl.so")
        try:
            got = server.cli("RL.SLIDE", "user:42", "1", "60000").split()[0]
            check(got == "1", f"{where}: the installed module answered {got}")
        finally:
            server.stop()


def documented_library_lines_work(work):
    for where, lines in documented_lines("FUNCTION LOAD"):
        server = Server("Valkey 9.1", work)
        try:
            outs = [shell(l, work, HOST="127.0.0.1", PORT=str(server.port)).strip() for l in lines]
            check(outs[0] == "rl" and VERSION in outs, f"{where}: the lines printed {outs}")
        finally:
            server.stop()


# ------------------------------------------------------------- Python


def http_statuses(port, n, proc, path="/"):
    """`n` GETs once the app listens: their status codes. (Waiting on the
    port, not on a request: every request counts against the limit.)"""
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            check(proc.poll() is None, f"the app exited {proc.returncode}")
            check(time.monotonic() < deadline, "the app never listened")
            time.sleep(0.1)
    codes = []
    for _ in range(n):
        try:
            codes.append(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).status)
        except urllib.error.HTTPError as e:
            codes.append(e.code)
    return codes


def run_app(args, cwd, port, n, path="/"):
    log = open(os.path.join(cwd, f"app-{port}.log"), "w+")
    proc = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    try:
        return http_statuses(port, n, proc, path)
    except Failure as e:
        log.seek(0)
        raise Failure(f"{e}:\n{log.read()[-3000:]}")
    finally:
        proc.kill()
        proc.wait()


def packaged_library(path):
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            return z.read("limits_rl/rl.lua")
    with tarfile.open(path) as t:
        top = os.path.basename(path)[: -len(".tar.gz")]
        return t.extractfile(f"{top}/src/limits_rl/rl.lua").read()


def python_package_limits_a_flask_app(work, package, edition):
    library = open(os.path.join(work, LUA), "rb").read()
    check(packaged_library(os.path.join(work, package)) == library, f"{package}'s rl.lua is not {LUA}")
    folder = tempfile.mkdtemp(prefix="py-", dir=work)
    run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3", "-m", "venv", "venv"], folder)
    py = os.path.join(folder, "venv/bin/python")
    if package == WHEEL:
        # docs/install.md's line, in the venv, beside the release files.
        (where, lines), = documented_lines("pip install")
        env = dict(os.environ, PATH=os.path.join(folder, "venv/bin") + os.pathsep + os.environ["PATH"])
        shell(next(l for l in lines if l.startswith("pip install")), work, env=env)
    # The sdist builds here, far from any checkout.
    run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         os.path.join(work, package), *PY_APP_DEPS], folder)
    installed = run([py, "-c", "import limits_rl, os; print(os.path.dirname(limits_rl.__file__))"], folder).strip()
    check(not installed.startswith(ROOT), f"limits_rl imported from the checkout: {installed}")
    check(open(os.path.join(installed, "rl.lua"), "rb").read() == library,
          f"the installed {installed}/rl.lua is not {LUA}")
    with open(os.path.join(folder, "app.py"), "w") as f:
        f.write(FLASK_APP)
    server = Server("Valkey 9.1", work, config_with_module(work, "redis") if edition == "module" else "")
    try:
        port = free_port()
        codes = run_app([py, "app.py", str(port), f"rl://127.0.0.1:{server.port}"], folder, port, 5)
        check(codes == [200, 200, 200, 429, 429], f"{package} ({edition}): statuses {codes}, want 3 x 200, 2 x 429")
        if edition == "functions":
            check("rl" in server.cli("FUNCTION", "LIST", "LIBRARYNAME", "rl"), "the app did not load the library")
    finally:
        server.stop()


# --------------------------------------------------------------- Node


def node_project(work):
    folder = tempfile.mkdtemp(prefix="node-", dir=work)
    with open(os.path.join(folder, "package.json"), "w") as f:
        f.write('{ "name": "app", "private": true }\n')
    # docs/install.md's line, in the app's folder holding the release file.
    shutil.copy(os.path.join(work, NPM), folder)
    (where, lines), = documented_lines("npm install")
    shell(next(l for l in lines if l.startswith("npm install")), folder)
    run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"./{NPM}", *NODE_APP_DEPS], folder)
    installed = os.path.join(folder, "node_modules/rl-stores")
    check(not os.path.islink(installed), "rl-stores installed as a link")
    check(open(os.path.join(installed, "rl.lua"), "rb").read() == open(os.path.join(work, LUA), "rb").read(),
          f"the npm package's rl.lua is not {LUA}")
    return folder


def express_limits(work, folder, source, name, cwd):
    app = os.path.join(folder, name)
    with open(app, "w") as f:
        f.write(source)
    server = Server("Valkey 9.1", work, config_with_module(work, "redis"))
    try:
        port = free_port()
        codes = run_app(["node", app, str(port), f"redis://127.0.0.1:{server.port}"], cwd, port, 5)
        check(codes == [200, 200, 200, 429, 429], f"{name} (started in {cwd}): statuses {codes}, want 3 x 200, 2 x 429")
    finally:
        server.stop()


def types_pass_tsc_strict(folder):
    with open(os.path.join(folder, "typed.ts"), "w") as f:
        f.write(TYPED)
    run([os.path.join(folder, "node_modules/.bin/tsc"), "--strict", "--noEmit", "--esModuleInterop",
         "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "typed.ts"], folder)


# --------------------------------------------------------------- main


def main():
    print(f"dist: testing {DIST} (version {VERSION})", flush=True)
    t = Tests()
    if not os.path.isdir(DIST):
        print(f"FAIL dist: {DIST} not found: run make dist")
        print("dist: 0 passed, 1 failed, 0 skipped")
        return 1
    work = tempfile.mkdtemp(prefix="rl-release-")
    try:
        for f in os.listdir(DIST):
            if os.path.isfile(os.path.join(DIST, f)):
                shutil.copy(os.path.join(DIST, f), work)
        t.run("SHA256SUMS covers every file and each matches", checksums_cover_every_file, work)
        for build in TARBALLS:
            t.run(f"{TARBALLS[build]}: its files and docs, librl.so stripped, GLIBC 2.28 at most",
                  tarball_holds_a_stripped_so_for_glibc_2_28, work, build)
            t.run(f"{TARBALLS[build]}: every Markdown link leads to a file and heading it holds",
                  tarball_links_lead_inside_it, work, build)
            t.run(f"{TARBALLS[build]}: its README's install steps, as written, from a fresh folder",
                  tarball_readme_installs_from_a_fresh_folder, work, build)
        t.run("every client package has a README for using it", every_package_has_a_readme, work)
        t.run("every client package carries the LICENSE", every_package_carries_the_license, work)
        for server in servers():
            t.run(f"redis build loaded by {server} answers", module_answers, work, "redis", server)
        t.run("valkey build loaded by Valkey 9.1 answers", module_answers, work, "valkey", "Valkey 9.1")
        for server in ("Redis 7.0", "Redis 8.2"):
            t.run(f"{server} refuses the valkey build, saying why", redis_refuses_the_valkey_build, work, server)
        for server in ("Redis 7.0", "Valkey 9.1"):
            t.run(f"{LUA} loaded into a bare {server} answers", library_loads_into_a_bare_server, work, server)
        t.run(f"rl-ratelimit {VERSION}: static binaries for linux/amd64 and linux/arm64",
              ratelimit_files, ratelimit.binaries_are_static, work, VERSION)
        t.run(f"rl-ratelimit {VERSION}: envoy.md's links lead inside each tarball",
              ratelimit_files, ratelimit.docs_links_lead_inside, work, VERSION)
        t.run(f"rl-ratelimit {VERSION} (amd64) from its tarball answers /json beside the redis build",
              ratelimit_answers, work)
        t.run("the module install lines of README.md and docs/install.md, as written",
              documented_module_lines_work, work)
        t.run("the library lines of docs/install.md, as written", documented_library_lines_work, work)
        t.run(f"{WHEEL} in a fresh venv: Flask-Limiter limits over HTTP (module)",
              python_package_limits_a_flask_app, work, WHEEL, "module")
        t.run(f"{SDIST} in a fresh venv: Flask-Limiter limits over HTTP (library loaded by the adapter)",
              python_package_limits_a_flask_app, work, SDIST, "functions")
        folder = None

        def install():
            nonlocal folder
            folder = node_project(work)

        t.run(f"{NPM} installs into a fresh project with its peers", install)
        if folder:
            t.run("Express app, CommonJS: limits over HTTP", express_limits, work, folder,
                  EXPRESS_CJS, "app.cjs", folder)
            t.run("Express app, ES module started from / : limits over HTTP", express_limits, work, folder,
                  EXPRESS_ESM, "app.mjs", "/")
            t.run("tsc --strict passes on a file using the types", types_pass_tsc_strict, folder)
        else:
            t.failed += 3
            print("FAIL the three Node app tests: the install failed")
        t.run(f"{GEM} installed with gem install --local: a Rack app with rl_throttle limits over HTTP (thin), "
              "module and library", ruby.gem_limits_a_rack_app, work, sys.modules[__name__])
        php.run_tests(t, work, sys.modules[__name__])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"dist: {t.passed} passed, {t.failed} failed, 0 skipped")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
