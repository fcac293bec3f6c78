"""Stands in for limits' tests/utils.py when its strategy tests run against
rl (tests/run copies this file in place of upstream's). The storages are
rl's two deployments, started by the conftest beside it; the timing helpers
(fixed_start, window, ...) are upstream's own, read from its utils.py."""

from __future__ import annotations

import ast
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
URIS = dict(item.split("=", 1) for item in os.environ["RL_UPSTREAM_URIS"].split(","))

# upstream's helpers, executed from its own source (the file is kept beside
# this one as utils_upstream.py), without its storage table (docker fixtures).
_HELPERS = {"fixed_start", "timestamp_based_key_ttl", "async_fixed_start", "window", "async_window"}
_source = open(os.path.join(HERE, "utils_upstream.py")).read()
_tree = ast.parse(_source)
_tree.body = [
    n for n in _tree.body
    if isinstance(n, (ast.Import, ast.ImportFrom)) and "lazy_fixtures" not in ast.unparse(n)
    or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in _HELPERS
]
exec(compile(_tree, os.path.join(HERE, "utils_upstream.py"), "exec"))


def _params(prefix: str):
    return [pytest.param(f"{prefix}{uri.split('://', 1)[1]}" if prefix else uri, {}, None, id=name)
            for name, uri in URIS.items()]


all_storage = pytest.mark.parametrize("uri, args, fixture", _params(""))
moving_window_storage = all_storage
sliding_window_counter_storage = all_storage
async_all_storage = pytest.mark.parametrize("uri, args, fixture", _params("async+rl://"))
async_moving_window_storage = async_all_storage
async_sliding_window_counter_storage = async_all_storage
