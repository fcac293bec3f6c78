"""limits-rl against real servers: each strategy's meaning, the edition
check, one command per hit, errors that surface. Every test runs on Redis
7.0 with the module and on Valkey 9.1 with only the function library
(standalone and as a one-node cluster where it says so)."""

from __future__ import annotations

import time

import limits
import pytest
import redis
from limits.errors import ConfigurationError, StorageError
from limits.storage import storage_from_string
from limits.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)

import limits_rl
from servers import LIBRARY, Commands, Server

STRATEGIES = [MovingWindowRateLimiter, SlidingWindowCounterRateLimiter, FixedWindowRateLimiter]
# The command each strategy's hit runs, per edition (INFO commandstats names).
HIT_COMMAND = {
    ("module", MovingWindowRateLimiter): "rl.slide",
    ("module", SlidingWindowCounterRateLimiter): "rl.buckets",
    ("module", FixedWindowRateLimiter): "rl.fixed",
    ("library", MovingWindowRateLimiter): "fcall",
    ("library", SlidingWindowCounterRateLimiter): "fcall",
    ("library", FixedWindowRateLimiter): "fcall",
}


def test_packaged_library_is_functions_rl_lua():
    with open(LIBRARY, encoding="utf-8") as f:
        assert limits_rl.library_source() == f.read(), (
            "the library inside the installed package differs from functions/rl.lua: "
            "reinstall it (pip install ./clients/python)")


def test_storage_calls_the_edition_the_server_has(server):
    storage = storage_from_string(server.uri)
    assert isinstance(storage, limits_rl.RLStorage)
    assert storage.edition == server.flavor


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_each_strategy_admits_exactly_the_limit(server, strategy):
    limiter = strategy(storage_from_string(server.uri))
    item = limits.parse("5/minute")
    assert [limiter.hit(item, "u") for _ in range(7)] == [True] * 5 + [False] * 2
    assert not limiter.test(item, "u")
    assert limiter.get_window_stats(item, "u").remaining == 0
    # Another subject is its own limit.
    assert limiter.hit(item, "v") and limiter.test(item, "v")
    assert limiter.get_window_stats(item, "v").remaining == 4
    limiter.clear(item, "u")
    assert limiter.get_window_stats(item, "u").remaining == 5
    assert limiter.hit(item, "u")


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_cost_counts_units(server, strategy):
    limiter = strategy(storage_from_string(server.uri))
    item = limits.parse("10/minute")
    assert not limiter.hit(item, "big", cost=11)
    assert limiter.hit(item, "c", cost=7)
    assert limiter.test(item, "c", cost=3) and not limiter.test(item, "c", cost=4)
    assert limiter.get_window_stats(item, "c").remaining == 3


def test_moving_window_reset_is_when_a_unit_frees(server):
    """Full window: limits' reset is the oldest entry's time + the window,
    the moment one more is admitted (rl's retry_after_ms); empty: now + the
    window."""
    limiter = MovingWindowRateLimiter(storage_from_string(server.uri))
    item = limits.parse("2/minute")
    before = time.time()
    stats = limiter.get_window_stats(item, "m")
    assert stats.remaining == 2 and before + 60 <= stats.reset_time <= time.time() + 60
    first = time.time()
    assert limiter.hit(item, "m")
    time.sleep(0.3)
    assert limiter.hit(item, "m")
    stats = limiter.get_window_stats(item, "m")
    assert stats.remaining == 0
    # The first entry was written between `first` and the second hit.
    assert first + 60 - 0.05 <= stats.reset_time <= first + 60 + 0.25
    # The hits' own window is the limit's: rl keeps the log a quarter
    # window past its newest entry's leaving.
    assert 60_000 < server.client().pttl("rl:limits:" + item.key_for("m")) <= 75_000


def test_moving_window_reset_is_the_oldest_entrys_leaving_when_partly_full(server):
    """Partly full: the window starts at the oldest counted entry (RL.PEEK
    SLIDE ... OLDEST), not the newest, in the one command of the stats."""
    limiter = MovingWindowRateLimiter(storage_from_string(server.uri))
    item = limits.parse("5/minute")
    first = time.time()
    assert limiter.hit(item, "p")
    time.sleep(0.5)
    assert limiter.hit(item, "p")
    stats = limiter.get_window_stats(item, "p")
    assert stats.remaining == 3
    assert first + 60 - 0.05 <= stats.reset_time <= first + 60 + 0.25
    start, count = limiter.storage.get_moving_window(item.key_for("p"), 5, 60)
    assert count == 2 and first - 0.05 <= start <= first + 0.25


def test_fixed_window_counts_every_hit_as_limits_does(server):
    """limits' incr has no limit: a denied hit is counted too (limits' own
    Redis storage does the same), and the window's end never moves."""
    storage = storage_from_string(server.uri)
    limiter = FixedWindowRateLimiter(storage)
    item = limits.parse("3/minute")
    results = [limiter.hit(item, "f") for _ in range(5)]
    assert results == [True, True, True, False, False]
    key = "rl:limits:" + item.key_for("f")
    assert int(server.client().get(key)) == 5
    assert 59_000 < server.client().pttl(key) <= 60_000
    assert storage.get(item.key_for("f")) == 5
    assert time.time() + 59 < storage.get_expiry(item.key_for("f")) <= time.time() + 60


def test_sliding_window_counter_is_one_rl_buckets_key(server):
    limiter = SlidingWindowCounterRateLimiter(storage_from_string(server.uri))
    item = limits.parse("4/minute")
    assert limiter.hit(item, "s", cost=3)
    key = "rl:limits:" + item.key_for("s")
    c = server.client()
    assert c.type(key) == b"hash" and c.hget(key, "h").startswith(b"B,1000,")
    assert c.keys("*") == [key.encode()]
    stats = limiter.get_window_stats(item, "s")
    assert stats.remaining == 1 and time.time() < stats.reset_time <= time.time() + 61


def test_reset_deletes_only_the_prefix(server):
    storage = storage_from_string(server.uri)
    limiter = MovingWindowRateLimiter(storage)
    item = limits.parse("3/minute")
    for who in "abc":
        limiter.hit(item, who)
    server.client().set("theirs", "1")
    assert storage.reset() == 3
    assert server.client().keys("*") == [b"theirs"]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_one_command_per_hit(server, strategy):
    """MONITOR while hitting: every hit is one command, the limiter's own
    (RL.* with the module, FCALL with the library); the edition was found
    when the storage was made, not per hit."""
    limiter = strategy(storage_from_string(server.uri))
    item = limits.parse("5/minute")
    with Commands(server) as seen:
        results = [limiter.hit(item, "r") for _ in range(7)]
    assert results == [True] * 5 + [False] * 2
    assert [c.split()[0].strip('"').lower() for c in seen.sent] == [HIT_COMMAND[server.flavor, strategy]] * 7


def test_one_command_per_hit_in_cluster(cluster):
    """In a cluster too: no COMMAND GETKEYS for FCALL, no redirections."""
    storage = storage_from_string(cluster.uri)
    assert isinstance(storage, limits_rl.RLClusterStorage) and storage.edition == cluster.flavor
    for strategy in STRATEGIES:
        limiter = strategy(storage)
        item = limits.parse("5/minute")
        limiter.hit(item, "warm", strategy.__name__)  # the node's connection
        with Commands(cluster) as seen:
            results = [limiter.hit(item, "r", strategy.__name__) for _ in range(7)]
        assert results == [True] * 5 + [False] * 2
        assert [c.split()[0].strip('"').lower() for c in seen.sent] == [HIT_COMMAND[cluster.flavor, strategy]] * 7


def test_server_without_rl_fails_at_start_saying_how_to_load(bare):
    with pytest.raises(ConfigurationError) as err:
        storage_from_string(f"rl://127.0.0.1:{bare.port}")
    text = str(err.value)
    assert "FUNCTION LOAD" in text and "loadmodule" in text and "load_functions=True" in text
    assert bare.client().function_list() == []


def test_load_functions_loads_the_packaged_library(bare):
    storage = storage_from_string(f"rl://127.0.0.1:{bare.port}", load_functions=True)
    assert storage.edition == "library"
    assert bare.client().fcall_ro("rl_version", 0)
    limiter = MovingWindowRateLimiter(storage)
    item = limits.parse("2/minute")
    assert [limiter.hit(item, "x") for _ in range(3)] == [True, True, False]
    # A second storage finds it loaded and leaves it.
    assert storage_from_string(f"rl://127.0.0.1:{bare.port}", load_functions=True).edition == "library"


def test_lost_connection_raises_never_admits():
    s = Server("module")
    storage = storage_from_string(s.uri)
    plain = storage_from_string(s.uri, wrap_exceptions=True)
    item = limits.parse("5/minute")
    s.stop()
    for strategy in STRATEGIES:
        with pytest.raises(redis.ConnectionError):
            strategy(storage).hit(item, "k")
        with pytest.raises(StorageError):
            strategy(plain).hit(item, "k")
    assert storage.check() is False


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_out_of_memory_raises_never_admits(server, strategy):
    limiter = strategy(storage_from_string(server.uri, wrap_exceptions=True))
    item = limits.parse("5/minute")
    c = server.client()
    c.config_set("maxmemory", 1)
    try:
        with pytest.raises(StorageError) as err:
            limiter.hit(item, "oom")
        assert isinstance(err.value.__cause__, redis.exceptions.OutOfMemoryError)
    finally:
        c.config_set("maxmemory", 0)
    assert c.exists("rl:limits:" + item.key_for("oom")) == 0


def test_module_keys_continue_under_the_library():
    """The same keys and state in both editions: on Redis 7.0 with the
    module and the library loaded, hits through the module count for a
    storage calling the library, and the other way round."""
    s = Server("module")
    try:
        with open(LIBRARY) as f:
            s.client().function_load(f.read(), replace=True)
        module = storage_from_string(s.uri)
        library = storage_from_string(s.uri)
        library._commands = limits_rl._core.Commands("library")
        item = limits.parse("4/minute")
        for strategy in STRATEGIES:
            assert [strategy(module).hit(item, "a") for _ in range(2)] == [True, True]
            assert [strategy(library).hit(item, "a") for _ in range(3)] == [True, True, False]
            assert [strategy(library).hit(item, "b") for _ in range(3)] == [True] * 3
            assert [strategy(module).hit(item, "b") for _ in range(2)] == [True, False]
            s.client().flushall()
    finally:
        s.stop()


def test_rls_speaks_tls():
    """rls:// (and async+rls://) connect over TLS, options reaching redis-py."""
    import asyncio

    from limits.aio.strategies import MovingWindowRateLimiter as AsyncMoving

    s = Server("module", tls=True)  # Redis 7.0: the Valkey build here has no TLS
    try:
        assert s.uri.startswith("rls://")
        storage = storage_from_string(s.uri, ssl_ca_certs=s.ca)
        assert storage.edition == "module"
        item = limits.parse("2/minute")
        assert [MovingWindowRateLimiter(storage).hit(item, "t") for _ in range(3)] == [True, True, False]
        aio = AsyncMoving(storage_from_string("async+" + s.uri, ssl_ca_certs=s.ca))

        async def hits():
            return [await aio.hit(item, "t"), await aio.hit(item, "u")]

        assert asyncio.run(hits()) == [False, True]
    finally:
        s.stop()
