"""limits' own Redis storage (`redis://`) and limits-rl (`rl://`) side by
side on one server, every call sent to both, past the limit: `hit`, `test`
and `get_window_stats` answer the same for each strategy, and so do the
headers Flask-Limiter and slowapi make from them. Where rl's exact window
legitimately differs, the test holds it to what docs/clients.md states.
Each on Redis 7.0 with the module and Valkey 9.1 with only the library."""

from __future__ import annotations

import time

import httpx
import limits
import pytest
from fastapi import Request  # at module level: FastAPI resolves the handler's annotation here
from flask import Flask
from limits.storage import storage_from_string
from limits.strategies import STRATEGIES

import limits_rl  # noqa: F401 - registers rl://
from test_apps import Served

# The limit the storages are compared on (short, so a pause empties it),
# and the one the apps serve (long enough for a loaded machine's requests).
ITEM = "3/2 seconds"
EXPIRY = 2
APP_ITEM = "3/5 seconds"
# The reset each strategy may differ by, in seconds, and why
# (docs/clients.md, "What differs from limits' own Redis storage").
RESET_SLACK = {
    # Both start the window at the oldest counted entry; the two entries
    # of one hit are written a few ms apart.
    "moving-window": 0.1,
    # limits' own reads the key's TTL in whole seconds (rounded), rl its
    # PTTL: the same window end, limits' off by up to half a second.
    "fixed-window": 0.6,
    # limits: the current fixed window's end; rl: when the oldest counted
    # bucket leaves, up to one bucket (expiry / 60) later.
    "sliding-window-counter": EXPIRY / 60 + 0.1,
}


def window_start_quirk(strategy: str, theirs: float, ours: float, expiry: float = EXPIRY, grain: float = 0.05) -> bool:
    """limits' own sliding window counter, read in the same ms as its
    current window's first hit, reports its reset as now: the window's key
    lives two windows and limits takes its TTL modulo one (docs/clients.md).
    rl's reset is then a window ahead. `grain`: how far from now a reset
    read "now" may be (whole seconds in the headers)."""
    now = time.time()
    return (strategy == "sliding-window-counter" and abs(theirs - now) <= grain
            and abs(ours - (now + expiry)) <= RESET_SLACK[strategy] + grain)


def pair(server):
    """limits' RedisStorage and RLStorage on the same server."""
    theirs = storage_from_string(f"redis://127.0.0.1:{server.port}")
    ours = storage_from_string(server.uri)
    assert isinstance(ours, limits_rl.RLStorage) and not isinstance(theirs, limits_rl.RLStorage)
    return theirs, ours


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_reads_past_the_limit_match_limits_redis_storage(server, strategy):
    theirs_storage, ours_storage = pair(server)
    theirs, ours = STRATEGIES[strategy](theirs_storage), STRATEGIES[strategy](ours_storage)
    item = limits.parse(ITEM)
    # Hits (with their cost) and pauses, past the limit and back under it:
    # a pause of the expiry lets every entry leave (the sliding window
    # counter's second window is not compared: limits weights the previous
    # window there, which rl does not, as documented).
    steps = ["hit", 0.4, "hit", "hit", "hit", ("hit", 2), 0.3, "hit", "hit"]
    if strategy != "sliding-window-counter":
        steps += [EXPIRY + 0.2, ("hit", 3), "hit", 0.2, "hit"]
    denied = 0
    for i, step in enumerate(steps):
        if isinstance(step, float):
            time.sleep(step)
            continue
        cost = step[1] if isinstance(step, tuple) else 1
        got, want = ours.hit(item, "u", cost=cost), theirs.hit(item, "u", cost=cost)
        assert got == want, f"step {i}: hit(cost={cost}) rl {got}, limits {want}"
        denied += not want
        for c in (1, 2):
            assert ours.test(item, "u", cost=c) == theirs.test(item, "u", cost=c), f"step {i}: test(cost={c})"
        mine, upstream = ours.get_window_stats(item, "u"), theirs.get_window_stats(item, "u")
        assert mine.remaining == upstream.remaining, f"step {i}: remaining rl {mine}, limits {upstream}"
        slack = RESET_SLACK[strategy]
        assert abs(mine.reset_time - upstream.reset_time) <= slack or window_start_quirk(strategy, upstream.reset_time, mine.reset_time), (
            f"step {i}: reset rl {mine.reset_time - time.time():.3f} s ahead, limits "
            f"{upstream.reset_time - time.time():.3f} s (slack {slack})")
    assert denied >= 3, "the sequence must pass the limit"


def flask_app(uri: str, strategy: str) -> Flask:
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    app = Flask(f"side-{strategy}")
    limiter = Limiter(get_remote_address, app=app, storage_uri=uri, strategy=strategy, headers_enabled=True)

    @app.route("/")
    @limiter.limit(APP_ITEM)
    def index():
        return "ok"

    return app


def fastapi_app(uri: str, strategy: str):
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse
    from slowapi import Limiter, _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded
    from slowapi.util import get_remote_address

    limiter = Limiter(key_func=get_remote_address, storage_uri=uri, strategy=strategy, headers_enabled=True)
    app = FastAPI()
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)

    @app.get("/")
    @limiter.limit(APP_ITEM)
    async def index(request: Request):
        return PlainTextResponse("ok")

    return app


HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"]


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("framework", ["flask-limiter", "slowapi"])
def test_headers_past_the_limit_match_limits_redis_storage(server, framework, strategy):
    make = flask_app if framework == "flask-limiter" else fastapi_app
    theirs = make(f"redis://127.0.0.1:{server.port}", strategy)
    ours = make(server.uri, strategy)
    with Served(theirs) as a, Served(ours) as b:
        codes = []
        for i in range(6):
            if i == 1:
                time.sleep(0.4)
            want = httpx.get(f"http://127.0.0.1:{a.port}/", timeout=10)
            got = httpx.get(f"http://127.0.0.1:{b.port}/", timeout=10)
            assert got.status_code == want.status_code, f"request {i}"
            codes.append(want.status_code)
            for h in HEADERS:
                assert (h in got.headers) == (h in want.headers), f"request {i}: {h}: rl {dict(got.headers)}, limits {dict(want.headers)}"
            assert got.headers["x-ratelimit-limit"] == want.headers["x-ratelimit-limit"], f"request {i}"
            assert got.headers["x-ratelimit-remaining"] == want.headers["x-ratelimit-remaining"], f"request {i}"
            # Whole seconds made from the reset (within the slack above, or
            # limits' own sliding-window quirk): X-RateLimit-Reset in Unix
            # seconds (slowapi: a float), Retry-After in seconds from now.
            for h, now in (("x-ratelimit-reset", time.time()), ("retry-after", 0)):
                if h in want.headers:
                    theirs_at, ours_at = float(want.headers[h]) - now, float(got.headers[h]) - now
                    assert abs(ours_at - theirs_at) <= 1 or window_start_quirk(
                        strategy, time.time() + theirs_at, time.time() + ours_at, 5, 2), (
                        f"request {i}: {h} rl {got.headers[h]}, limits {want.headers[h]}")
    assert codes == [200, 200, 200, 429, 429, 429]
