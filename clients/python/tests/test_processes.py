"""8 processes sharing one limit: exactly `limit` admitted in the window,
for every strategy, on both editions."""

import multiprocessing

import limits
import pytest

PROCESSES, TRIES, LIMIT = 8, 40, 100
STRATEGIES = ["fixed-window", "moving-window", "sliding-window-counter"]


def hammer(uri: str, strategy: str, start, results) -> None:
    import limits_rl  # noqa: F401  (each process registers rl:// itself)
    from limits.storage import storage_from_string
    from limits.strategies import STRATEGIES as BY_NAME

    limiter = BY_NAME[strategy](storage_from_string(uri))
    item = limits.parse(f"{LIMIT}/hour")
    start.wait()
    results.put(sum(limiter.hit(item, "shared") for _ in range(TRIES)))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_eight_processes_get_exactly_the_limit(server, strategy):
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=hammer, args=(server.uri, strategy, start, results))
             for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    admitted = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    # 320 tries for 100 places: every process raced for them.
    assert sum(admitted) == LIMIT, admitted
