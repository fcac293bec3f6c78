#!/usr/bin/env bash
# Fails, saying what to do, unless cargo and rustc are at least Cargo.toml's
# rust-version. Every building make target runs it first (Makefile: rust-version),
# so an old toolchain stops here and not on a confusing cargo error (Debian's
# packaged cargo 1.63 cannot even read Cargo.lock's version 4). Silent when fine.
set -euo pipefail
cd "$(dirname "$0")/.."
min=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml)
[ -n "$min" ] || { echo "rust-version: no rust-version in Cargo.toml" >&2; exit 1; }
how="Get it with rustup (https://rustup.rs): install it, or run 'rustup update stable' if you have it. Debian's own cargo and rustc packages (1.63) are too old: remove them (apt-get remove cargo rustc) or put ~/.cargo/bin first in PATH."
at_least() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" = "$2" ]; }
for tool in rustc cargo; do
    if ! path=$(command -v "$tool"); then
        echo "rl needs Rust $min or newer, and there is no $tool on PATH. $how" >&2
        exit 1
    fi
    # "cargo 1.95.0 (f2d3ce0bd 2026-03-21)", "rustc 1.97.0-nightly (...)"
    version=$("$tool" --version 2>/dev/null | awk 'NR == 1 { print $2 }') || true
    version=${version%%-*}
    if ! [[ $version =~ ^[0-9]+\.[0-9]+ ]] || ! at_least "$version" "$min"; then
        echo "rl needs Rust $min or newer (Cargo.toml rust-version); $path is ${version:-of unknown version}. $how" >&2
        exit 1
    fi
done
