"""The README's ACL recipe, as written, is enough for every Python adapter:
a user granted only rl's category and rl's key pattern runs Flask-Limiter
and slowapi apps (the docs' set-ups) and limits' async storage on the
module, on the servers that have module ACL categories (Redis 8.2, Valkey
9.1; Redis 7.0 has none). The edition probe and the default key prefix are
what this holds: COMMAND is outside @ratelimit, and a prefix outside
`rl:` is outside `~rl:*`."""

import asyncio
import os
import re

import httpx
import pytest
import redis

from servers import ROOT, Server
from test_apps import STRATEGIES, Served, app_of, run_snippet, snippets

SERVERS = ["module-redis8", "module-valkey9"]


def readme_recipe() -> list[str]:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"`(ACL SETUSER [^`]+)`", text)
    assert m, "README.md has no `ACL SETUSER ...` recipe"
    return m[1].split()


@pytest.fixture(scope="module", params=SERVERS)
def acl_server(request):
    s = Server(request.param)
    recipe = readme_recipe()
    user, password = recipe[2], next(a[1:] for a in recipe if a.startswith(">"))
    assert s.client().execute_command(*recipe) in (b"OK", "OK")
    s.user_uri = f"rl://{user}:{password}@127.0.0.1:{s.port}"
    s.user = (user, password)
    yield s
    s.stop()


def test_the_recipe_grants_the_limiter_and_nothing_else(acl_server):
    user, password = acl_server.user
    c = acl_server.client(username=user, password=password)
    assert c.execute_command("RL.SLIDE", "rl:x", 1, 1000)[0] == 1
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.execute_command("RL.SLIDE", "other:x", 1, 1000)
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.execute_command("COMMAND", "LIST")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("source", snippets())
def test_app_limits_as_the_recipes_user(acl_server, source, strategy):
    acl_server.client().flushall()
    namespace = run_snippet(source, acl_server.user_uri, strategy)
    app, path = app_of(namespace)
    with Served(app) as served:
        codes = [httpx.get(f"http://127.0.0.1:{served.port}{path}", timeout=10).status_code
                 for _ in range(8)]
    assert codes == [200] * 5 + [429] * 3
    keys = acl_server.client().keys("*")
    assert keys and all(k.startswith(b"rl:limits:") for k in keys), keys


def test_async_storage_limits_as_the_recipes_user(acl_server):
    from limits import RateLimitItemPerMinute
    from limits.aio.strategies import MovingWindowRateLimiter
    from limits.storage import storage_from_string

    import limits_rl  # noqa: F401

    acl_server.client().flushall()
    storage = storage_from_string("async+" + acl_server.user_uri)
    limiter = MovingWindowRateLimiter(storage)
    item = RateLimitItemPerMinute(3)

    async def hits():
        return [await limiter.hit(item, "acl") for _ in range(4)]

    assert asyncio.run(hits()) == [True, True, True, False]
    assert storage._commands.edition == "module"
