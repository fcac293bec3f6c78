#!/usr/bin/env bash
# `make load-functions`: loads the function edition (functions/rl.lua) into
# the server at HOST:PORT with FUNCTION LOAD REPLACE, so it also upgrades
# a library loaded before. AUTH is the password (AUTH_USER the ACL user, if
# not `default`); CLI_ARGS goes to redis-cli as is (e.g. "--tls --cacert
# ca.pem" for a managed service). Checks the library answers afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-6379}
AUTH=${AUTH:-}
AUTH_USER=${AUTH_USER:-}
CLI_ARGS=${CLI_ARGS:-}

command -v redis-cli >/dev/null || {
    echo "rl: redis-cli not found (Debian: apt-get install redis-tools, or make deps)" >&2
    exit 1
}
cli=(redis-cli -h "$HOST" -p "$PORT")
[ -n "$AUTH_USER" ] && cli+=(--user "$AUTH_USER")
# shellcheck disable=SC2206 # CLI_ARGS is a list of redis-cli options
cli+=($CLI_ARGS)
# The password through the environment, not the command line (ps shows that).
[ -n "$AUTH" ] && export REDISCLI_AUTH="$AUTH"

# A short command first: unauthenticated, the server refuses the library's
# 159 KB before reading it ("Protocol error: unauthenticated bulk length")
# and closes the connection, which says nothing of a password.
ping=$("${cli[@]}" PING 2>&1) || true
if [[ $ping == *NOAUTH* || $ping == *WRONGPASS* || $ping == *"AUTH failed"* ]]; then
    if [ -n "$AUTH" ]; then
        echo "rl: $HOST:$PORT refused the password given in AUTH${AUTH_USER:+ for user $AUTH_USER}: $ping" >&2
    else
        echo "rl: $HOST:$PORT needs authentication: give the password with AUTH=..., and the ACL user with AUTH_USER=... if it is not 'default' (make load-functions HOST=$HOST PORT=$PORT AUTH=secret [AUTH_USER=name])" >&2
    fi
    exit 1
fi
out=$("${cli[@]}" -x FUNCTION LOAD REPLACE <functions/rl.lua 2>&1) || true
if [ "$out" != "rl" ]; then
    echo "rl: FUNCTION LOAD on $HOST:$PORT failed: $out" >&2
    exit 1
fi
version=$("${cli[@]}" FCALL_RO rl_version 0 2>&1)
echo "rl: function library $version loaded on $HOST:$PORT; try: redis-cli -h $HOST -p $PORT FCALL rl_slide 1 user:42 100 60000"
