"""Asks Python `limits` for the script call each of its strategies makes on
one hit, through its own Redis storage with a recording client in place of
the connection, and writes each as <out>/<row>.lua (the script, from the
package's resources/redis/lua_scripts/) and <out>/<row>.args (numkeys,
keys, arguments as redis-py encodes them, one a line).

    PYTHONPATH=<limits installed here> python benches/peers/limits_calls.py <out>
"""

import os
import sys

import limits
from limits.storage import RedisStorage
from limits.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)

OUT = sys.argv[1]
# redis-benchmark puts a random number in place of it in every key.
ID = "__rand_int__"

# No connection is opened: redis-py connects on the first command, and
# every command goes to `record` instead.
storage = RedisStorage("redis://127.0.0.1:1")
client = storage.get_connection()
encode = client.get_encoder().encode
scripts = {
    s.sha: s.script.decode() if isinstance(s.script, bytes) else s.script
    for s in (
        storage.lua_acquire_moving_window,
        storage.lua_acquire_sliding_window,
        storage.lua_incr_expire,
    )
}
calls = []


def record(*command, **_options):
    calls.append(command)
    # What each script answers on an admitted hit.
    return 1


client.execute_command = record


def write(row, strategy, identifier, limit="100/minute"):
    calls.clear()
    assert strategy(storage).hit(limits.parse(limit), identifier)
    [(name, sha, numkeys, *rest)] = calls
    assert name == "EVALSHA", name
    words = [encode(w).decode() for w in (numkeys, *rest)]
    assert all(w and not any(c.isspace() for c in w) for w in words), words
    with open(os.path.join(OUT, f"{row}.lua"), "w") as f:
        f.write(scripts[sha])
    with open(os.path.join(OUT, f"{row}.args"), "w") as f:
        f.write("\n".join(words) + "\n")


# limits names a key by its limit and identifiers alone, so each row has an
# identifier of its own: the strategies' keys would clash in one keyspace.
write("limits_moving", MovingWindowRateLimiter, f"mw:{ID}")
# One key for every call: full after its first 100, as rl's hot rows.
write("limits_moving_hot", MovingWindowRateLimiter, "mw:hot")
# A key that is full, so every call is denied (rl's fn_slide_full).
write("limits_moving_full", MovingWindowRateLimiter, "mw:full", "10/10 minutes")
write("limits_sliding", SlidingWindowCounterRateLimiter, f"swc:{ID}")
write("limits_fixed", FixedWindowRateLimiter, f"fw:{ID}")
