#!/usr/bin/env bash
# Part of `make deps` (scripts/deps.sh): the older servers that managed
# services and distributions run, for the subset of the suite in
# tests/it/older/, put into .deps/ without installing anything system-wide
# (the system keeps its own Redis):
#   Valkey 8.0  Debian 12's bookworm-backports packages valkey-server and
#               valkey-tools, `apt-get download` + `dpkg -x`
#               -> .deps/valkey8/usr/bin/valkey-server
#   Valkey 8.1  the upstream source of Debian 13's (trixie) source package
#               valkey (`apt-get source`), a plain `make`
#               -> .deps/valkey81/valkey-server
#   Redis 8.0   likewise from trixie's source package redis
#               -> .deps/redis80/redis-server
# apt reads a sources list of its own (.deps/apt/sources.list: the backports
# and trixie suites on the Debian mirror this machine's apt already uses),
# with its own lists and cache under .deps/apt/: the system's apt sources,
# pins and installed packages stay as they were. Only the source packages'
# .orig tarball is built: it is the upstream release, and Debian's patches
# (its packaging: system jemalloc, Lua, hiredis) are not what a managed
# service runs. Each step runs only when its binary is missing, so a second
# run fetches and builds nothing.
#
# The variables the tests read name a binary to use instead, and nothing is
# fetched for it: RL_VALKEY8, RL_VALKEY81, RL_REDIS80.
#
# `older-servers.sh --list` prints one line per server, as deps.sh's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
DEPS=.deps
VALKEY8=${RL_VALKEY8:-$DEPS/valkey8/usr/bin/valkey-server}
VALKEY81=${RL_VALKEY81:-$DEPS/valkey81/valkey-server}
REDIS80=${RL_REDIS80:-$DEPS/redis80/redis-server}
APT_DIR=$PWD/$DEPS/apt

say() { echo "deps: $*"; }
die() {
    echo "deps: $*" >&2
    exit 1
}

# `v=8.0.1` of a server binary's --version, or nothing.
version_of() { "$1" --version 2>/dev/null | sed -n 's/.* v=\([0-9.]*\).*/\1/p'; }

# Whether binary $1 is there and reports a version starting with $2.
is_release() { [ -x "$1" ] && case $(version_of "$1") in "$2".*) true ;; *) false ;; esac; }

if [ "${1:-}" = --list ]; then
    for line in "Valkey 8.0:$VALKEY8" "Valkey 8.1:$VALKEY81" "Redis 8.0:$REDIS80"; do
        name=${line%%:*} bin=${line#*:}
        say "$name: $bin ($("$bin" --version | cut -d' ' -f1-3))"
    done
    exit 0
fi

# A binary named by its variable is used as it is: check it, fetch nothing.
for pair in "RL_VALKEY8:8.0" "RL_VALKEY81:8.1" "RL_REDIS80:8.0"; do
    var=${pair%%:*} want=${pair#*:}
    bin=${!var:-}
    if [ -n "$bin" ] && ! is_release "$bin" "$want"; then
        die "$var=$bin is not a server binary of release $want (its --version: $("$bin" --version 2>&1 | head -1))"
    fi
done

need=()
is_release "$VALKEY8" 8.0 || need+=(valkey8)
is_release "$VALKEY81" 8.1 || need+=(valkey81)
is_release "$REDIS80" 8.0 || need+=(redis80)
[ ${#need[@]} -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 ||
    die "Valkey 8.0, Valkey 8.1 and Redis 8.0 come from Debian's archive through apt-get, and there is none here: build them yourself and set RL_VALKEY8, RL_VALKEY81 and RL_REDIS80 to their server binaries"

# The Debian mirror this machine's apt uses: the one serving its release's
# suite (bookworm on Debian 12), as `apt-get update` would fetch it.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
mirror=${RL_DEBIAN_MIRROR:-$(apt-get --print-uris update 2>/dev/null |
    sed -n "s|^'\(.*\)/dists/$codename/InRelease'.*|\1|p" | head -1)}
[ -n "$mirror" ] ||
    die "no Debian mirror found in this machine's apt sources (none serves dists/${codename:-?}/): set RL_DEBIAN_MIRROR to one (the URI a sources line names, ending in /debian)"

mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$APT_DIR/sources.list.d" "$APT_DIR/preferences.d"
cat >"$APT_DIR/sources.list" <<EOF
# Written by scripts/older-servers.sh for .deps/ only; the system's apt never reads it.
deb $mirror bookworm-backports main
deb-src $mirror trixie main
EOF
apt_private=(apt-get -q
    -o "Dir::Etc::SourceList=$APT_DIR/sources.list"
    -o "Dir::Etc::SourceParts=$APT_DIR/sources.list.d"
    -o "Dir::Etc::Preferences=$APT_DIR/preferences"
    -o "Dir::Etc::PreferencesParts=$APT_DIR/preferences.d"
    -o "Dir::State::Lists=$APT_DIR/lists"
    -o "Dir::Cache=$APT_DIR/cache")
# As root, apt drops to its _apt user to download, which cannot write
# into .deps/; the files are checked against the signed indexes all the same.
[ "$(id -u)" -eq 0 ] && apt_private+=(-o APT::Sandbox::User=root)
apt_cache=("${apt_private[@]}")
apt_cache[0]=apt-cache

say "reading the bookworm-backports and trixie source indexes into $DEPS/apt/ (from $mirror)"
"${apt_private[@]}" update >"$APT_DIR/update.log" 2>&1 ||
    die "apt-get update of $APT_DIR/sources.list failed: $(tail -3 "$APT_DIR/update.log")"

# The newest version of binary package $1 in the private indexes whose
# upstream release starts with $2 (8.0 -> 8.0.1+dfsg1-1~bpo12+1).
binary_version() {
    "${apt_cache[@]}" madison "$1" | awk -F' *[|] *' -v p="$2." '$2 ~ "^([0-9]+:)?" p { print $2; exit }'
}

# The version of source package $1 in the private indexes, if its upstream
# release starts with $2.
source_version() {
    "${apt_cache[@]}" showsrc "$1" 2>/dev/null |
        awk -v p="$2." '/^Version: / { v = $2; u = v; sub(/^[0-9]+:/, "", u); if (index(u, p) == 1) { print v; exit } }'
}

fetch_valkey8() {
    local v tmp
    v=$(binary_version valkey-server 8.0)
    [ -n "$v" ] || die "bookworm-backports has no Valkey 8.0 now ($("${apt_cache[@]}" madison valkey-server | head -3)): set RL_VALKEY8 to a valkey-server 8.0 binary"
    tmp=$(mktemp -d "$PWD/$DEPS/valkey8.XXXXXX")
    say "fetching valkey-server and valkey-tools $v (bookworm-backports) for $VALKEY8"
    (cd "$tmp" && "${apt_private[@]}" download "valkey-server=$v" "valkey-tools=$v") >"$tmp/download.log" 2>&1 ||
        die "apt-get download valkey-server=$v valkey-tools=$v failed: $(tail -3 "$tmp/download.log")"
    mkdir "$tmp/root"
    for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/root"; done
    rm -rf "$DEPS/valkey8"
    mv "$tmp/root" "$DEPS/valkey8"
    rm -rf "$tmp"
    is_release "$VALKEY8" 8.0 || die "$VALKEY8 does not run as Valkey 8.0: $("$VALKEY8" --version 2>&1 | head -3)"
}

# build_from_source PACKAGE RELEASE BINARY DEST: the .orig tarball of
# trixie's source package PACKAGE (upstream release RELEASE), built with a
# plain make; src/BINARY copied to DEST.
build_from_source() {
    local pkg=$1 release=$2 binary=$3 dest=$4 v tmp orig start
    v=$(source_version "$pkg" "$release")
    [ -n "$v" ] || die "trixie's source package $pkg is not release $release now ($("${apt_cache[@]}" showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -1)): build $binary $release yourself and set its RL_ variable"
    # Outside this checkout: the servers' build stamps the git commit it
    # finds around it (`--version`'s sha), which would be rl's.
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/rl-$pkg-src.XXXXXX")
    say "fetching the source of $pkg $v (trixie) and building $binary for $dest (a few minutes)"
    # Only the .orig tarball is used. Where a mirror serves the .orig but
    # not the .dsc, apt-get source fails after fetching (and checking) it.
    (cd "$tmp" && "${apt_private[@]}" source --download-only "$pkg=$v") >"$tmp/source.log" 2>&1 || true
    orig=$(find "$tmp" -maxdepth 1 -name "${pkg}_*.orig.tar.*" | head -1)
    [ -n "$orig" ] || die "apt-get source --download-only $pkg=$v fetched no .orig tarball: $(tail -3 "$tmp/source.log")"
    mkdir "$tmp/tree"
    tar -xf "$orig" -C "$tmp/tree" --strip-components=1
    start=$SECONDS
    make -C "$tmp/tree" -j"$(nproc)" >"$tmp/make.log" 2>&1 ||
        die "make of $pkg $v failed (log kept: $tmp/make.log): $(tail -5 "$tmp/make.log")"
    mkdir -p "$(dirname "$dest")"
    install -m 0755 "$tmp/tree/src/$binary" "$dest.part"
    mv "$dest.part" "$dest"
    rm -rf "$tmp"
    say "built $dest in $((SECONDS - start)) s"
    is_release "$dest" "$release" || die "$dest does not run as $release: $("$dest" --version 2>&1 | head -3)"
}

for n in "${need[@]}"; do
    case $n in
    valkey8) fetch_valkey8 ;;
    valkey81) build_from_source valkey 8.1 valkey-server "$VALKEY81" ;;
    redis80) build_from_source redis 8.0 redis-server "$REDIS80" ;;
    esac
done
