#!/usr/bin/env bash
# `make functions`: assembles the function edition's source, functions/src/,
# into the one loadable library functions/rl.lua (FUNCTION LOAD takes one
# file, and users download one). With `-` as its argument it writes the
# assembly to stdout instead (the test that checks the committed file runs
# it so). Fails, writing nothing, when a file under functions/src/ is not
# in FILES or is over 700 lines.
set -euo pipefail
cd "$(dirname "$0")/.."

# The one place that says which files make the library, in load order: the
# library is one Lua chunk, so a file may use only what an earlier one
# defines (the prelude first, the registrations last).
FILES=(
  prelude/errors.lua
  prelude/args.lua
  prelude/keys.lua
  slide/log.lua
  slide/slide.lua
  buckets/state.lua
  buckets/read.lua
  buckets/buckets.lua
  count.lua
  throttle.lua
  fixed.lua
  leases.lua
  all.lua
  block.lua
  dispatch.lua
)
MAX_LINES=700

src=functions/src
status=0
while IFS= read -r f; do
  listed=0
  for g in "${FILES[@]}"; do
    [[ "$f" == "$g" ]] && listed=1
  done
  if ((!listed)); then
    echo "assemble-functions: $src/$f is not listed in FILES (scripts/assemble-functions.sh)" >&2
    status=1
  fi
done < <(cd "$src" && find . -name '*.lua' | sed 's|^\./||' | sort)
for f in "${FILES[@]}"; do
  if [[ ! -f "$src/$f" ]]; then
    echo "assemble-functions: $src/$f is listed but missing" >&2
    status=1
  elif (($(wc -l <"$src/$f") > MAX_LINES)); then
    echo "assemble-functions: $src/$f is over $MAX_LINES lines; split it" >&2
    status=1
  fi
done
((status == 0)) || exit 1

assemble() {
  # The first line is the one FUNCTION LOAD requires (EVAL users drop it).
  echo '#!lua name=rl'
  echo '-- Generated from functions/src/ by scripts/assemble-functions.sh: edit'
  echo '-- the files there and run `make functions`, never this file (a test'
  echo '-- fails when it differs from the assembly).'
  for f in "${FILES[@]}"; do
    echo
    echo "-- ---- functions/src/$f"
    cat "$src/$f"
  done
}

if [[ "${1:-}" == "-" ]]; then
  assemble
else
  tmp=$(mktemp functions/.rl.lua.XXXXXX)
  assemble >"$tmp"
  chmod 644 "$tmp"
  mv "$tmp" functions/rl.lua
  echo "functions/rl.lua assembled from ${#FILES[@]} files in $src/"
fi
