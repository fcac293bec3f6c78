"""The ACL recipes, as written, are enough for every Python adapter: a user
made by one runs Flask-Limiter and slowapi apps (the docs' set-ups) and
limits' async storage.

- The README's module recipe (rl's category and rl's key pattern), on the
  servers that have module ACL categories (Redis 8.2, Valkey 9.1; Redis 7.0
  has none). The edition probe and the default key prefix are what this
  holds: COMMAND is outside @ratelimit, and a prefix outside `rl:` is
  outside `~rl:*`.
- docs/operations.md's function-edition recipe (FCALL, FCALL_RO and the
  commands the library runs), on Redis 7.0 and Valkey 9.1 with only the
  library, loaded by the default user: the library's commands run as the
  caller, so this holds the list, `clear` included.
- That recipe plus redis-py's cluster grants from docs/operations.md, on
  every node of a three-node Valkey 9.1 cluster with the library."""

import asyncio
import os
import re

import httpx
import pytest
import redis

from servers import ROOT, Cluster, Server
from test_apps import STRATEGIES, Served, app_of, run_snippet, snippets


def read(path: str) -> str:
    return open(os.path.join(ROOT, path), encoding="utf-8").read()


def module_recipe() -> list[str]:
    """The README's `ACL SETUSER ...` line."""
    m = re.search(r"`(ACL SETUSER [^`]+)`", read("README.md"))
    assert m, "README.md has no `ACL SETUSER ...` recipe"
    return m[1].split()


def library_recipe() -> list[str]:
    """docs/operations.md's `ACL SETUSER ... +fcall ...` session line."""
    m = re.search(r"> (ACL SETUSER \S+ [^\n]*\+fcall [^\n]*)", read("docs/operations.md"))
    assert m, "docs/operations.md has no `ACL SETUSER ... +fcall ...` line"
    return m[1].split()


def cluster_grants(client: str) -> list[str]:
    """The grants docs/operations.md lists for a cluster client (a line
    "- `+cluster|slots ...`: <client> ...")."""
    lines = [m for m in re.finditer(r"^- `(\+[^`]+)`: (.*)$", read("docs/operations.md"), re.M)
             if client in m[2]]
    assert len(lines) == 1, f"docs/operations.md has no one line of cluster grants for {client}"
    return lines[0][1].split()


def credentials(recipe: list[str]) -> tuple[str, str]:
    return recipe[2], next(a[1:] for a in recipe if a.startswith(">"))


# (server flavor, recipe, the edition the storage finds)
SETUPS = [
    ("module-redis8", module_recipe, "module"),
    ("module-valkey9", module_recipe, "module"),
    ("library-redis7", library_recipe, "library"),
    ("library", library_recipe, "library"),
]


@pytest.fixture(scope="module", params=SETUPS, ids=[s[0] for s in SETUPS])
def acl_server(request):
    flavor, recipe_of, edition = request.param
    s = Server(flavor)
    recipe = recipe_of()
    user, password = credentials(recipe)
    assert s.client().execute_command(*recipe) in (b"OK", "OK")
    s.user_uri = f"rl://{user}:{password}@127.0.0.1:{s.port}"
    s.user = (user, password)
    s.edition = edition
    yield s
    s.stop()


def test_the_recipe_grants_the_limiter_and_nothing_else(acl_server):
    user, password = acl_server.user
    c = acl_server.client(username=user, password=password)
    if acl_server.edition == "module":
        assert c.execute_command("RL.SLIDE", "rl:x", 1, 1000)[0] == 1
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("RL.SLIDE", "other:x", 1, 1000)
    else:
        assert c.fcall("rl_slide", 1, "rl:x", 1, 1000)[0] == 1
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.fcall("rl_slide", 1, "other:x", 1, 1000)
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
    assert storage._commands.edition == acl_server.edition


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_clear_needs_del_which_only_the_library_recipe_has(acl_server, strategy):
    """The library's recipe has DEL (the library runs it), so limits'
    `clear` works as its user; the module's refuses it, as the README says
    (add `+del`)."""
    from limits import RateLimitItemPerMinute
    from limits.storage import storage_from_string
    from limits.strategies import STRATEGIES as LIMITERS

    import limits_rl  # noqa: F401

    limiter = LIMITERS[strategy](storage_from_string(acl_server.user_uri))
    item = RateLimitItemPerMinute(2)
    assert [limiter.hit(item, strategy) for _ in range(3)] == [True, True, False]
    if acl_server.edition == "module":
        with pytest.raises(redis.exceptions.NoPermissionError):
            limiter.clear(item, strategy)
        return
    limiter.clear(item, strategy)
    assert limiter.hit(item, strategy)


@pytest.fixture(scope="module")
def acl_cluster():
    cluster = Cluster("library")
    recipe = library_recipe()
    grants = cluster_grants("redis-py")
    user, password = credentials(recipe)
    for node in cluster.nodes:
        c = node.client()
        assert c.execute_command(*recipe) in (b"OK", "OK")
        assert c.execute_command("ACL", "SETUSER", user, *grants) in (b"OK", "OK")
    cluster.user_uri = cluster.uri(f"{user}:{password}")
    yield cluster
    cluster.stop()


def refused(cluster) -> set[str]:
    """What the nodes refused, by ACL LOG."""
    out = set()
    for node in cluster.nodes:
        for entry in node.client(decode_responses=True).acl_log():
            out.add(entry["object"])
    return out


@pytest.mark.parametrize("source", snippets())
def test_cluster_app_limits_as_the_library_recipes_user(acl_cluster, source):
    for node in acl_cluster.nodes:
        node.client().flushall()
        node.client().acl_log_reset()
    namespace = run_snippet(source, acl_cluster.user_uri, "moving-window")
    app, path = app_of(namespace)
    with Served(app) as served:
        codes = [httpx.get(f"http://127.0.0.1:{served.port}{path}", timeout=10).status_code
                 for _ in range(8)]
    assert codes == [200] * 5 + [429] * 3
    # What redis-py tries and goes on without, nothing else.
    assert refused(acl_cluster) <= {"client|setinfo"}, refused(acl_cluster)


def test_cluster_storages_route_as_the_library_recipes_user(acl_cluster):
    from limits import RateLimitItemPerMinute
    from limits.aio.strategies import MovingWindowRateLimiter as AsyncMovingWindow
    from limits.storage import storage_from_string
    from limits.strategies import MovingWindowRateLimiter

    import limits_rl  # noqa: F401

    item = RateLimitItemPerMinute(2)
    subjects = [f"s{i}" for i in range(30)]
    storage = storage_from_string(acl_cluster.user_uri)
    assert storage.edition == "library"
    limiter = MovingWindowRateLimiter(storage)
    for s in subjects:
        assert [limiter.hit(item, s) for _ in range(3)] == [True, True, False], s
    limiter.clear(item, subjects[0])
    assert limiter.hit(item, subjects[0])
    # The keys are on every node: each call went to its key's primary.
    assert all(node.client().dbsize() > 0 for node in acl_cluster.nodes)

    async def hits():
        limiter = AsyncMovingWindow(storage_from_string("async+" + acl_cluster.user_uri))
        return [await limiter.hit(item, "async") for _ in range(3)]

    assert asyncio.run(hits()) == [True, True, False]
