"""The asyncio storages (limits.aio) on both editions, standalone and in a
cluster: the same meaning and one command per hit."""

import asyncio

import limits
import pytest
from limits.aio.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    SlidingWindowCounterRateLimiter,
)
from limits.errors import ConfigurationError
from limits.storage import storage_from_string

import limits_rl
from servers import Commands
from test_storage import HIT_COMMAND

import limits.strategies as sync

STRATEGIES = [MovingWindowRateLimiter, SlidingWindowCounterRateLimiter, FixedWindowRateLimiter]
SYNC = {MovingWindowRateLimiter: sync.MovingWindowRateLimiter,
        SlidingWindowCounterRateLimiter: sync.SlidingWindowCounterRateLimiter,
        FixedWindowRateLimiter: sync.FixedWindowRateLimiter}


def async_uri(server):
    return "async+" + server.uri


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_async_strategy_admits_exactly_the_limit(server, strategy):
    async def run():
        storage = storage_from_string(async_uri(server))
        assert isinstance(storage, limits_rl.RLAsyncStorage)
        limiter = strategy(storage)
        item = limits.parse("5/minute")
        got = [await limiter.hit(item, "u") for _ in range(7)]
        stats = await limiter.get_window_stats(item, "u")
        tested = await limiter.test(item, "u")
        await limiter.clear(item, "u")
        after = await limiter.get_window_stats(item, "u")
        return got, stats.remaining, tested, after.remaining

    got, remaining, tested, after = asyncio.run(run())
    assert got == [True] * 5 + [False] * 2
    assert (remaining, tested, after) == (0, False, 5)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.__name__)
def test_async_one_command_per_hit(server, strategy):
    async def run():
        limiter = strategy(storage_from_string(async_uri(server)))
        item = limits.parse("5/minute")
        await limiter.hit(item, "warm")  # the pool's first connection
        with Commands(server) as seen:
            got = [await limiter.hit(item, "r") for _ in range(7)]
        return got, seen.sent

    got, sent = asyncio.run(run())
    assert got == [True] * 5 + [False] * 2
    assert [c.split()[0].strip('"').lower() for c in sent] == [HIT_COMMAND[server.flavor, SYNC[strategy]]] * 7


def test_async_cluster(cluster):
    async def run():
        storage = storage_from_string("async+" + cluster.uri)
        assert isinstance(storage, limits_rl.RLAsyncClusterStorage)
        out = []
        for strategy in STRATEGIES:
            limiter = strategy(storage)
            item = limits.parse("3/minute")
            await limiter.hit(item, "warm", strategy.__name__)
            with Commands(cluster) as seen:
                got = [await limiter.hit(item, "r", strategy.__name__) for _ in range(5)]
            out.append((strategy, got, seen.sent))
        return out

    for strategy, got, sent in asyncio.run(run()):
        assert got == [True] * 3 + [False] * 2
        assert [c.split()[0].strip('"').lower() for c in sent] == [HIT_COMMAND[cluster.flavor, SYNC[strategy]]] * 5


def test_async_without_rl_fails_at_start(bare):
    with pytest.raises(ConfigurationError, match="FUNCTION LOAD"):
        storage_from_string(f"async+rl://127.0.0.1:{bare.port}")
    storage = storage_from_string(f"async+rl://127.0.0.1:{bare.port}", load_functions=True)
    assert asyncio.run(MovingWindowRateLimiter(storage).hit(limits.parse("1/minute")))
