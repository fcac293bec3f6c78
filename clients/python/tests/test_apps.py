"""The set-up snippets of docs/clients.md, README.md and the package's own
README (the wheel's long description), run as they are
written (only the server's address replaced): a Flask app with
Flask-Limiter and a FastAPI app with slowapi, served over HTTP on
loopback and driven past their limit, for every strategy, on both
editions. The snippets are the python blocks marked
`<!-- docs-test: skip: ... clients/python/tests ... -->` (the docs test
has no Flask or FastAPI; this suite runs them)."""

import os
import re
import threading
import time

import httpx
import pytest
import redis
from fastapi import Request  # at module level: FastAPI resolves the handler's annotation here
from flask import Flask

from servers import ROOT, Server

DOCS = [os.path.join(ROOT, "docs", "clients.md"), os.path.join(ROOT, "README.md"),
        os.path.join(ROOT, "clients", "python", "README.md")]
MARKER = re.compile(r"<!--\s*docs-test:\s*skip:[^>]*clients/python/tests[^>]*-->\s*\n```python\n(.*?)\n```", re.S)
URI = "rl://localhost:6379"
STRATEGIES = ["fixed-window", "moving-window", "sliding-window-counter"]


def snippets():
    found = []
    for path in DOCS:
        text = open(path, encoding="utf-8").read()
        for m in MARKER.finditer(text):
            line = text[: m.start(1)].count("\n") + 1
            found.append(pytest.param(m[1], id=f"{os.path.relpath(path, ROOT)}:{line}"))
    return found


def test_the_docs_hold_the_snippets():
    found = snippets()
    kinds = [p.values[0] for p in found]
    assert sum("flask_limiter" in s for s in kinds) >= 2 and sum("slowapi" in s for s in kinds) >= 2
    for doc in ("README.md", "clients/python/README.md"):
        assert any(p.id.startswith(doc + ":") for p in found), f"no snippet of {doc}"
    assert all(URI in s and "import limits_rl" in s for s in kinds)
    # Without it a reader gets the frameworks' default, a fixed window, not
    # the sliding window (RL.SLIDE) the README is about.
    assert all('strategy="moving-window"' in s for s in kinds), kinds


def run_snippet(source: str, uri: str, strategy: str) -> dict:
    assert URI in source
    source = source.replace(URI, uri)
    if "strategy=" not in source:
        source = source.replace(f'storage_uri="{uri}"', f'storage_uri="{uri}", strategy="{strategy}"')
    else:
        source = re.sub(r'strategy="[a-z-]+"', f'strategy="{strategy}"', source)
    namespace = {"__name__": "snippet"}
    exec(compile(source, "snippet", "exec"), namespace)
    return namespace


class Served:
    """A WSGI (Flask) or ASGI (FastAPI) app on a loopback port, in a thread."""

    def __init__(self, app):
        self.app = app

    def __enter__(self):
        if isinstance(self.app, Flask):
            from werkzeug.serving import make_server

            self._server = make_server("127.0.0.1", 0, self.app, threaded=True)
            self.port = self._server.server_port
            self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        else:
            import socket

            import uvicorn

            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
            self._server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
            self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/nowhere", timeout=2)
                return self
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def __exit__(self, *exc):
        if isinstance(self.app, Flask):
            self._server.shutdown()
        else:
            self._server.should_exit = True
        self._thread.join(timeout=10)


def app_of(namespace: dict):
    """The snippet's app; a one-line set-up (a limiter without an app) gets a
    small one around its limiter."""
    if "app" in namespace:
        return namespace["app"], "/"
    limiter = namespace["limiter"]
    if type(limiter).__module__.startswith("flask_limiter"):
        app = Flask("one_line")
        limiter.init_app(app)

        @app.route("/limited")
        @limiter.limit("5/minute")
        def limited():
            return "ok"

        return app, "/limited"
    from fastapi import FastAPI
    from slowapi import _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded

    app = FastAPI()
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)

    @app.get("/limited")
    @limiter.limit("5/minute")
    async def limited(request: Request):
        return {"ok": True}

    return app, "/limited"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("source", snippets())
def test_app_answers_exactly_the_limit_then_429(server, source, strategy):
    namespace = run_snippet(source, server.uri, strategy)
    app, path = app_of(namespace)
    with Served(app) as served:
        codes = [httpx.get(f"http://127.0.0.1:{served.port}{path}", timeout=10).status_code
                 for _ in range(8)]
    assert codes == [200] * 5 + [429] * 3
    assert server.client().keys("rl:limits:*"), "the limit lives in the server"


@pytest.mark.parametrize("swallow", [False, True])
def test_flask_limiter_swallow_errors_decides_when_the_server_is_gone(swallow):
    """A lost server is an error Flask-Limiter sees: 500 by default, and the
    request let through only when swallow_errors says so (never a silent
    admit without it)."""
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    import limits_rl  # noqa: F401

    s = Server("library")
    app = Flask("gone")
    limiter = Limiter(get_remote_address, app=app, storage_uri=s.uri, swallow_errors=swallow,
                      strategy="moving-window", in_memory_fallback_enabled=False)

    @app.route("/")
    @limiter.limit("1/minute")
    def index():
        return "ok"

    with Served(app) as served:
        url = f"http://127.0.0.1:{served.port}/"
        assert [httpx.get(url).status_code for _ in range(2)] == [200, 429]
        s.stop()
        with pytest.raises(redis.ConnectionError):
            redis.Redis(port=s.port).ping()
        assert httpx.get(url).status_code == (200 if swallow else 500)
