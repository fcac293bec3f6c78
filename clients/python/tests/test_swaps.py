"""A server that changes under a running app: restarted on the same port with
the other edition, or with neither and then one again. The app (Flask with
Flask-Limiter) is never restarted: the first answer that the remembered
edition is gone makes the storage find the edition again, once, and send the
hit again. With neither, each hit raises (ConfigurationError saying how to
load rl), so Flask-Limiter answers 500, or lets the request through with
swallow_errors, as for any storage error; the `limits_rl` logger says once,
not per request, what to load and how."""

import asyncio
import logging
import re
import threading

import httpx
import limits
import pytest
import redis
from flask import Flask
from limits.aio.strategies import MovingWindowRateLimiter as AsyncMovingWindow
from limits.errors import ConfigurationError
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

import limits_rl  # noqa: F401
from servers import Server
from test_apps import Served

FLAVORS = {"module": "module", "library": "library", "neither": "bare"}
HOW_TO = re.compile(r"loadmodule .*redis-cli -x FUNCTION LOAD REPLACE < rl-\d+\.\d+\.\d+\.lua .*functions/rl\.lua.*make load-functions")


def flask_app(uri: str, swallow: bool) -> Flask:
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    app = Flask(f"swaps-{swallow}")
    limiter = Limiter(get_remote_address, app=app, storage_uri=uri, strategy="moving-window", key_prefix=app.name,
                      swallow_errors=swallow, in_memory_fallback_enabled=False)

    @app.route("/")
    @limiter.limit("3/minute")
    def index():
        return "ok"

    return app


def not_loaded_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "limits_rl" and "rl is not loaded" in r.getMessage()]


@pytest.mark.parametrize("sequence", [
    ["module", "library", "module"],
    ["module", "neither", "library"],
    ["library", "neither", "module"],
], ids="->".join)
def test_a_running_app_follows_its_server(sequence, caplog):
    caplog.set_level(logging.WARNING, logger="limits_rl")
    s = Server(FLAVORS[sequence[0]])
    try:
        with Served(flask_app(s.uri, False)) as strict, Served(flask_app(s.uri, True)) as swallowing:
            for step, edition in enumerate(sequence):
                if step:
                    s.restart(FLAVORS[edition])
                caplog.clear()
                if edition == "neither":
                    assert [httpx.get(f"http://127.0.0.1:{strict.port}/").status_code for _ in range(3)] == [500] * 3
                    assert [httpx.get(f"http://127.0.0.1:{swallowing.port}/").status_code for _ in range(3)] == [200] * 3
                    # Once per storage (each met the change), not per request.
                    logged = not_loaded_logs(caplog)
                    assert len(logged) == 2, logged
                    assert all(HOW_TO.search(text) for text in logged), logged
                    assert s.client().keys("*") == []
                else:
                    # A fresh server: fresh limits, kept by rl in the edition it has now.
                    for served in (strict, swallowing):
                        codes = [httpx.get(f"http://127.0.0.1:{served.port}/").status_code for _ in range(4)]
                        assert codes == [200, 200, 200, 429]
                    keys = s.client().keys("rl:limits:*")
                    assert len(keys) == 2 and all(s.client().type(k) == b"zset" for k in keys)
                    assert not_loaded_logs(caplog) == []
    finally:
        s.stop()


def test_the_storage_says_which_edition_it_calls_after_a_change():
    s = Server("module")
    try:
        storage = storage_from_string(s.uri)
        limiter = MovingWindowRateLimiter(storage)
        item = limits.parse("2/minute")
        assert storage.edition == "module" and limiter.hit(item, "k")
        s.restart("library")
        assert limiter.hit(item, "k") and storage.edition == "library"
        s.restart("bare")
        with pytest.raises(ConfigurationError, match="rl is not loaded"):
            limiter.hit(item, "k")
        with pytest.raises(ConfigurationError):
            storage.edition
        s.restart("module")
        assert limiter.hit(item, "k") and storage.edition == "module"
    finally:
        s.stop()


def test_a_cluster_storage_follows_its_server():
    """The cluster client read COMMAND when it started: it reads it again."""
    s = Server("module", cluster=True)
    try:
        storage = storage_from_string(s.uri)
        limiter = MovingWindowRateLimiter(storage)
        item = limits.parse("2/minute")
        assert storage.edition == "module" and limiter.hit(item, "k")
        for flavor in ("library", "module"):
            s.restart(flavor)
            assert [limiter.hit(item, "k") for _ in range(3)] == [True, True, False]
            assert storage.edition == flavor
    finally:
        s.stop()


def burst(limiter, n: int) -> list:
    item = limits.parse("100/minute")
    results, errors = [None] * n, []
    go = threading.Barrier(n)

    def hit(i):
        go.wait()
        try:
            results[i] = limiter.hit(item, f"u{i}")
        except Exception as err:  # noqa: BLE001 - the test reports it
            errors.append(err)

    threads = [threading.Thread(target=hit, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    return results


def test_a_burst_of_first_calls_sends_one_probe():
    """A storage made while its server was down finds the edition at its
    first calls: twenty at once on a library-only server send one
    FCALL_RO rl_version."""
    s = Server("library")
    port = s.port
    s.stop()
    storage = storage_from_string(f"rl://127.0.0.1:{port}", max_connections=32)
    with pytest.raises(redis.ConnectionError):
        storage.edition
    s.restart("library")
    try:
        assert burst(MovingWindowRateLimiter(storage), 20) == [True] * 20
        assert s.calls().get("fcall_ro") == 1
        assert s.calls().get("fcall") == 20
    finally:
        s.stop()


def test_a_burst_that_meets_the_other_edition_finds_it_again_once():
    s = Server("module")
    try:
        storage = storage_from_string(s.uri, max_connections=32)
        limiter = MovingWindowRateLimiter(storage)
        assert storage.edition == "module"
        s.restart("library")
        assert burst(limiter, 20) == [True] * 20
        assert s.calls().get("fcall_ro") == 1
        s.restart("module")
        assert burst(limiter, 20) == [True] * 20
        # The library's function unknown, then one RL.PEEK probe finds the module.
        assert s.calls().get("rl.peek") == 1 and s.calls().get("rl.slide") == 20
    finally:
        s.stop()


def test_the_async_storage_follows_its_server_and_shares_the_probe(caplog):
    caplog.set_level(logging.WARNING, logger="limits_rl")
    s = Server("module")

    async def run():
        storage = storage_from_string("async+" + s.uri)
        limiter = AsyncMovingWindow(storage)
        item = limits.parse("100/minute")

        async def restart(flavor):
            # The pool's connections to the old server would each fail once
            # (as in an app, and not rl's doing): closed before the hits.
            s.restart(flavor)
            await storage.storage.connection_pool.disconnect()

        async def hits(n):
            return await asyncio.gather(*(limiter.hit(item, f"u{i}") for i in range(n)), return_exceptions=True)

        assert await hits(1) == [True]
        await restart("bare")
        failed = await hits(10)
        assert all(isinstance(e, ConfigurationError) and HOW_TO.search(str(e)) for e in failed), failed
        assert len(not_loaded_logs(caplog)) == 1
        await restart("library")
        assert await hits(20) == [True] * 20
        assert s.calls().get("fcall_ro") == 1
        await restart("module")
        assert await hits(20) == [True] * 20
        assert s.calls().get("rl.peek") == 1 and s.calls().get("rl.slide") == 20

    try:
        asyncio.run(run())
    finally:
        s.stop()
