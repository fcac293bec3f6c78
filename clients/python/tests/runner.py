"""Runs the limits-rl tests and limits' own strategy tests, and prints the
closing line make test counts: `clients/python: N passed, N failed, N skipped`.

limits' tests come from its source distribution (fetched from PyPI by name),
for the installed limits version, unpacked under tests/.upstream; their
storages are pointed at rl:// and async+rl:// (upstream/utils.py and
upstream/conftest.py stand in for upstream's docker fixtures). The tests
that cannot apply to rl are skipped, with why (the list and
why are in docs/clients.md)."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import xml.etree.ElementTree as ET
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.path.join(HERE, ".upstream")
PY = sys.executable

# Upstream tests that do not apply to rl, and why (docs/clients.md lists them).
NOT_APPLICABLE = {
    "test_moving_window_huge_cost": "a cost of 999,999 in one hit; RL.SLIDE takes at most 100 per call",
    "test_sliding_window_counter_previous_window": "asserts limits' weighted estimate; rl counts the exact window",
    "test_sliding_window_counter_stats": "asserts the reset as the moment the first hit's unit frees (58 s, within 0.58 s); "
    "rl reports when the oldest counted bucket leaves (RL.PEEK BUCKETS ... OLDEST), up to one 1 s bucket later",
}


def upstream_tests() -> str:
    """limits' tests package for the installed version, ready to run."""
    ver = version("limits")
    src = os.path.join(UPSTREAM, f"limits-{ver}")
    if not os.path.isdir(src):
        os.makedirs(UPSTREAM, exist_ok=True)
        # The sdist's address from PyPI's simple index (PEP 691 JSON), the
        # one pip reads: `pip download --no-binary :all:` would first build
        # limits' build backend and its build dependencies from source
        # (minutes, only to read metadata).
        index = urllib.request.Request("https://pypi.org/simple/limits/",
                                       headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(index, timeout=60) as reply:
            sdist = next(f for f in json.load(reply)["files"] if f["filename"] == f"limits-{ver}.tar.gz")
        archive = os.path.join(UPSTREAM, sdist["filename"])
        with urllib.request.urlopen(sdist["url"], timeout=120) as reply, open(archive + ".part", "wb") as out:
            shutil.copyfileobj(reply, out)
        with open(archive + ".part", "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != sdist["hashes"]["sha256"]:
                raise RuntimeError(f"{sdist['url']}: sha256 differs from PyPI's")
        os.replace(archive + ".part", archive)
        with tarfile.open(archive) as tar:
            tar.extractall(UPSTREAM)  # noqa: S202 - limits' own sdist from PyPI
    run = os.path.join(UPSTREAM, "run", "tests")
    shutil.rmtree(os.path.dirname(run), ignore_errors=True)
    os.makedirs(os.path.join(run, "aio"))
    for name in ("__init__.py", "test_strategy.py", "aio/__init__.py", "aio/test_strategy.py"):
        shutil.copyfile(os.path.join(src, "tests", name), os.path.join(run, name))
    shutil.copyfile(os.path.join(src, "tests", "utils.py"), os.path.join(run, "utils_upstream.py"))
    for name in ("utils.py", "conftest.py"):
        shutil.copyfile(os.path.join(HERE, "upstream", name), os.path.join(run, name))
    return os.path.dirname(run)


def pytest(args, cwd, junit) -> None:
    env = dict(os.environ, RL_PY_TESTS=HERE, RL_NOT_APPLICABLE=json.dumps(NOT_APPLICABLE))
    env.pop("RL_UPSTREAM_URIS", None)
    subprocess.run([PY, "-m", "pytest", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
                    "-o", "asyncio_default_fixture_loop_scope=function",
                    "-W", "ignore::pytest.PytestUnknownMarkWarning", "-rfE", "--junitxml", junit, *args],
                   cwd=cwd, env=env)


def counts(junit):
    if not os.path.exists(junit):
        return 0, 1, 0  # pytest did not get as far as reporting: a failure
    suite = ET.parse(junit).getroot()
    suite = suite.find("testsuite") if suite.tag == "testsuites" else suite
    total, failures, errors, skipped = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    return total - failures - errors - skipped, failures + errors, skipped


def main() -> int:
    work = os.path.join(UPSTREAM, "junit")
    os.makedirs(work, exist_ok=True)
    own, up = os.path.join(work, "own.xml"), os.path.join(work, "upstream.xml")
    for f in (own, up):
        if os.path.exists(f):
            os.remove(f)
    pytest([HERE, "--ignore", os.path.join(HERE, "upstream"), "--ignore", UPSTREAM, *sys.argv[1:]], HERE, own)
    p, f, s = counts(own)
    try:
        root = upstream_tests()
    except Exception as err:  # noqa: BLE001 - the download or unpack failed
        print(f"clients/python: limits' tests could not be prepared: {err}")
        p2, f2, s2 = 0, 1, 0
    else:
        pytest(["-rs", "tests/test_strategy.py", "tests/aio/test_strategy.py"], root, up)
        p2, f2, s2 = counts(up)
    print(f"clients/python: own tests {p} passed, {f} failed, {s} skipped; "
          f"limits' strategy tests {p2} passed, {f2} failed, {s2} skipped")
    print(f"clients/python: {p + p2} passed, {f + f2} failed, {s + s2} skipped")
    return 1 if f + f2 else 0


if __name__ == "__main__":
    sys.exit(main())
