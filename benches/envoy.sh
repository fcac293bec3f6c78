#!/usr/bin/env bash
# Requests per second of envoyproxy/ratelimit and rl-ratelimit on this
# machine, in the same run: one Redis 7.0 with rl, both services with the
# same configuration (fixed windows that always admit) and the same
# settings (pool of 10), each driven in turn by rl-ratelimit-load (Go,
# gRPC) with 1, 2 and 4 descriptors per request; a table with each ratio.
# Server instructions per request are benches/callgrind.sh's Envoy rows.
#   benches/envoy.sh          Env: D (seconds per run, default 5), C
#                             (workers, default 32), SERVER, MODULE
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
D=${D:-5}
C=${C:-32}
SERVER=${SERVER:-/usr/bin/redis-server}
MODULE=${MODULE:-$ROOT/target/release/librl.so}
export GOMODCACHE="$ROOT/.deps/go/mod" GOCACHE="$ROOT/.deps/go/cache" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
# The pinned envoyproxy/ratelimit is services/ratelimit/tests/run's.
version=$(sed -n 's/^ENVOY_RATELIMIT_VERSION=//p' services/ratelimit/tests/run)
envoy_bin=$ROOT/.deps/envoy-ratelimit/$version/service_cmd
if [ ! -x "$envoy_bin" ]; then
    GOBIN=$(dirname "$envoy_bin") go install "github.com/envoyproxy/ratelimit/src/service_cmd@$version"
fi
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
(cd services/ratelimit && go build -o "$work/rl-ratelimit" ./cmd/rl-ratelimit &&
    go build -o "$work/load" ./cmd/rl-ratelimit-load)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rport=$(port)
"$SERVER" --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --loadmodule "$MODULE" \
    --logfile "$work/server.log" &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$rport" PING >/dev/null 2>&1 && break; sleep 0.1; done
mkdir -p "$work/runtime/config"
{
    echo "domain: bench"
    echo "descriptors:"
    for i in 0 1 2 3; do
        echo "  - key: d$i"
        echo "    rate_limit: {unit: minute, requests_per_unit: 1000000}"
    done
} >"$work/runtime/config/config.yaml"
# start_service name binary prefix: sets grpc_port. Not in a command
# substitution: its subshell would keep the pid from the cleanup.
start_service() {
    local g h dbg
    g=$(port) h=$(port) dbg=$(port)
    env -i PATH="$PATH" REDIS_SOCKET_TYPE=tcp REDIS_URL="127.0.0.1:$rport" RUNTIME_ROOT="$work/runtime" \
        RUNTIME_WATCH_ROOT=false USE_STATSD=false LOG_LEVEL=error CACHE_KEY_PREFIX="$3" HOST=127.0.0.1 PORT="$h" \
        GRPC_HOST=127.0.0.1 GRPC_PORT="$g" DEBUG_HOST=127.0.0.1 DEBUG_PORT="$dbg" "$2" >"$work/$1.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do
        curl -sf "http://127.0.0.1:$h/healthcheck" >/dev/null 2>&1 && break
        sleep 0.1
    done
    curl -sf "http://127.0.0.1:$h/healthcheck" >/dev/null || { cat "$work/$1.log" >&2; exit 1; }
    grpc_port=$g
}
start_service envoy "$envoy_bin" envoy_
envoy_port=$grpc_port
start_service rl "$work/rl-ratelimit" rl_
rl_port=$grpc_port
echo "envoyproxy/ratelimit $version and rl-ratelimit on $(basename "$SERVER") with rl; $C workers, $D s each, $(nproc) cores"
printf '%-12s %22s %16s %8s\n' descriptors envoyproxy/ratelimit rl-ratelimit ratio
for n in 1 2 4; do
    rps() { "$work/load" -addr "127.0.0.1:$1" -n "$n" -c "$C" -d "${D}s" >"$work/load.out" || { cat "$work/load.out" >&2; exit 1; }; sed -n "s/^requests_per_second=\([0-9]*\).*/\1/p" "$work/load.out"; }
    e=$(rps "$envoy_port")
    r=$(rps "$rl_port")
    printf '%-12s %22s %16s %7sx\n' "$n" "$e" "$r" "$(awk -v a="$r" -v b="$e" 'BEGIN { printf "%.2f", a / b }')"
done
