#!/usr/bin/env bash
# `make check-memory`: a short workload on every rl command with the server
# under valgrind memcheck, for both module builds. Valkey 9.1 from `make deps`
# uses libc malloc, so memcheck sees every allocation the module makes
# through the server. The workload runs every command; each reply is
# checked: an error where a line does not start with `!` (an error
# expected), no error where it does, and as many replies as lines sent, or
# the check fails (so does a server that never answered PING or died during
# the workload). Every record valgrind counts in its ERROR SUMMARY is
# sorted and explained (analyse below); fails on a memory error or a
# definite loss in rl's frames. The counts are mostly the server's: "possibly
# lost" blocks, its sds strings held at exit through interior pointers (not
# leaks), and the binding's one load-time context. Logs stay in
# target/check-memory/.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVER=${SERVER:-.deps/valkey/valkey-server}
ROUNDS=${ROUNDS:-150}
OUT=target/check-memory
# The venv `make deps` makes, else any python3.
PY=.deps/venv/bin/python
[ -x "$PY" ] || PY=python3
MODULE_FRAMES='librl\.so|[^a-z_]rl::|_ZN2rl|redis_module::|valkey_module::'
# Known and bounded: the binding crates (redis-module 2.0.8, valkey-module
# 0.1.15) take one detached context at load (DetachedContext::set_context)
# and never free it; it turns "definitely lost" only when the server unloads
# the module at exit. One per load, never per call: listed, not counted.
KNOWN='DetachedContext.*set_context|set_context.*DetachedContext'
rm -rf "$OUT" && mkdir -p "$OUT"

# redis_cli PORT WORDS...: one command, its reply on stdout (empty if the
# server did not answer).
redis_cli() {
  local port=$1 && shift
  "$PY" - "$port" "$@" <<'PY' 2>/dev/null || true
import socket, sys
port, words = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(f"*{len(words)}\r\n".encode() + b"".join(f"${len(w)}\r\n{w}\r\n".encode() for w in words))
print(s.makefile("rb").readline().decode().strip().lstrip("+"))
PY
}

# One command a line; `!` first: the reply must be an error.
workload() {
  local w=60000
  for i in $(seq 1 "$ROUNDS"); do
    local k=$((i % 25)) j="job$((i % 4))"
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
    echo "RL.PEEK SLIDE slide:$k 5 $w"
    echo "RL.PEEK BUCKETS buckets:$k 5 $w"
    echo "RL.PEEK ACQUIRE lease:$k 3 $w"
    echo "RL.ALL 2 all:a:$k all:b:$k SLIDE 5 $w BUCKETS 5 $w PRECISION 1000"
    echo "RL.ALL 2 all:c:$k all:d:$k THROTTLE 3 10 $w FIXED 2 50"
    echo "RL.REFUND SLIDE slide:$k 5 $w"
    echo "RL.REFUND BUCKETS buckets:$k 5 $w PRECISION 1000 COST 2"
    echo "RL.REFUND THROTTLE throttle:$k 3 10 $w"
    echo "RL.REFUND FIXED fixed:$k 5 $w"
    echo "RL.ACQUIRE lease:$k 3 $w"
    echo "RL.ACQUIRE lease:short:$k 2 50"
    echo "RL.ACQUIRE lease:$k 3 $w ID $j"
    echo "RL.RENEW lease:$k $j $w"
    echo "RL.RELEASE lease:$k $j"
    echo "RL.RELEASE lease:$k no-such-lease"
    # Errors and wrong types.
    echo "!RL.SLIDE slide:$k 0 $w"
    echo "!RL.BUCKETS buckets:$k 5 $w PRECISION 7"
    echo "!RL.COUNT count:$k $w bad,field"
    echo "!RL.THROTTLE throttle:$k 3 10 $w 99"
    echo "!RL.FIXED fixed:$k 5 $w COST 1 COST 1 FOO"
    echo "!RL.FIXED slide:$k 5 $w"
    echo "!RL.COUNT buckets:$k $w ok"
    echo "!RL.THROTTLE fixed:$k 3 10 $w"
    echo "!RL.SLIDE"
    echo "!RL.PEEK FIXED slide:$k 5 $w"
    echo "!RL.ALL 2 all:a:$k all:a:$k SLIDE 5 $w SLIDE 5 $w"
    echo "!RL.REFUND SLIDE fixed:$k 5 $w"
    echo "!RL.ACQUIRE slide:$k 3 $w"
    echo "!RL.RENEW lease:$k $j 0"
    echo "!RL.RELEASE lease:$k 12345"
  done
  echo "MULTI"
  echo "RL.SLIDE tx 5 $w"
  echo "RL.FIXED tx:f 5 $w"
  echo "EXEC"
  echo "EVAL \"return redis.call('RL.BUCKETS', KEYS[1], 5, 60000)\" 1 lua"
}

# run_workload PORT FILE REPLIES: sends every line of FILE pipelined (as
# RESP, words split as a shell would) and reads one reply per line; writes
# them to REPLIES. Fails if a reply is missing, an error where none was
# expected, or no error where one was.
run_workload() {
  "$PY" - "$@" <<'PY'
import shlex, socket, sys
port, path, out = sys.argv[1:]
lines = [l for l in open(path).read().splitlines() if l.strip()]
def resp(words):
    b = [f"*{len(words)}\r\n".encode()]
    for w in words:
        w = w.encode()
        b.append(f"${len(w)}\r\n".encode() + w + b"\r\n")
    return b"".join(b)
want_error = [l.startswith("!") for l in lines]
payload = b"".join(resp(shlex.split(l.lstrip("!"))) for l in lines)
s = socket.create_connection(("127.0.0.1", int(port)), timeout=600)
s.sendall(payload)
f = s.makefile("rb")
def read():
    line = f.readline()
    if not line:
        raise EOFError
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b":", b"-"):
        return (kind == b"-", rest.decode(errors="replace"))
    if kind == b"$":
        n = int(rest)
        return (False, None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace"))
    if kind == b"*":
        n = int(rest)
        return (False, None if n < 0 else [read()[1] for _ in range(n)])
    raise ValueError(f"unexpected reply {line!r}")
replies, bad = [], []
try:
    for i, line in enumerate(lines):
        is_error, value = read()
        replies.append(("-" if is_error else "") + repr(value))
        if is_error != want_error[i]:
            bad.append(f"{line} -> {'' if is_error else 'no error: '}{value}")
except (EOFError, OSError) as e:
    pass
with open(out, "w") as o:
    o.write("\n".join(replies) + "\n")
print(f"check-memory:   {len(lines)} commands sent, {len(replies)} replies, "
      f"{sum(want_error)} errors expected, {len(bad)} replies not as expected")
for b in bad[:5]:
    print(f"check-memory:   not as expected: {b}")
if len(replies) < len(lines):
    print(f"check-memory:   FAILED: {len(lines) - len(replies)} replies never came (the server died?)")
sys.exit(1 if bad or len(replies) < len(lines) else 0)
PY
}

# analyse LOG DIR TITLE: prints what valgrind's ERROR SUMMARY counts, record
# by record, and returns 1 if one concerns rl:
#   - a memory error (invalid read or write, uninitialised value, bad free)
#     with rl's frames in any of its stacks: fails;
#   - "definitely lost" with rl's frames: fails, but for the binding's
#     load-time context (KNOWN above);
#   - "possibly lost": blocks the server still holds at exit through a
#     pointer into them (sds strings: key values, client and config
#     strings), counted and explained, not leaks; fails only for a block
#     the module's own allocator (RedisModule_Alloc and friends) made.
# The records go to DIR/errors.txt, DIR/definite.txt and DIR/possible.txt.
analyse() {
  "$PY" - "$@" "$MODULE_FRAMES" "$KNOWN" <<'PY'
import re, sys
log, out, title, module_frames, known = sys.argv[1:]
text = open(log, errors="replace").read()
summary = re.search(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts", text)
paragraphs, cur = [], []
for line in text.splitlines():
    body = re.sub(r"^==\d+== ?", "", line)
    if body.strip():
        cur.append(body)
    elif cur:
        paragraphs.append(cur)
        cur = []
if cur:
    paragraphs.append(cur)
ours = lambda p: re.search(module_frames, "\n".join(p)) is not None
errors, definite, possible = [], [], []
for p in paragraphs:
    if "definitely lost in loss record" in p[0]:
        definite.append(p)
    elif "possibly lost in loss record" in p[0]:
        possible.append(p)
    elif any(re.match(r"\s+at 0x", l) for l in p[1:2]):
        errors.append(p)
for name, recs in (("errors", errors), ("definite", definite), ("possible", possible)):
    with open(f"{out}/{name}.txt", "w") as f:
        f.write("".join("\n".join(p) + "\n----\n" for p in recs))
known_re = re.compile(known)
is_known = lambda p: known_re.search("\n".join(p)) is not None
errors_ours = [p for p in errors if ours(p)]
definite_known = [p for p in definite if is_known(p)]
definite_ours = [p for p in definite if ours(p) and not is_known(p)]
# Allocated by the module's own allocator: that would be rl's block.
module_alloc = re.compile(r"[VR]M_(Alloc|Calloc|Realloc|TryAlloc|TryCalloc|TryRealloc)\b|__rust_alloc|__rust_realloc|ServerOrSystem")
possible_ours = [p for p in possible if ours(p)]
possible_rl_alloc = [p for p in possible_ours if module_alloc.search("\n".join(p))]
# Which server function made each possibly lost block rl's calls led to.
def allocator(p):
    for l in p[1:]:
        m = re.match(r"\s+(?:at|by) 0x[0-9A-F]+: (\S+)", l)
        if m and not re.match(r"(malloc|calloc|realloc|z[a-z]*alloc[a-z_]*|valkey_[a-z]*alloc|_?sds[A-Za-z]*|\?\?\?)$", m.group(1)):
            return m.group(1)
    return "?"
by = {}
for p in possible_ours:
    by[allocator(p)] = by.get(allocator(p), 0) + 1
n_records = len(errors) + len(definite) + len(possible)
print(f"check-memory: {title}")
if summary:
    print(f"check-memory:   valgrind's ERROR SUMMARY, {summary.group(1)} errors from {summary.group(2)} contexts, is "
          f"{len(errors)} memory errors + {len(definite)} definitely lost + {len(possible)} possibly lost"
          + ("" if int(summary.group(2)) == n_records else f" (read {n_records} records: see {log})"))
else:
    print(f"check-memory:   no ERROR SUMMARY in {log}: valgrind did not finish")
print(f"check-memory:   memory errors (invalid access, uninitialised value, bad free): {len(errors)}, in rl's frames: {len(errors_ours)}"
      + (f"; the server's own: {len(errors) - len(errors_ours)}" if len(errors) > len(errors_ours) else "")
      + f" ({out}/errors.txt)")
print(f"check-memory:   definitely lost: {len(definite)}: the binding's load-time context (once per load, never per call): {len(definite_known)}; "
      f"other in rl's frames: {len(definite_ours)}; the server's own: {len(definite) - len(definite_known) - len(definite_ours)} ({out}/definite.txt)")
print(f"check-memory:   possibly lost: {len(possible)}, not leaks: blocks the server holds at exit through a pointer into them (its sds strings); "
      f"{len(possible_ours)} made during rl's calls, by the server for its own keys and replies"
      + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1])) + ")" if by else "")
      + f"; by rl's allocator: {len(possible_rl_alloc)} ({out}/possible.txt)")
bad = errors_ours + definite_ours + possible_rl_alloc
for p in bad[:3]:
    print("\n".join(p[:40]))
    print("----")
if not summary:
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
}

failed=0
for module in target/release/librl.so target/valkey/release/librl.so; do
  [ -f "$module" ] || { echo "check-memory: $module missing (make build build-valkey)"; exit 2; }
  name=$(echo "$module" | tr '/' '_')
  dir="$OUT/$name" && mkdir -p "$dir"
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  log="$dir/valgrind.log"
  valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,possible --keep-debuginfo=yes \
    --num-callers=50 --log-file="$log" \
    "$SERVER" --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --loadmodule "$PWD/$module" >"$dir/server.out" 2>&1 &
  pid=$!
  # Ready only once PING gets PONG: a server that died at load still leaves
  # an ERROR SUMMARY, and redis-cli exits 0 on "Connection refused".
  up=0
  for _ in $(seq 1 300); do
    if [ "$(redis_cli "$port" PING)" = PONG ]; then up=1 && break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  workload >"$dir/workload.txt"
  sent=$(wc -l <"$dir/workload.txt")
  ran=1
  if [ "$up" -ne 1 ]; then
    echo "check-memory: $module: the server never answered PING (see $dir/server.out, $log)"
    ran=0
  elif ! run_workload "$port" "$dir/workload.txt" "$dir/replies.txt"; then
    ran=0
  elif [ "$(redis_cli "$port" PING)" != PONG ]; then
    echo "check-memory: $module: the server stopped answering after the workload"
    ran=0
  fi
  redis_cli "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  wait "$pid" || true
  if [ "$ran" -ne 1 ]; then
    failed=1
    continue
  fi
  # Every record valgrind counts in its ERROR SUMMARY, sorted: memory errors
  # (invalid access, uninitialised values, bad frees), definite losses,
  # possible losses. Fails on what concerns rl (see analyse).
  analyse "$log" "$dir" "$module on $($SERVER --version | cut -d' ' -f1-3): $sent commands, each reply as expected" || failed=1
done
if [ "$failed" -ne 0 ]; then
  echo "check-memory: FAILED: the workload did not run as expected, or valgrind reports a memory error or a definite loss in rl's frames (above)"
  exit 1
fi
echo "check-memory: OK: no memory error and no definite loss in rl's frames"
