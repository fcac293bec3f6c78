#!/usr/bin/env bash
# `make check-memory`: a short workload on every rl command with the server
# under valgrind memcheck, for both module builds. Valkey 9.1 from `make deps`
# uses libc malloc, so memcheck sees every allocation the module makes
# through the server. Fails if valgrind reports memory "definitely lost" in a
# stack passing through the module (the server may report its own at exit;
# those are listed, not counted). Logs stay in target/check-memory/.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVER=${SERVER:-.deps/valkey/valkey-server}
CLI=${CLI:-redis-cli}
ROUNDS=${ROUNDS:-150}
OUT=target/check-memory
MODULE_FRAMES='librl\.so|[^a-z_]rl::|_ZN2rl|redis_module::|valkey_module::'
# Known and bounded: the binding crates (redis-module 2.0.8, valkey-module
# 0.1.15) take one detached context at load (DetachedContext::set_context)
# and never free it; it turns "definitely lost" only when the server unloads
# the module at exit. One per load, never per call: listed, not counted.
KNOWN='DetachedContext.*set_context|set_context.*DetachedContext'
rm -rf "$OUT" && mkdir -p "$OUT"

workload() {
  local w=60000
  for i in $(seq 1 "$ROUNDS"); do
    local k=$((i % 25))
    echo "RL.SLIDE slide:$k 5 $w"
    echo "RL.SLIDE slide:$k 5 $w COST 2"
    echo "RL.SLIDE slide:short:$k 3 50"
    echo "RL.BUCKETS buckets:$k 5 $w"
    echo "RL.BUCKETS buckets:$k 5 $w PRECISION 1000 COST 2"
    echo "RL.BUCKETS buckets:short:$k 3 50 PRECISION 10"
    echo "RL.COUNT count:$k $w ok"
    echo "RL.COUNT count:$k $w f$((i % 9)) BY 3"
    echo "RL.TOTALS count:$k $w"
    echo "RL.THROTTLE throttle:$k 3 10 $w"
    echo "RL.THROTTLE throttle:$k 3 10 $w 0"
    echo "CL.THROTTLE cell:$k 3 10 60 2"
    echo "RL.FIXED fixed:$k 5 $w COST 2"
    # Errors and wrong types.
    echo "RL.SLIDE slide:$k 0 $w"
    echo "RL.BUCKETS buckets:$k 5 $w PRECISION 7"
    echo "RL.COUNT count:$k $w bad,field"
    echo "RL.THROTTLE throttle:$k 3 10 $w 99"
    echo "RL.FIXED fixed:$k 5 $w COST 1 COST 1 FOO"
    echo "RL.FIXED slide:$k 5 $w"
    echo "RL.COUNT buckets:$k $w ok"
    echo "RL.THROTTLE fixed:$k 3 10 $w"
    echo "RL.SLIDE"
  done
  echo "MULTI"
  echo "RL.SLIDE tx 5 $w"
  echo "RL.FIXED tx:f 5 $w"
  echo "EXEC"
  echo "EVAL \"return redis.call('RL.BUCKETS', KEYS[1], 5, 60000)\" 1 lua"
}

failed=0
for module in target/release/librl.so target/valkey/release/librl.so; do
  [ -f "$module" ] || { echo "check-memory: $module missing (make build build-valkey)"; exit 2; }
  name=$(echo "$module" | tr '/' '_')
  dir="$OUT/$name" && mkdir -p "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  log="$dir/valgrind.log"
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite --keep-debuginfo=yes \
    --num-callers=50 --log-file="$log" \
    "$SERVER" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --loadmodule "$PWD/$module" >"$dir/server.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    "$CLI" -p "$port" PING >/dev/null 2>&1 && break
    sleep 0.2
  done
  workload | "$CLI" -p "$port" >"$dir/replies.txt" 2>&1
  replies=$(wc -l <"$dir/replies.txt")
  "$CLI" -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  wait "$pid" || true
  # One loss record per block: from "definitely lost" to the blank line.
  awk '/definitely lost in loss record/{rec=1; buf=""} rec{buf=buf $0 "\n"} rec && /^==[0-9]+== *$/{print buf "----"; rec=0}' "$log" >"$dir/definite.txt"
  total=$(grep -c "definitely lost in loss record" "$dir/definite.txt" || true)
  ours=$(awk -v RS='----\n' -v pat="$MODULE_FRAMES" -v known="$KNOWN" '$0 ~ pat && $0 !~ known {n++} END {print n+0}' "$dir/definite.txt")
  known=$(awk -v RS='----\n' -v known="$KNOWN" '$0 ~ known {n++} END {print n+0}' "$dir/definite.txt")
  summary=$(grep -E "definitely lost:|ERROR SUMMARY" "$log" | sed 's/^==[0-9]*== *//' | tr '\n' ' ')
  echo "check-memory: $module on $($SERVER --version | cut -d' ' -f1-3): $replies reply lines; $summary"
  echo "check-memory: loss records definitely lost: $total; the binding's load-time context: $known; other through the module: $ours (details: $dir/definite.txt)"
  if [ "$ours" -ne 0 ]; then
    failed=1
    awk -v RS='----\n' -v pat="$MODULE_FRAMES" -v known="$KNOWN" '$0 ~ pat && $0 !~ known' "$dir/definite.txt" | head -60
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "check-memory: FAILED: the module definitely loses memory"
  exit 1
fi
echo "check-memory: OK: no memory definitely lost by the module"
