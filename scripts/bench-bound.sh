#!/usr/bin/env bash
# make bench-bound: the stale-backlog calls at removal bounds of 128, 64
# and 32 (RL_BOUNDS), both editions, beside the server's own
# ZREMRANGEBYRANK of the same counts, interleaved in one run
# (benches/worst/bound.rs). Builds one module per bound and host API into
# target/bound/ with RL_EVICT_PER_CALL (decide.rs reads it at build time;
# the shipped build never sets it); the library's bound is patched into
# its text at FUNCTION LOAD. Writes target/bench/bound.md and bound.csv.
# Env: RL_BOUNDS, RL_BOUND_ROUNDS (default 15), RL_WORST_SERVERS,
# RL_WORST_EDITIONS.
set -euo pipefail
cd "$(dirname "$0")/.."
bounds=${RL_BOUNDS:-128,64,32}
out=target/bound
mkdir -p "$out"
for n in ${bounds//,/ }; do
  # One target dir per host API: a rebuild at another bound recompiles rl
  # alone (cargo tracks the variable).
  RL_EVICT_PER_CALL=$n cargo build --release --lib --target-dir "$out/redis"
  cp "$out/redis/release/librl.so" "$out/librl-redis-$n.so"
  RL_EVICT_PER_CALL=$n cargo build --release --lib --no-default-features --features valkey \
    --target-dir "$out/valkey"
  cp "$out/valkey/release/librl.so" "$out/librl-valkey-$n.so"
done
RL_BOUNDS=$bounds RL_BOUND_MODULES=$PWD/$out RL_BENCH=bound cargo bench --bench server
