"""Starts rl's two deployments for limits' own strategy tests (tests/run
copies this file in place of upstream's conftest.py): Redis 7.0 with the
module and Valkey 9.1 with only the function library, emptied before each
test."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.environ["RL_PY_TESTS"])

import limits_rl  # noqa: E402,F401  (registers rl://, async+rl://)
from servers import Server  # noqa: E402

_servers = {}


def pytest_configure(config):
    if "RL_UPSTREAM_URIS" not in os.environ:
        for name in ("module", "library"):
            _servers[name] = Server(name)
        os.environ["RL_UPSTREAM_URIS"] = ",".join(
            f"{name}-{'redis7' if name == 'module' else 'valkey9'}=rl://127.0.0.1:{s.port}"
            for name, s in _servers.items())


def pytest_unconfigure(config):
    for s in _servers.values():
        s.stop()


@pytest.fixture(autouse=True)
def _empty():
    for s in _servers.values():
        s.client().flushall()
    yield


def pytest_collection_modifyitems(config, items):
    # Upstream tests that cannot apply to rl (runner.py says why).
    for name, why in json.loads(os.environ.get("RL_NOT_APPLICABLE", "{}")).items():
        for item in items:
            if item.originalname == name:
                item.add_marker(pytest.mark.skip(reason=f"not applicable to rl: {why}"))
