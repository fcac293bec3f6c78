import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from servers import Server  # noqa: E402

# The two deployments every test runs on: Redis 7.0 with the module, Valkey
# 9.1 with only the function library.
EDITIONS = ["module", "library"]


@pytest.fixture(scope="session", params=EDITIONS)
def server(request):
    s = Server(request.param)
    yield s
    s.stop()


@pytest.fixture(scope="session", params=EDITIONS)
def cluster(request):
    s = Server(request.param, cluster=True)
    yield s
    s.stop()


@pytest.fixture
def bare():
    s = Server("bare")
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _empty(request):
    for name in ("server", "cluster"):
        if name in request.fixturenames:
            request.getfixturevalue(name).client().flushall()
    yield
