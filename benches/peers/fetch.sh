#!/usr/bin/env bash
# The scripts of the rate limiters users run today, read from their packages
# as the registries ship them (never copied into this repository), and the
# call each library makes with them on one hit:
#   target/bench-peers/calls/<row>.lua   the script
#   target/bench-peers/calls/<row>.args  numkeys, keys, arguments (one a line)
# Rows: limits_moving (+ _hot, _full), limits_sliding, limits_fixed (Python
# limits), rlf_redis (rate-limiter-flexible's RateLimiterRedis),
# upstash_sliding, upstash_token (@upstash/ratelimit), rlr_express
# (rate-limit-redis, express-rate-limit's Redis store), redis_rate
# (go-redis/redis_rate v10, fetched through the Go module proxy into
# .deps/go by clients/go's go.mod; clients/go/internal/benchcalls records
# its call).
#   benches/peers/fetch.sh        (PYTHON: a python >= 3.10 with pip)
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMITS=5.8.0
RLF=11.4.0
UPSTASH=2.2.0
RLR=4.3.1
DIR=$PWD/target/bench-peers
PYTHON=${PYTHON:-$PWD/.deps/venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
mkdir -p "$DIR/calls"

if [ "$(cat "$DIR/py/.pinned" 2>/dev/null)" != "$LIMITS" ]; then
  rm -rf "$DIR/py"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check \
    --target "$DIR/py" "limits[redis]==$LIMITS"
  echo "$LIMITS" >"$DIR/py/.pinned"
fi
pins="rate-limiter-flexible@$RLF @upstash/ratelimit@$UPSTASH rate-limit-redis@$RLR"
if [ "$(cat "$DIR/node/.pinned" 2>/dev/null)" != "$pins" ]; then
  rm -rf "$DIR/node"
  mkdir -p "$DIR/node"
  # shellcheck disable=SC2086
  npm install --silent --no-save --no-package-lock --legacy-peer-deps \
    --ignore-scripts --no-audit --no-fund --prefix "$DIR/node" $pins
  echo "$pins" >"$DIR/node/.pinned"
fi

rm -f "$DIR"/calls/*
PYTHONPATH="$DIR/py" "$PYTHON" benches/peers/limits_calls.py "$DIR/calls"
node benches/peers/node_calls.js "$DIR/node/node_modules" "$DIR/calls"
(cd clients/go && GOMODCACHE="$PWD/../../.deps/go/mod" GOCACHE="$PWD/../../.deps/go/cache" \
  GOFLAGS=-buildvcs=false go run ./internal/benchcalls "$DIR/calls")
