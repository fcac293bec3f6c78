"""What the sync and async storages share: the URI, which edition the server
has, the command for each limits call, and how rl's reply answers it.

Every limits call maps to one command (one round trip): a hit is the
limiter's own command, the statistics are `RL.PEEK` of it. The module's
commands are used where the server has rl loaded, the function library
(`FCALL`) where it does not.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.resources
import logging
import threading
import time
import urllib.parse
from dataclasses import dataclass

from limits.errors import ConfigurationError

# limits' `incr` has no limit: fixed windows count every hit, as limits' own
# Redis storage does, through RL.FIXED with the largest limit it takes.
FIXED_UNCAPPED = 10**15

MODULE = "module"
LIBRARY = "library"

LOG = logging.getLogger("limits_rl")


def _release() -> str:
    """rl's release this package belongs to (the same version)."""
    try:
        return importlib.metadata.version("limits-rl")
    except importlib.metadata.PackageNotFoundError:
        return "<version>"


HOW_TO_LOAD = (
    "rl is not loaded on the server at {where}: it has neither rl's module "
    "(RL.* commands) nor its function library (FCALL rl_slide). Load the "
    "module (loadmodule /path/to/librl.so in the server's config, or MODULE "
    "LOAD), or the library: redis-cli -x FUNCTION LOAD REPLACE < "
    "rl-{release}.lua (the release's file; from a checkout of rl, "
    "functions/rl.lua or make load-functions), on every primary of a cluster; "
    "or pass load_functions=True (Flask-Limiter: storage_options={{'load_functions': "
    "True}}) to let limits-rl load the library it ships"
)


def not_loaded(where: str, storage) -> ConfigurationError:
    """The error each call raises while the server has neither edition; the
    first one (until an edition is found again) is also logged, so the log
    says once, not per request, what to load and how."""
    text = HOW_TO_LOAD.format(where=where, release=_release())
    if not storage._told:
        storage._told = True
        LOG.warning("%s", text)
    return ConfigurationError(text)


def library_source() -> str:
    """The function library shipped in this package (functions/rl.lua of
    the rl release it was built from)."""
    return importlib.resources.files(__package__).joinpath("rl.lua").read_text(encoding="utf-8")


def redis_url(uri: str) -> str:
    """`rl://` -> `redis://`, `rls://` -> `rediss://`, any `async+` dropped."""
    scheme, rest = uri.split("://", 1)
    scheme = scheme.removeprefix("async+")
    plain = {"rl": "redis", "rls": "rediss", "rl+unix": "unix"}.get(scheme)
    if plain is None:
        raise ConfigurationError(f"limits-rl: unknown scheme in {uri!r}")
    return f"{plain}://{rest}"


def cluster_nodes(uri: str) -> tuple[list[tuple[str, int]], dict]:
    """`rl+cluster://[user:pass@]host:port,host:port` -> startup nodes and auth."""
    parsed = urllib.parse.urlparse(uri)
    auth = {}
    if parsed.username:
        auth["username"] = urllib.parse.unquote(parsed.username)
    if parsed.password:
        auth["password"] = urllib.parse.unquote(parsed.password)
    nodes = []
    for loc in parsed.netloc.rpartition("@")[2].split(","):
        sub = urllib.parse.urlparse(f"x://{loc.strip()}")
        if not sub.hostname or not sub.port:
            raise ConfigurationError(f"limits-rl: missing host or port in {loc!r} of {uri!r}")
        nodes.append((sub.hostname, sub.port))
    return nodes, auth


# The edition probe is a read through rl itself, on a key under the
# storage's prefix, so a user granted only rl's commands and keys
# (`+@ratelimit ~rl:*`) can make it: COMMAND is outside @ratelimit. It
# writes nothing. Without the module the server answers "unknown command"
# before any ACL check; a user refused RL.PEEK may still have the library.
PROBE_KEY = "limits-rl-probe"


def probe(key: str) -> tuple:
    return ("RL.PEEK", "SLIDE", key, 1, 1000)


def is_missing_command(err: Exception) -> bool:
    text = str(err)
    return "unknown command" in text.lower() or text.startswith("NOPERM")


def is_missing_function(err: Exception) -> bool:
    text = str(err).lower()
    return "function not found" in text or "unknown command" in text


def is_gone(err: Exception, edition: str) -> bool:
    """The server's answer when the edition a command was sent for is not
    there (the server changed under the app): the module's command is
    unknown, or the library's function (or FCALL itself)."""
    text = str(err).lower()
    if edition == MODULE:
        return "unknown command" in text
    return "function not found" in text or "unknown command" in text


def is_library_present(err: Exception) -> bool:
    return "already exists" in str(err).lower()


class _Outcome:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class SharedLookup:
    """One edition look-up at a time per storage: the calls that need it while
    one runs (a burst of first requests, or of requests that all met the
    server's change) wait for its outcome, edition or error, instead of
    sending probes of their own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: _Outcome | None = None

    def run(self, lookup):
        with self._lock:
            running, lead = self._running, self._running is None
            if lead:
                running = self._running = _Outcome()
        if lead:
            try:
                running.value = lookup()
            except BaseException as err:  # noqa: BLE001 - handed to every waiting call
                running.error = err
            finally:
                with self._lock:
                    self._running = None
                running.done.set()
        else:
            running.done.wait()
        if running.error is not None:
            raise running.error
        return running.value


class SharedAsyncLookup:
    """SharedLookup for the asyncio storages: the calls waiting share one task."""

    def __init__(self) -> None:
        self._running: asyncio.Future | None = None

    async def run(self, lookup):
        running = self._running
        if running is None or running.get_loop() is not asyncio.get_running_loop():
            running = self._running = asyncio.ensure_future(lookup())

            def forget(done):
                if self._running is done:
                    self._running = None

            running.add_done_callback(forget)
        # A waiting call that is cancelled leaves the look-up to the others.
        return await asyncio.shield(running)


@dataclass
class Commands:
    """The command for each call, in the edition the server has."""

    edition: str

    def call(self, name: str, key: str, *args) -> tuple:
        if self.edition == MODULE:
            return (f"RL.{name}", key, *args)
        return ("FCALL", f"rl_{name.lower()}", 1, key, *args)

    def peek(self, limiter: str, key: str, *args) -> tuple:
        if self.edition == MODULE:
            return ("RL.PEEK", limiter, key, *args)
        return ("FCALL_RO", "rl_peek", 1, key, limiter, *args)

    # limits' calls, each one command.
    def acquire_entry(self, key, limit, expiry, amount):
        return self.call("SLIDE", key, limit, expiry * 1000, "COST", amount)

    def moving_window(self, key, limit, expiry):
        return self.peek("SLIDE", key, limit, expiry * 1000, "OLDEST")

    def acquire_sliding(self, key, limit, expiry, amount):
        return self.call("BUCKETS", key, limit, expiry * 1000, "COST", amount)

    def sliding_window(self, key, expiry):
        return self.peek("BUCKETS", key, FIXED_UNCAPPED, expiry * 1000, "OLDEST")

    def incr(self, key, expiry, amount):
        return self.call("FIXED", key, FIXED_UNCAPPED, expiry * 1000, "COST", amount)


def counted(reply, limit: int) -> int:
    """What the window counts, from a peek of one unit: `remaining` is what
    one more would leave when it fits, what is left when it does not."""
    allowed, remaining = int(reply[0]), int(reply[1])
    return limit - remaining - 1 if allowed else limit - remaining


def moving_window(reply, limit: int, expiry: int) -> tuple[float, int]:
    """limits' (start of the window, entries in it) from `RL.PEEK SLIDE ...
    OLDEST`.

    The start is the oldest counted entry's time (limits' reset is start +
    expiry): OLDEST's fifth integer is the wait until that entry leaves,
    full window or not; when the window is empty, now."""
    now = time.time()
    count = counted(reply, limit)
    if count == 0:
        return now, 0
    return now + int(reply[4]) / 1000 - expiry, count


def sliding_window(reply, expiry: int) -> tuple[int, float, int, float]:
    """limits' (previous count, previous ttl, current count, current ttl)
    from `RL.PEEK BUCKETS` with an uncapped limit: rl's buckets count the
    exact window, so everything is "current" and nothing is weighted."""
    count = counted(reply, FIXED_UNCAPPED)
    if count == 0:
        return 0, 0.0, 0, 0.0
    # limits reads the reset as now + current_ttl % expiry: the moment the
    # oldest counted bucket leaves (OLDEST's fifth integer).
    reset_s = min(int(reply[4]) / 1000, expiry - 0.001)
    return 0, 0.0, count, reset_s


def incr(reply, amount: int) -> int:
    """The counter after a fixed-window hit (`RL.FIXED` uncapped)."""
    allowed, remaining = int(reply[0]), int(reply[1])
    count = FIXED_UNCAPPED - remaining
    return count if allowed else count + amount
