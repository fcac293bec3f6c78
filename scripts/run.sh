#!/usr/bin/env bash
# `make run`: a server with the module, on PORT; with FUNCTIONS=1 a server
# without it and with the function edition (functions/rl.lua) loaded. Left unset, PORT is 6379 or,
# when 6379 is taken, the next free port, said so: on a systemd host Debian's
# redis-server package runs its own Redis, without rl, on 6379, and a bare
# redis-cli reaches that one. Set (make run PORT=6380) and taken: stop.
# Either way the hint names the port the module is on.
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${SERVER:-redis-server}
MODULE=${MODULE:-target/release/librl.so}
MODULE_ARGS=${MODULE_ARGS:-}
PORT=${PORT:-}
FUNCTIONS=${FUNCTIONS:-}
FIRST=6379
LAST=6479

# Free if the server could bind it: redis.conf.example binds 127.0.0.1, and
# redis-cli -p N connects there.
py=.deps/venv/bin/python
[ -x "$py" ] || py=python3
port_free() {
    "$py" - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
PY
}

if [ -n "$PORT" ]; then
    if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1 ] || [ "$PORT" -gt 65535 ]; then
        echo "rl: PORT=$PORT is not a port number; e.g. make run PORT=6380" >&2
        exit 1
    fi
    if ! port_free "$PORT"; then
        echo "rl: port $PORT (PORT=$PORT) is taken by another server. Choose a free one, e.g. make run PORT=$((PORT + 1)), or leave PORT unset to take the next free port from $FIRST on." >&2
        exit 1
    fi
    port=$PORT
else
    port=$FIRST
    while ! port_free "$port"; do
        port=$((port + 1))
        if [ "$port" -gt "$LAST" ]; then
            echo "rl: ports $FIRST to $LAST are all taken; choose one with make run PORT=N" >&2
            exit 1
        fi
    done
    if [ "$port" -ne "$FIRST" ]; then
        echo "rl: port $FIRST is taken by another server (on Debian maybe its own redis-server service, without rl): using port $port instead. A bare redis-cli would reach the other one, so give it -p $port. To choose the port: make run PORT=N"
    fi
fi

functions=
[ -n "$FUNCTIONS" ] && [ "$FUNCTIONS" != 0 ] && functions=1

# Starts the server on $port in the background (server=its pid) and waits
# until it answers as itself (its INFO names its pid: another server that
# took the port in between would answer PING too). Fails when it exited.
start_server() {
    if [ -n "$functions" ]; then
        echo "rl: starting $SERVER on port $port without the module, with the function library functions/rl.lua; Ctrl-C stops it. In another terminal, try:"
        echo "  redis-cli -p $port FCALL rl_slide 1 user:42 100 60000"
        "$SERVER" redis.conf.example --port "$port" &
    else
        echo "rl: starting $SERVER on port $port with $MODULE${MODULE_ARGS:+ $MODULE_ARGS}; Ctrl-C stops it. In another terminal, try:"
        echo "  redis-cli -p $port RL.SLIDE user:42 100 60000"
        # shellcheck disable=SC2086 # MODULE_ARGS is a list of load arguments
        "$SERVER" redis.conf.example --port "$port" --loadmodule "$PWD/$MODULE" $MODULE_ARGS &
    fi
    server=$!
    for _ in $(seq 300); do
        kill -0 "$server" 2>/dev/null || { wait "$server" || true; return 1; }
        # (A bounded wait: a port taker that never answers would hold redis-cli.)
        if timeout 2 redis-cli -p "$port" INFO server 2>/dev/null | grep -q "^process_id:$server"; then
            return 0
        fi
        sleep 0.1
    done
    return 0 # slow to start, but running: the server's own output says why
}

# Ctrl-C (or a SIGTERM) stops the server this script started, also while
# it is still starting: set before the first start, not after it answers.
server=
stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
    fi
    exit 130
}
trap stop_server INT TERM

# The port was free when looked at; another process may take it before the
# server binds it. Then, with PORT unset, the next free one is tried.
until start_server; do
    if [ -n "$PORT" ] || port_free "$port"; then
        echo "rl: $SERVER stopped (its output above says why)" >&2
        exit 1
    fi
    next=$((port + 1))
    while ! port_free "$next"; do
        next=$((next + 1))
        if [ "$next" -gt "$LAST" ]; then
            echo "rl: ports $FIRST to $LAST are all taken; choose one with make run PORT=N" >&2
            exit 1
        fi
    done
    echo "rl: port $port was taken by another process as the server started: trying port $next instead (give redis-cli -p $next)"
    port=$next
done
if [ -n "$functions" ]; then
    HOST=127.0.0.1 PORT=$port scripts/load-functions.sh || { kill "$server"; exit 1; }
fi
wait "$server"
