#!/usr/bin/env bash
# Instructions per operation, counted by callgrind inside the server: repeatable
# on a noisy machine, unlike timings. Starts SERVER (default Redis 7.0) with
# the module under callgrind, loads the Lua references, then for each row
# zeroes the counters, sends N requests with redis-benchmark and dumps.
#   benches/callgrind.sh [row ...]   (rows: see ROWS below; default all)
# The peer rows (PEERS below) run the scripts of the libraries users have
# now, as those libraries call them: benches/peers/fetch.sh reads them from
# the packages (PyPI, npm) into target/bench-peers/ at bench time. With
# them, a closing table pairs each rl row with its peers (PAIRS) and the
# script exits 1 if an rl row costs more than a peer it is paired with.
# The PHP rows (PHP_ROWS below) are requests, not commands: PHP code of
# the frameworks (Symfony's limiter, Laravel's ThrottleRequestsWithRedis,
# Debian's packages) and of clients/php makes each one, through
# benches/php/calls.php, as many commands as it sends; they print
# instructions and round trips per request, and pair up in PAIRS too.
# Env: SERVER, MODULE, N (default 5000), R (keyspace, default 2000),
# P (pipeline, default 16), N_PHP (requests of a PHP row, default 2000),
# OUT (dump dir, default target/callgrind), TABLE (also write the counts to
# this CSV, with the run's date, commit and settings: make bench writes
# target/bench/instructions.csv for the page), PEERS_CHECK (warn: report a
# pairing over its peer but exit 0), RL_REDIS_CELL (path of redis-cell's
# libredis_cell.so: loaded beside rl, which then leaves CL.THROTTLE to it, for
# the cl_* rows; without it those rows are skipped), STATS_PREFIXES (0 to 32,
# default 0: that many rl.stats-prefixes are set before the rows run, the
# first four the rows' own key prefixes s: t: b: f:, the rest matching no
# key, so each call scans them all). Inspect a row's profile with
#   callgrind_annotate --inclusive=yes target/callgrind/<row>.out
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${SERVER:-/usr/bin/redis-server}
MODULE=${MODULE:-$PWD/target/release/librl.so}
N=${N:-5000}
R=${R:-2000}
P=${P:-16}
OUT=${OUT:-$PWD/target/callgrind}
PORT=${PORT:-$((20000 + RANDOM % 20000))}
mkdir -p "$OUT"
rm -f "$OUT"/*.out*

CELL=()
if [ -n "${RL_REDIS_CELL:-}" ]; then
  CELL=(--loadmodule "$RL_REDIS_CELL")
  RL_ARGS=(CL.THROTTLE off)
else
  RL_ARGS=()
fi
# Only the request path is counted: reading and running the commands
# (readQueryFromClient: parse, execute, propagate) and writing the replies
# (writeToClient). The server's timers (serverCron: active expiry, stats)
# are left out: their share of a row grows with how slowly the server runs
# under valgrind and with every other row's keys, not with the command.
valgrind --tool=callgrind --callgrind-out-file="$OUT/server.out" \
  --collect-atstart=no --toggle-collect=readQueryFromClient --toggle-collect=writeToClient \
  "$SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --loadmodule "$MODULE" "${RL_ARGS[@]}" "${CELL[@]}" --logfile "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null; wait $VG 2>/dev/null' EXIT
cli() { redis-cli -p "$PORT" "$@"; }
for _ in $(seq 200); do cli PING >/dev/null 2>&1 && break; sleep 0.1; done
if [ "${STATS_PREFIXES:-0}" -gt 0 ]; then
  prefixes=(s: t: b: f:)
  for i in $(seq 4 31); do prefixes+=("p$i:"); done
  cli CONFIG SET rl.stats-prefixes "${prefixes[*]:0:$STATS_PREFIXES}" >/dev/null
fi
SLIDE=$(cli SCRIPT LOAD "$(cat benches/lua/slide.lua)")
BUCKETS=$(cli SCRIPT LOAD "$(cat benches/lua/buckets.lua)")
ACQUIRE=$(cli SCRIPT LOAD "$(cat benches/lua/acquire.lua)")
RELEASE=$(cli SCRIPT LOAD "$(cat benches/lua/release.lua)")
# The function edition, for the fn_* rows (the same calls on their own keys).
cli -x FUNCTION LOAD REPLACE <functions/rl.lua >/dev/null

# The GCRA rows (RL.THROTTLE, its refunds, charges and RL.ALL clause, the
# library's, redis-cell's CL.THROTTLE) admit 100 per hour with a burst of
# 10: a key's state then lives about 36 s past each call. At native speed
# the two passes of a row take a fraction of a second and every state
# lives between its key's calls; under valgrind they take seconds, and at
# 100 per minute (a state gone 0.6 s after a call) a quarter to half of
# the measured calls found their key gone, a share that moved from run to
# run with the machine's speed.
declare -A ROWS=(
  [slide]="RL.SLIDE s:__rand_int__ 100 60000"
  [lua_slide]="EVALSHA $SLIDE 1 ls:__rand_int__ 100 60000 1"
  [slide_hot]="RL.SLIDE s:hot 100 60000"
  [lua_slide_hot]="EVALSHA $SLIDE 1 ls:hot 100 60000 1"
  [buckets]="RL.BUCKETS b:__rand_int__ 100 60000"
  [lua_buckets]="EVALSHA $BUCKETS 1 lb:__rand_int__ 100 60000 1000 1"
  [buckets_hot]="RL.BUCKETS b:hot 100 60000"
  [lua_buckets_hot]="EVALSHA $BUCKETS 1 lb:hot 100 60000 1000 1"
  [throttle]="RL.THROTTLE t:__rand_int__ 10 100 3600000"
  [fixed]="RL.FIXED f:__rand_int__ 100 60000"
  # A denial by a block (RL.BLOCK below, before the warm-up): the one
  # value read, nothing counted or written.
  [fixed_blocked]="RL.FIXED fxb:hot 100 60000"
  [throttle_blocked]="RL.THROTTLE thb:hot 10 100 3600000"
  [buckets_blocked]="RL.BUCKETS bb:hot 100 60000"
  [slide_blocked]="RL.SLIDE sb:hot 100 60000"
  [count]="RL.COUNT c:__rand_int__ 60000 ok"
  [peek]="RL.PEEK SLIDE s:__rand_int__ 100 60000"
  [all]="RL.ALL 2 as:__rand_int__ at:__rand_int__ SLIDE 100 60000 THROTTLE 10 100 3600000"
  # Leases of 50 ms on many keys: each key holds a few, most expired, so
  # an acquire also removes some (as in steady use). A release is measured
  # on an id not held (its lookup; the removal is one ZREM more).
  # Refunds of one unit on the keys the rows above filled.
  [refund_slide]="RL.REFUND SLIDE s:__rand_int__ 100 60000"
  [refund_buckets]="RL.REFUND BUCKETS b:__rand_int__ 100 60000"
  [refund_throttle]="RL.REFUND THROTTLE t:__rand_int__ 10 100 3600000"
  [refund_fixed]="RL.REFUND FIXED f:__rand_int__ 100 60000"
  # Charges of 5 units (a settlement after the fact) on the same keys,
  # past the limit once they fill.
  [charge_slide]="RL.CHARGE SLIDE s:__rand_int__ 100 60000 COST 5"
  [charge_buckets]="RL.CHARGE BUCKETS b:__rand_int__ 100 60000 COST 5"
  [charge_throttle]="RL.CHARGE THROTTLE t:__rand_int__ 10 100 3600000 COST 5"
  [charge_fixed]="RL.CHARGE FIXED f:__rand_int__ 100 60000 COST 5"
  [acquire]="RL.ACQUIRE a:__rand_int__ 1000 50"
  [lua_acquire]="EVALSHA $ACQUIRE 1 la:__rand_int__ 1000 50"
  [release]="RL.RELEASE a:__rand_int__ gone-1"
  [lua_release]="EVALSHA $RELEASE 1 la:__rand_int__ gone-1"
  [fn_slide]="FCALL rl_slide 1 fs:__rand_int__ 100 60000"
  [fn_slide_hot]="FCALL rl_slide 1 fs:hot 100 60000"
  # A full key: every call denied (limit 10 of a long window).
  [fn_slide_full]="FCALL rl_slide 1 fs:full 10 600000"
  [fn_buckets]="FCALL rl_buckets 1 fb:__rand_int__ 100 60000"
  [fn_buckets_hot]="FCALL rl_buckets 1 fb:hot 100 60000"
  [fn_throttle]="FCALL rl_throttle 1 ft:__rand_int__ 10 100 3600000"
  [fn_fixed]="FCALL rl_fixed 1 ff:__rand_int__ 100 60000"
  # The blocked rows' calls through the library (rl_block below).
  [fn_fixed_blocked]="FCALL rl_fixed 1 ffb:hot 100 60000"
  [fn_throttle_blocked]="FCALL rl_throttle 1 ftb:hot 10 100 3600000"
  [fn_count]="FCALL rl_count 1 fc:__rand_int__ 60000 ok"
  [fn_peek]="FCALL_RO rl_peek 1 fs:__rand_int__ SLIDE 100 60000"
  [fn_all]="FCALL rl_all 2 fas:__rand_int__ fat:__rand_int__ SLIDE 100 60000 THROTTLE 10 100 3600000"
  [fn_refund_slide]="FCALL rl_refund 1 fs:__rand_int__ SLIDE 100 60000"
  [fn_refund_buckets]="FCALL rl_refund 1 fb:__rand_int__ BUCKETS 100 60000"
  [fn_refund_throttle]="FCALL rl_refund 1 ft:__rand_int__ THROTTLE 10 100 3600000"
  [fn_refund_fixed]="FCALL rl_refund 1 ff:__rand_int__ FIXED 100 60000"
  [fn_charge_slide]="FCALL rl_charge 1 fs:__rand_int__ SLIDE 100 60000 COST 5"
  [fn_charge_buckets]="FCALL rl_charge 1 fb:__rand_int__ BUCKETS 100 60000 COST 5"
  [fn_charge_throttle]="FCALL rl_charge 1 ft:__rand_int__ THROTTLE 10 100 3600000 COST 5"
  [fn_charge_fixed]="FCALL rl_charge 1 ff:__rand_int__ FIXED 100 60000 COST 5"
  [fn_acquire]="FCALL rl_acquire 1 fa:__rand_int__ 1000 50"
  [fn_release]="FCALL rl_release 1 fa:__rand_int__ gone-1"
  # By name only (not in the default list): CL.THROTTLE and a renew of an
  # id not held, through the library.
  [fn_cl_throttle]="FCALL cl_throttle 1 fct:__rand_int__ 10 100 3600"
  [fn_renew]="FCALL rl_renew 1 fa:__rand_int__ gone-1 50"
  # redis-cell's GCRA (needs RL_REDIS_CELL): the throttle row's limit, in
  # redis-cell's syntax (period in seconds), on keys of its own.
  [cl_throttle]="CL.THROTTLE cl:__rand_int__ 10 100 3600"
  # Envoy's rate limit service per descriptor of a request, fixed
  # window (a limit of 100 per minute): envoyproxy/ratelimit pipelines
  # INCRBY and EXPIRE on the window's key; rl-ratelimit sends one RL.ALL
  # over the request's descriptors (the ratelimit_N rows: N descriptors;
  # RL.FIXED for one), the function library one rl_all (rl_fixed). The closing Envoy
  # table adds up N x (INCRBY + EXPIRE) per request against them. Every key
  # is as long as envoyproxy/ratelimit's (rl-ratelimit keeps its names: the
  # server hashes and copies every byte), each row on keys of its own.
  [envoy_incrby]="INCRBY rl_env_user___rand_int___1796126400 1"
  [envoy_expire]="EXPIRE rl_env_user___rand_int___1796126400 60"
  [ratelimit_1]="RL.FIXED rl_rla_user___rand_int___1796126400 100 60000"
  [ratelimit_2]="RL.ALL 2 rl_rla_user___rand_int___1796126400 rl_rlb_user___rand_int___1796126400 FIXED 100 60000 FIXED 100 60000"
  [ratelimit_4]="RL.ALL 4 rl_rla_user___rand_int___1796126400 rl_rlb_user___rand_int___1796126400 rl_rlc_user___rand_int___1796126400 rl_rld_user___rand_int___1796126400 FIXED 100 60000 FIXED 100 60000 FIXED 100 60000 FIXED 100 60000"
  [fn_ratelimit_1]="FCALL rl_fixed 1 rl_fla_user___rand_int___1796126400 100 60000"
  [fn_ratelimit_2]="FCALL rl_all 2 rl_fla_user___rand_int___1796126400 rl_flb_user___rand_int___1796126400 FIXED 100 60000 FIXED 100 60000"
  [fn_ratelimit_4]="FCALL rl_all 4 rl_fla_user___rand_int___1796126400 rl_flb_user___rand_int___1796126400 rl_flc_user___rand_int___1796126400 rl_fld_user___rand_int___1796126400 FIXED 100 60000 FIXED 100 60000 FIXED 100 60000 FIXED 100 60000"
  [ping]="PING"
  [incr]="INCR i:__rand_int__"
  [zadd]="ZADD z:__rand_int__ __rand_int__ __rand_int__"
  [hincrby]="HINCRBY h:__rand_int__ __rand_int__ 1"
  # What clients/node's express-rate-limit store sends per hit
  # (clients/node/lib/express.js): a sliding count, RL.BUCKETS at the
  # largest limit (express-rate-limit never passes its limit to the store).
  [express_store]="RL.BUCKETS rl-erl:__rand_int__ 1000000000000000 60000"
  # What clients/node's RateLimiterRl sends per consume with blockDuration
  # (clients/node/lib/flexible.js): the limiter's command carrying BLOCK,
  # the block in the window's own key. Without blockDuration it sends the
  # slide row's RL.SLIDE with COST 1.
  [rlf_adapter]="RL.SLIDE rl-flx:__rand_int__ 100 60000 COST 1 BLOCK 60000"
  # What clients/go's redis_rate sends per Allow (Limit{Rate: 100, Burst:
  # 11, Period: time.Hour}, the GCRA rows' limit): RL.THROTTLE with
  # max_burst Burst - 1 and the quantity always given.
  [go_rate]="RL.THROTTLE rl:rate:__rand_int__ 10 100 3600000 1"
  # What clients/java's RlRateLimiter sends per request on route `bench`
  # with replenishRate 1, burstCapacity 3600, requestedTokens 36 (Spring's
  # way to allow under one a second: 100 requests an hour, a burst of 100;
  # the peer spring_gateway has the same settings): RL.THROTTLE on
  # request_rate_limiter.{<route>.<id>}.rl with max_burst burstCapacity - 1,
  # replenishRate per 1000 ms and quantity requestedTokens. At 100 a second
  # upstream's state would live 2 s and rl's 10 ms past a call: under
  # valgrind most measured calls would find their key gone, a share that
  # moves with the machine's speed (see the GCRA rows above); here both
  # live past every call of the row and every call is admitted.
  [java_gateway]="RL.THROTTLE request_rate_limiter.{bench.__rand_int__}.rl 3599 1 1000 36"
  # What clients/ruby sends per request, and rack-attack's own in its
  # place, for a throttle of 100 a minute keyed by address: recorded from
  # the code (benches/peers/rack_attack_calls.rb, below) when a row is
  # asked for. rack_throttle: Rack::Attack.rl_throttle's RL.SLIDE;
  # rack_store: rack-attack's throttle on Rl::RackAttack::Store, RL.FIXED;
  # rack_attack_incrby and rack_attack_expire: rack-attack's throttle on
  # its Redis store, which pipelines INCRBY and EXPIRE: one request is
  # both rows, their sum the peer rack_attack (the row name rack_attack
  # asks for both).
  [rack_throttle]=""
  [rack_store]=""
  [rack_attack_incrby]=""
  [rack_attack_expire]=""
)
# Peer scripts (benches/peers/fetch.sh): limits_moving (_hot, _full),
# limits_sliding, limits_fixed: Python limits' moving window, sliding
# window counter and fixed window; rlf_redis: rate-limiter-flexible's
# RateLimiterRedis; upstash_sliding, upstash_token: @upstash/ratelimit's
# slidingWindow and tokenBucket; rlr_express: rate-limit-redis; redis_rate:
# go-redis/redis_rate v10's GCRA script, as its Allow sends it;
# spring_gateway: Spring Cloud Gateway's request_rate_limiter.lua, as its
# RedisRateLimiter sends it.
PEERS=(limits_moving limits_moving_hot limits_moving_full limits_sliding limits_fixed rlf_redis upstash_sliding upstash_token rlr_express redis_rate spring_gateway)
# benches/php/calls.php's rows: Symfony's limiter (its Redis cache pool and
# lock: 8 commands per consume()) and rl's factory for each policy (100 a
# minute, a bucket of 100), Laravel's ThrottleRequestsWithRedis (its
# DurationLimiter script) and rl's throttle middleware (throttle:100,1).
PHP_ROWS=(symfony_fixed php_fixed symfony_sliding php_sliding symfony_token php_token laravel_redis php_laravel)
N_PHP=${N_PHP:-2000}
# rl row, the peer rows it replaces, what is compared.
PAIRS=(
  "fn_slide|limits_moving|rl_slide / limits moving window"
  "fn_slide_hot|limits_moving_hot|rl_slide, hot key / the same"
  "fn_slide_full|limits_moving_full|rl_slide, key full (denied) / the same"
  "fn_buckets|upstash_sliding limits_sliding|rl_buckets / upstash slidingWindow, limits sliding window counter"
  "fn_fixed|limits_fixed rlf_redis|rl_fixed / limits fixed window, rate-limiter-flexible"
  "fn_throttle|upstash_token|rl_throttle / upstash tokenBucket"
  "slide|limits_moving|RL.SLIDE (module) / limits moving window"
  "express_store|rlr_express|express store's RL.BUCKETS / rate-limit-redis"
  "rlf_adapter|rlf_redis|rate-limiter-flexible adapter's RL.SLIDE with BLOCK (blockDuration) / RateLimiterRedis"
  "slide|rlf_redis|rate-limiter-flexible adapter's RL.SLIDE (no blockDuration) / RateLimiterRedis"
  "go_rate|redis_rate|Go redis_rate drop-in's RL.THROTTLE / redis_rate GCRA script"
  "java_gateway|spring_gateway|Spring Cloud Gateway RlRateLimiter's RL.THROTTLE / RedisRateLimiter's script"
  # Shown, not checked (a fourth field): rack-attack's store sends two
  # native commands for a fixed-window counter, the cheapest thing a server
  # does; rl_throttle's one command is a sliding window, which costs more
  # than a counter (what rack-attack has instead of one is nothing), and
  # RL.FIXED checks and replicates more than INCRBY.
  "rack_throttle|limits_moving|rack-attack rl_throttle's RL.SLIDE / a sliding window in Lua (limits moving window)"
  "rack_throttle|rack_attack|rack-attack rl_throttle's RL.SLIDE / rack-attack throttle's INCRBY + EXPIRE|shown"
  "rack_store|rack_attack|rack-attack throttle on Rl::RackAttack::Store, RL.FIXED / on its Redis store, INCRBY + EXPIRE|shown"
  "php_fixed|symfony_fixed|Symfony RlRateLimiterFactory fixed_window's RL.FIXED / Symfony's limiter (cache pool and lock), per request"
  "php_sliding|symfony_sliding|Symfony RlRateLimiterFactory sliding_window's RL.BUCKETS / Symfony's limiter, per request"
  "php_token|symfony_token|Symfony RlRateLimiterFactory token_bucket's RL.THROTTLE / Symfony's limiter, per request"
  "php_laravel|laravel_redis|Laravel throttle on rl's RL.FIXED / ThrottleRequestsWithRedis's script, per request"
)
rows=()
for r in "$@"; do
  if [ "$r" = rack_attack ]; then rows+=(rack_attack_incrby rack_attack_expire); else rows+=("$r"); fi
done
ENVOY_ROWS=(envoy_incrby envoy_expire ratelimit_1 ratelimit_2 ratelimit_4 fn_ratelimit_1 fn_ratelimit_2 fn_ratelimit_4)
[ ${#rows[@]} -eq 0 ] && rows=(ping incr zadd hincrby slide lua_slide slide_hot lua_slide_hot buckets lua_buckets buckets_hot lua_buckets_hot throttle fixed fixed_blocked throttle_blocked buckets_blocked slide_blocked count peek all refund_slide refund_buckets refund_throttle refund_fixed charge_slide charge_buckets charge_throttle charge_fixed acquire lua_acquire release lua_release fn_slide fn_slide_hot fn_slide_full fn_buckets fn_buckets_hot fn_throttle fn_fixed fn_fixed_blocked fn_throttle_blocked fn_count fn_peek fn_all fn_refund_slide fn_refund_buckets fn_refund_throttle fn_refund_fixed fn_charge_slide fn_charge_buckets fn_charge_throttle fn_charge_fixed fn_acquire fn_release express_store rlf_adapter go_rate java_gateway rack_throttle rack_store rack_attack_incrby rack_attack_expire cl_throttle "${ENVOY_ROWS[@]}" "${PEERS[@]}" "${PHP_ROWS[@]}")
if [ -z "${RL_REDIS_CELL:-}" ]; then
  kept=()
  for r in "${rows[@]}"; do
    if [[ $r == cl_* ]]; then
      echo "skipping $r: set RL_REDIS_CELL to redis-cell's libredis_cell.so" >&2
    else
      kept+=("$r")
    fi
  done
  rows=("${kept[@]}")
fi
for r in "${rows[@]}"; do
  if [[ " ${PEERS[*]} " == *" $r "* ]]; then
    benches/peers/fetch.sh
    for p in "${PEERS[@]}"; do
      script=$(cat "target/bench-peers/calls/$p.lua")
      sha=$(cli SCRIPT LOAD "$script")
      if [[ ! $sha =~ ^[0-9a-f]{40}$ && $script == '#!lua'* ]]; then
        # @upstash/ratelimit's scripts open with `#!lua
        # flags=allow-key-locking`, a flag of Upstash's own server that
        # Redis and Valkey refuse; without that line they run as plain
        # EVAL scripts, as they would for a user of these servers.
        echo "$p: the server refused its shebang ($sha); loaded without it" >&2
        sha=$(cli SCRIPT LOAD "${script#*$'\n'}")
      fi
      [[ $sha =~ ^[0-9a-f]{40}$ ]] || { echo "$p: SCRIPT LOAD failed: $sha" >&2; exit 1; }
      # An empty line of .args is an empty argument: '' in the row.
      ROWS[$p]="EVALSHA $sha $(sed "s/^\$/''/" "target/bench-peers/calls/$p.args" | tr '\n' ' ')"
    done
    break
  fi
done
if [[ " ${rows[*]} " == *" rack_"* ]]; then
  calls=target/bench-peers/calls
  mkdir -p "$calls"
  ruby benches/peers/rack_attack_calls.rb "$calls"
  ROWS[rack_throttle]=$(cat "$calls/rack_throttle.cmd")
  ROWS[rack_store]=$(cat "$calls/rack_store.cmd")
  ROWS[rack_attack_incrby]=$(sed -n 1p "$calls/rack_attack.cmds")
  ROWS[rack_attack_expire]=$(sed -n 2p "$calls/rack_attack.cmds")
fi
# The blocked rows' keys, blocked for a day.
cli RL.BLOCK FIXED fxb:hot 86400000 >/dev/null
cli RL.BLOCK THROTTLE thb:hot 86400000 >/dev/null
cli RL.BLOCK BUCKETS bb:hot 86400000 >/dev/null
cli FCALL rl_block 1 ffb:hot FIXED 86400000 >/dev/null
cli FCALL rl_block 1 ftb:hot THROTTLE 86400000 >/dev/null
cli RL.BLOCK SLIDE sb:hot 86400000 >/dev/null
# A row's words into the array `words`; the word '' is an empty argument
# (Spring's RedisRateLimiter sends one), which word splitting would drop.
row_words() {
  local w all
  read -r -a all <<<"$1"
  words=()
  for w in "${all[@]}"; do
    [ "$w" != "''" ] || w=
    words+=("$w")
  done
}
# A row whose command fails would measure its error path: one call of each
# first, on a key of its own (the number 0 for the placeholder: a ZADD
# takes it as a score too), must not answer an error.
is_php_row() { [[ " ${PHP_ROWS[*]} " == *" $1 "* ]]; }
for r in "${rows[@]}"; do
  is_php_row "$r" && continue  # calls.php fails loudly on an error reply itself
  row_words "${ROWS[$r]//__rand_int__/0}"
  reply=$(cli "${words[@]}" 2>&1 | head -1)
  case $reply in
    ERR* | WRONGTYPE* | NOSCRIPT* | "Could not connect"*) echo "row $r fails: $reply" >&2; exit 1 ;;
  esac
done
printf '%-20s %12s\n' row instr/op
declare -A COST=()
if [ -n "${TABLE:-}" ]; then
  mkdir -p "$(dirname "$TABLE")"
  dirty=$(git status --porcelain --untracked-files=no -- src functions benches Cargo.toml Cargo.lock)
  {
    echo "# date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "# commit=$(git rev-parse --short=7 HEAD)${dirty:++changes}"
    echo "# server=$("$SERVER" --version | sed -E 's/.*v=([0-9.]+).*/\1/;s/^/'"$(basename "$SERVER")"' /')"
    echo "# command=benches/callgrind.sh${*:+ $*}"
    echo "# N=$N"
    echo "# R=$R"
    echo "# P=$P"
    echo "# redis-cell=${RL_REDIS_CELL:-not loaded}"
    echo "row,instr_per_op"
  } >"$TABLE.part"
fi
# redis-benchmark seeds its choice of keys with time(NULL) ^ getpid(): a
# pass whose seed is its warm-up's draws the same keys in the same order,
# finds every key it calls already made (no key is created) and costs more
# (about 600 instructions a call on the slide row). Each pass checks the
# seeds it may get (this second's and the next) against those the pass
# before may have had, and starts from another process when they meet.
seeds=
bench_pass() {
  local rc
  while :; do
    rc=0
    (
      t=$(date +%s)
      mine="$((t ^ BASHPID)) $(((t + 1) ^ BASHPID))"
      for a in $mine; do
        for b in $seeds; do [ "$a" != "$b" ] || exit 99; done
      done
      echo "$mine" >"$OUT/.seeds"
      exec redis-benchmark "$@" >/dev/null
    ) || rc=$?
    [ $rc -eq 99 ] || break
  done
  seeds=$(cat "$OUT/.seeds")
  return $rc
}
declare -A TRIPS=()
for r in "${rows[@]}"; do
  if is_php_row "$r"; then
    # The same passes, of N_PHP requests, by PHP; then the round trips of
    # 50 more, counted on MONITOR.
    php benches/php/calls.php "$r" "$PORT" "$N_PHP" "$R"
    callgrind_control -z "$VG" >/dev/null 2>&1
    php benches/php/calls.php "$r" "$PORT" "$N_PHP" "$R"
    callgrind_control -d "$r" "$VG" >/dev/null 2>&1
    f=$(ls -t "$OUT"/server.out.* | head -1)
    mv "$f" "$OUT/$r.out"
    total=$(grep -E '^(summary|totals):' "$OUT/$r.out" | head -1 | awk '{print $2}')
    COST[$r]=$((total / N_PHP))
    TRIPS[$r]=$(php benches/php/calls.php "$r" "$PORT" 0 "$R" 50 | sed -n 's/^round_trips=//p')
    printf '%-20s %12d  (per request, %s round trips)\n' "$r" "${COST[$r]}" "${TRIPS[$r]}"
    [ -z "${TABLE:-}" ] || echo "$r,${COST[$r]}" >>"$TABLE.part"
    continue
  fi
  # Each row's warm-up just before it is measured (fills its keyspace, so
  # the row measures steady state): the keys are then as old at every
  # measured call whatever ran before, and no key of the row expires or
  # needs its expiry moved between the two passes (both take seconds,
  # against a quarter of the 60 s windows).
  row_words "${ROWS[$r]}"
  bench_pass -p "$PORT" -c 10 -P "$P" -n "$N" -r "$R" "${words[@]}"
  expire_row=${r%_incrby}_expire
  if [[ $r == *_incrby && -n ${ROWS[$expire_row]:-} ]]; then
    # envoyproxy/ratelimit and rack-attack send EXPIRE after every INCRBY,
    # so the counter an INCRBY finds has a TTL (which the server looks
    # up): every key the warm-up made gets one before the row is
    # measured, by the row's own EXPIRE (a key made by the measured pass
    # is a first request, without a TTL yet, as in use).
    read -r -a ex <<<"${ROWS[$expire_row]}"
    cli --scan --pattern "${ex[1]//__rand_int__/*}" | while read -r k; do
      echo "${ex[0]} $k ${ex[*]:2}"
    done | cli >/dev/null
  fi
  callgrind_control -z "$VG" >/dev/null 2>&1
  bench_pass -p "$PORT" -c 10 -P "$P" -n "$N" -r "$R" "${words[@]}"
  callgrind_control -d "$r" "$VG" >/dev/null 2>&1
  f=$(ls -t "$OUT"/server.out.* | head -1)
  mv "$f" "$OUT/$r.out"
  total=$(grep -E '^(summary|totals):' "$OUT/$r.out" | head -1 | awk '{print $2}')
  COST[$r]=$((total / N))
  printf '%-20s %12d\n' "$r" "${COST[$r]}"
  [ -z "${TABLE:-}" ] || echo "$r,${COST[$r]}" >>"$TABLE.part"
done
# rack-attack's one request is its two commands.
if [ -n "${COST[rack_attack_incrby]:-}" ] && [ -n "${COST[rack_attack_expire]:-}" ]; then
  COST[rack_attack]=$((COST[rack_attack_incrby] + COST[rack_attack_expire]))
  printf '%-20s %12d  (rack_attack_incrby + rack_attack_expire)\n' rack_attack "${COST[rack_attack]}"
  [ -z "${TABLE:-}" ] || echo "rack_attack,${COST[rack_attack]}" >>"$TABLE.part"
fi
# Only a complete run replaces the table.
[ -z "${TABLE:-}" ] || mv "$TABLE.part" "$TABLE"

# Each rl row against the scripts it replaces, both measured in this run.
over=()
printed=
for pair in "${PAIRS[@]}"; do
  IFS='|' read -r mine peers what mode <<<"$pair"
  [ -n "${COST[$mine]:-}" ] || continue
  for p in $peers; do
    [ -n "${COST[$p]:-}" ] || continue
    if [ -z "$printed" ]; then
      printf '\n%-16s %10s  %-20s %10s %8s  %s\n' rl instr/op peer instr/op rl/peer compared
      printed=1
    fi
    ratio=$(awk -v a="${COST[$mine]}" -v b="${COST[$p]}" 'BEGIN { printf "%.2f", a / b }')
    printf '%-16s %10d  %-20s %10d %7sx  %s\n' "$mine" "${COST[$mine]}" "$p" "${COST[$p]}" "$ratio" \
      "$what${mode:+ (shown, not checked)}"
    if [ -n "${TRIPS[$mine]:-}" ]; then
      printf '%-16s %10s  %-20s %10s %8s  round trips per request\n' "" "${TRIPS[$mine]}" "" "${TRIPS[$p]}" ""
    fi
    [ "${COST[$mine]}" -le "${COST[$p]}" ] || [ "$mode" = shown ] || over+=("$mine ${ratio}x $p")
  done
done
# Envoy: a request of N descriptors, envoyproxy/ratelimit's N x (INCRBY +
# EXPIRE) against rl-ratelimit's one RL.ALL (and rl_all), this run's rows.
goal=()
if [ -n "${COST[envoy_incrby]:-}" ] && [ -n "${COST[envoy_expire]:-}" ]; then
  printf '\n%-12s %22s %18s %8s %18s %8s\n' descriptors envoyproxy/ratelimit "rl (module)" ratio "rl (library)" ratio
  for n in 1 2 4; do
    envoy=$((n * (COST[envoy_incrby] + COST[envoy_expire])))
    line=$(printf '%-12s %22d' "$n" "$envoy")
    for r in "ratelimit_$n" "fn_ratelimit_$n"; do
      if [ -n "${COST[$r]:-}" ]; then
        ratio=$(awk -v a="${COST[$r]}" -v b="$envoy" 'BEGIN { printf "%.2f", a / b }')
        line+=$(printf ' %18d %7sx' "${COST[$r]}" "$ratio")
        # The module's rows must cost less than envoyproxy/ratelimit (a
        # failure, as for the peers above); the function library's cannot
        # (an FCALL costs more than two plain commands before it does
        # anything) and is shown only (docs/envoy.md#cost).
        if [ "${COST[$r]}" -gt "$envoy" ]; then
          if [[ $r == fn_* ]]; then
            goal+=("$r ${ratio}x envoyproxy/ratelimit ($n descriptors)")
          else
            over+=("$r ${ratio}x envoyproxy/ratelimit ($n descriptors)")
          fi
        fi
      else
        line+=$(printf ' %18s %8s' - -)
      fi
    done
    echo "$line"
  done
  [ ${#goal[@]} -eq 0 ] || printf 'above envoyproxy/ratelimit (shown, not checked): %s\n' "${goal[@]}"
fi
if [ ${#over[@]} -gt 0 ]; then
  echo >&2
  echo "FAIL: ${#over[@]} rl row(s) cost more per call than the script or commands they replace:" >&2
  printf '  %s\n' "${over[@]}" >&2
  [ "${PEERS_CHECK:-}" = warn ] && exit 0
  exit 1
fi
[ -z "$printed" ] || echo "every checked rl row is at or under its peers"
