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
# its call), spring_gateway (Spring Cloud Gateway's RedisRateLimiter: its
# request_rate_limiter.lua, from the spring-cloud-gateway-server-webflux jar
# that clients/java's Spring Cloud release brings, fetched from Maven Central
# by mvn into .deps/m2, the repository clients/java's tests use).
#   benches/peers/fetch.sh        (PYTHON: a python >= 3.10 with pip; mvn, unzip, javap)
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMITS=5.8.0
RLF=11.4.0
UPSTASH=2.2.0
RLR=4.3.1
# clients/java's Spring Cloud release train: the gateway it builds against by
# default (the first <spring-cloud.version>; its spring-boot-3 profile names
# the previous one).
SPRING_CLOUD=$(awk -F'[<>]' '/<spring-cloud.version>/ { print $3; exit }' clients/java/pom.xml)
[ -n "$SPRING_CLOUD" ] || { echo "fetch.sh: no <spring-cloud.version> in clients/java/pom.xml" >&2; exit 1; }
DIR=$PWD/target/bench-peers
M2=$PWD/.deps/m2
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
if [ "$(cat "$DIR/java/.pinned" 2>/dev/null)" != "$SPRING_CLOUD" ]; then
  rm -rf "$DIR/java"
  mkdir -p "$DIR/java"
  # A throw-away project whose one dependency is the gateway's server jar at
  # the version spring-cloud-dependencies $SPRING_CLOUD manages, without its
  # own dependencies (only the jar is read).
  cat >"$DIR/java/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>bench</groupId>
  <artifactId>peers</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.springframework.cloud</groupId>
        <artifactId>spring-cloud-dependencies</artifactId>
        <version>$SPRING_CLOUD</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>org.springframework.cloud</groupId>
      <artifactId>spring-cloud-gateway-server-webflux</artifactId>
      <exclusions>
        <exclusion>
          <groupId>*</groupId>
          <artifactId>*</artifactId>
        </exclusion>
      </exclusions>
    </dependency>
  </dependencies>
</project>
EOF
  mvn -B -q -ntp -f "$DIR/java/pom.xml" -Dmaven.repo.local="$M2" \
    dependency:copy-dependencies -DoutputDirectory="$DIR/java/jars"
  echo "$SPRING_CLOUD" >"$DIR/java/.pinned"
fi

rm -f "$DIR"/calls/*
PYTHONPATH="$DIR/py" "$PYTHON" benches/peers/limits_calls.py "$DIR/calls"
node benches/peers/node_calls.js "$DIR/node/node_modules" "$DIR/calls"
(cd clients/go && GOMODCACHE="$PWD/../../.deps/go/mod" GOCACHE="$PWD/../../.deps/go/cache" \
  GOFLAGS=-buildvcs=false go run ./internal/benchcalls "$DIR/calls")

# Spring Cloud Gateway's RedisRateLimiter, one request on route `bench` for
# the id __rand_int__ (what the route's KeyResolver returned): its script,
# as the jar holds it, and the call its isAllowed makes, read from its
# bytecode (no sources jar is on Maven Central): KEYS
# request_rate_limiter.{<routeId>.<id>}.tokens and .timestamp; ARGV
# replenishRate, burstCapacity, "" (the script then reads the server's
# TIME; older releases sent the client's seconds here) and requestedTokens.
# The settings are benches/callgrind.sh's java_gateway row's (replenishRate
# 1, burstCapacity 3600, requestedTokens 36: 100 requests an hour, a burst
# of 100). The checks below fail the fetch, rather than benchmark a call
# upstream no longer makes, when the class builds its keys or ARGV otherwise.
jar=$(ls "$DIR"/java/jars/spring-cloud-gateway-server-webflux-*.jar)
unzip -p "$jar" META-INF/scripts/request_rate_limiter.lua >"$DIR/calls/spring_gateway.lua"
class=org/springframework/cloud/gateway/filter/ratelimit/RedisRateLimiter
rm -rf "$DIR/java/classes"
unzip -q "$jar" "$class.class" -d "$DIR/java/classes"
consts=$(javap -v -p "$DIR/java/classes/$class.class")
# isAllowed's ARGV: a String[4] whose element 2 is the constant "".
argv=$(javap -c -p "$DIR/java/classes/$class.class" |
  sed -n '/ isAllowed(java.lang.String, java.lang.String);/,/^$/p' | grep -A1 'iconst_2$' || true)
for want in 'request_rate_limiter.{\u0001.\u0001}.' '\u0001tokens' '\u0001timestamp' \
  'getKeys:(Ljava/lang/String;Ljava/lang/String;)Ljava/util/List;'; do
  grep -qF -- "$want" <<<"$consts" || {
    echo "fetch.sh: $(basename "$jar")'s RedisRateLimiter has no $want: read its isAllowed again" >&2
    exit 1
  }
done
grep -qE 'ldc +#[0-9]+ +// String$' <<<"$argv" || {
  echo "fetch.sh: $(basename "$jar")'s RedisRateLimiter no longer sends \"\" as ARGV[3]: read its isAllowed again" >&2
  exit 1
}
printf '%s\n' 2 'request_rate_limiter.{bench.__rand_int__}.tokens' \
  'request_rate_limiter.{bench.__rand_int__}.timestamp' 1 3600 '' 36 >"$DIR/calls/spring_gateway.args"
