#!/usr/bin/env bash
# `make dist`: the release files in dist/, named by Cargo.toml's version:
#   rl-<v>-redis-x86_64-linux-gnu.tar.gz   the Redis module API build
#   rl-<v>-valkey-x86_64-linux-gnu.tar.gz  the native Valkey build
#     each: the stripped librl.so, an install README (scripts/dist/README.md),
#     LICENSE, CHANGELOG.md, redis.conf.example, and the docs a release user
#     reads (docs/, contrib/: scripts/dist/docs.py)
#   rl-<v>.lua                             the function library
#   what every executable clients/<lang>/scripts/dist <outdir> <version>
#     writes (python: sdist and wheel; node: the npm pack tarball; go: the
#     module's source; java: the jars and POM; ruby: rl-<v>.gem; php:
#     rl-php-<v>.zip), and services/<name>/scripts/dist (rl-ratelimit's
#     static binaries)
#   SHA256SUMS                             over every file above
# The .so is linked against glibc 2.28 (cargo-zigbuild with zig, both from
# make deps), so it loads on RHEL 8+, Debian 10+, Ubuntu 20.04+; this script
# fails if either needs a newer GLIBC_ symbol or is not stripped.
set -euo pipefail
cd "$(dirname "$0")/.."
# RL_EVICT_PER_CALL changes the stale-entry removal bound of a build (make
# bench-bound measures bounds with it): a release is built with rl's own.
if [ -n "${RL_EVICT_PER_CALL:-}" ]; then
    echo "dist: RL_EVICT_PER_CALL is set ($RL_EVICT_PER_CALL): unset it, a release ships rl's own removal bound" >&2
    exit 1
fi
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
TRIPLE=x86_64-linux-gnu
# cargo-zigbuild's suffix picks the glibc to link against.
TARGET=x86_64-unknown-linux-gnu.2.28
MAX_GLIBC=2.28
OUT=dist
BUILD_DIR=target/dist

say() { echo "dist: $*"; }
die() {
    echo "dist: $*" >&2
    exit 1
}
[ -n "$VERSION" ] || die "no version in Cargo.toml"
[ -x .deps/cargo/bin/cargo-zigbuild ] || die "cargo-zigbuild not found in .deps/cargo/bin: run make deps"
.deps/venv/bin/python -c 'import ziglang' 2>/dev/null ||
    die "zig (the ziglang wheel) not found in .deps/venv: run make deps"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    say "warning: the checkout has uncommitted changes; INFO rl's rl_commit names HEAD, not them"
fi

rm -rf "$OUT" "$BUILD_DIR/stage"
mkdir -p "$OUT" "$BUILD_DIR/stage"
started=$SECONDS

# cargo-zigbuild finds zig as `python3 -m ziglang`: the venv's python3 first.
export PATH=$PWD/.deps/cargo/bin:$PWD/.deps/venv/bin:$PATH
# cargo-zigbuild hands bindgen zig's header folders as zig reports them,
# relative to where zig ran, so a build script running elsewhere finds no
# sys/types.h: the same folders, absolute, first.
zig_lib=$(realpath "$(.deps/venv/bin/python -m ziglang env | sed -n 's/^ *"lib_dir": "\(.*\)",$/\1/p')")
[ -d "$zig_lib/libc/include" ] || die "zig's lib folder not found ($zig_lib)"
BINDGEN_EXTRA_CLANG_ARGS=""
for dir in include libc/include/x86_64-linux-gnu libc/include/generic-glibc libc/include/x86-linux-any libc/include/any-linux-any; do
    BINDGEN_EXTRA_CLANG_ARGS+=" -isystem $zig_lib/$dir"
done
export BINDGEN_EXTRA_CLANG_ARGS
# No debug info and no symbols: 1 MB instead of 17 (the .so is not for
# debugging; a build from source keeps them).
export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols

max_glibc() {
    objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1
}

for build in redis valkey; do
    case $build in
    redis) features=() title="Redis module API" loads="loaded by Redis 7.0 and newer and by Valkey (as a Redis-API module)" ;;
    valkey) features=(--no-default-features --features valkey) title="native Valkey" loads="loaded by Valkey 9 as a native module (Redis refuses it: use the redis build there)" ;;
    esac
    say "building the $build .so for $TARGET"
    cargo zigbuild --release --lib --target "$TARGET" --target-dir "$BUILD_DIR" "${features[@]}"
    so=$BUILD_DIR/x86_64-unknown-linux-gnu/release/librl.so
    glibc=$(max_glibc "$so")
    [ "$(printf '%s\n' "$glibc" "$MAX_GLIBC" | sort -V | tail -n 1)" = "$MAX_GLIBC" ] ||
        die "$so needs GLIBC_$glibc, above $MAX_GLIBC"
    file -L "$so" | grep -q ', stripped' || die "$so is not stripped: $(file -L "$so")"

    name=rl-$VERSION-$build-$TRIPLE
    dir=$BUILD_DIR/stage/$name
    mkdir -p "$dir"
    install -m 0755 "$so" "$dir/librl.so"
    install -m 0644 LICENSE redis.conf.example "$dir/"
    # In every tarball, not in an archive of their own: one download holds
    # the .so and all it says, and CHANGELOG.md's docs/ links resolve.
    .deps/venv/bin/python scripts/dist/docs.py "$dir" "$VERSION"
    sed -e "s/@VERSION@/$VERSION/g" -e "s/@BUILD@/$build/g" -e "s/@BUILD_TITLE@/$title/g" \
        -e "s/@BUILD_LOADS@/$loads/g" \
        -e "s/@MODULE_VER@/$(awk -F. '{ print $1 * 10000 + $2 * 100 + $3 }' <<<"$VERSION")/g" \
        scripts/dist/README.md >"$dir/README.md"
    # Same files, same bytes: owner, order and times fixed.
    tar -C "$BUILD_DIR/stage" --sort=name --owner=0 --group=0 --numeric-owner \
        --mtime="@$(git log -1 --format=%ct 2>/dev/null || echo 0)" -cf - "$name" | gzip -n -9 >"$OUT/$name.tar.gz"
    say "$OUT/$name.tar.gz (librl.so $(stat -c %s "$dir/librl.so") bytes, GLIBC_$glibc at most)"
done

cp functions/rl.lua "$OUT/rl-$VERSION.lua"
say "$OUT/rl-$VERSION.lua"

# Every language's packages and the services' binaries:
# clients/<lang>/scripts/dist and services/<name>/scripts/dist <outdir> <version>.
for script in clients/*/scripts/dist services/*/scripts/dist; do
    [ -x "$script" ] || continue
    say "running $script"
    "$script" "$OUT" "$VERSION"
done

(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs sha256sum >SHA256SUMS)
say "$OUT/SHA256SUMS over $(($(wc -l <"$OUT/SHA256SUMS"))) files, in $((SECONDS - started)) s:"
sed 's/^/  /' "$OUT/SHA256SUMS"
