"""limits storages on rl: `rl://`, `rls://` (TLS), `rl+cluster://`.

Defining these classes registers their schemes with limits (its storage
registry is filled as storage classes are defined), so `import limits_rl`
must run before a URI is resolved.
"""

from __future__ import annotations

import time

import redis
import redis.cluster
from limits.errors import ConfigurationError
from limits.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage

from . import _core
from ._core import LIBRARY, MODULE, Commands


class RLStorage(Storage, MovingWindowSupport, SlidingWindowCounterSupport):
    """Rate limit storage on rl, over redis-py.

    :param uri: ``rl://[user:password@]host:port[/db]``, ``rls://...`` (TLS),
     ``rl+unix:///path/to/socket``
    :param key_prefix: prepended to every key (``rl:limits:``): under ``rl:``, so
     the ACL recipe ``+@ratelimit ~rl:*`` covers it, and apart from limits' own
     Redis storage (``LIMITS:``), whose moving window is a list where rl's is a
     sorted set
    :param load_functions: when the server has neither rl's module nor its
     function library, load the library this package ships (``FUNCTION LOAD``)
     instead of failing. Off by default
    :param wrap_exceptions: raise :class:`limits.errors.StorageError` for
     server errors, as limits' own storages do
    :param options: passed to :func:`redis.from_url`
    """

    STORAGE_SCHEME = ["rl", "rls", "rl+unix"]
    PREFIX = "rl:limits"

    def __init__(
        self,
        uri: str,
        key_prefix: str = PREFIX,
        load_functions: bool = False,
        wrap_exceptions: bool = False,
        **options,
    ) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.key_prefix = key_prefix
        self.load_functions = load_functions
        self.storage = self._connect(uri, **options)
        self._commands: Commands | None = None
        self._lookup = _core.SharedLookup()
        self._told = False  # logged that rl is not loaded, since an edition was last found
        self._forgotten = False  # an edition was found, then found gone
        try:
            self._edition()
        except redis.ConnectionError:
            # Unreachable at start: limits' own storages start anyway; the
            # check runs with the first call (and fails it, never admits).
            pass

    def _connect(self, uri: str, **options):
        return redis.from_url(_core.redis_url(uri), **options)

    @property
    def base_exceptions(self):
        return redis.RedisError

    # ---------------------------------------------------------- edition

    def _has_module(self) -> bool:
        try:
            self.storage.execute_command(*_core.probe(self.prefixed_key(_core.PROBE_KEY)))
            return True
        except redis.ResponseError as err:
            if _core.is_missing_command(err):
                return False
            raise

    def _has_library(self) -> bool:
        try:
            self.storage.execute_command("FCALL_RO", "rl_version", 0)
            return True
        except redis.ResponseError as err:
            if _core.is_missing_function(err):
                return False
            raise

    def _load_library(self) -> None:
        try:
            self.storage.function_load(_core.library_source())
        except redis.ResponseError as err:
            if not _core.is_library_present(err):
                raise

    def _where(self) -> str:
        kw = self.storage.connection_pool.connection_kwargs
        return f"{kw.get('host', kw.get('path'))}:{kw.get('port', '')}"

    def _edition(self) -> Commands:
        """Which edition to call: found once per storage (the calls that need
        it meanwhile share the look-up), and again when it is found gone."""
        commands = self._commands
        if commands is None:
            commands = self._lookup.run(self._find)
        return commands

    def _find(self) -> Commands:
        if self._commands is not None:  # found by a look-up that ended as this one began
            return self._commands
        if self._has_module():
            edition = MODULE
        elif self._has_library():
            edition = LIBRARY
        elif self.load_functions:
            self._load_library()
            edition = LIBRARY
        else:
            raise _core.not_loaded(self._where(), self)
        self._told = False
        self._commands = Commands(edition)
        return self._commands

    def _rl(self, build):
        """Sends the command `build` makes for the server's edition. When the
        server answers that this edition is not there (it was restarted with
        the other one, or with neither), the edition is found again, once for
        all the calls that met that answer, and the command is sent again in
        it; with neither, ConfigurationError saying how to load rl."""
        commands = self._edition()
        try:
            return self.storage.execute_command(*build(commands))
        except redis.ResponseError as err:
            if not _core.is_gone(err, commands.edition):
                raise
        if self._commands is commands:  # unless another call found it again
            self._forgotten = True
            self._commands = None
        return self.storage.execute_command(*build(self._edition()))

    @property
    def edition(self) -> str:
        """``"module"`` or ``"library"``: which of rl's editions this storage calls."""
        return self._edition().edition

    # ---------------------------------------------------------- limits

    def prefixed_key(self, key: str) -> str:
        return f"{self.key_prefix}:{key}"

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False  # limits' answer; rl refuses the call as an error
        reply = self._rl(lambda c: c.acquire_entry(self.prefixed_key(key), limit, expiry, amount))
        return bool(int(reply[0]))

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        reply = self._rl(lambda c: c.moving_window(self.prefixed_key(key), limit, expiry))
        return _core.moving_window(reply, limit, expiry)

    def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        reply = self._rl(lambda c: c.acquire_sliding(self.prefixed_key(key), limit, expiry, amount))
        return bool(int(reply[0]))

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        reply = self._rl(lambda c: c.sliding_window(self.prefixed_key(key), expiry))
        return _core.sliding_window(reply, expiry)

    def clear_sliding_window(self, key: str, expiry: int) -> None:
        self.clear(key)

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        reply = self._rl(lambda c: c.incr(self.prefixed_key(key), expiry, amount))
        return _core.incr(reply, amount)

    def get(self, key: str) -> int:
        return int(self.storage.get(self.prefixed_key(key)) or 0)

    def get_expiry(self, key: str) -> float:
        return max(self.storage.pttl(self.prefixed_key(key)), 0) / 1000 + time.time()

    def clear(self, key: str) -> None:
        self.storage.delete(self.prefixed_key(key))

    def check(self) -> bool:
        try:
            return bool(self.storage.ping())
        except Exception:  # noqa: BLE001 - limits' contract: healthy or not
            return False

    def reset(self) -> int | None:
        """Deletes every key under the prefix (SCAN, then DEL in batches)."""
        return _delete_matching(self.storage, self.prefixed_key("*"))


def _delete_matching(client, pattern: str) -> int:
    deleted, batch = 0, []
    for key in client.scan_iter(match=pattern, count=1000):
        batch.append(key)
        if len(batch) == 500:
            deleted += client.delete(*batch)
            batch = []
    if batch:
        deleted += client.delete(*batch)
    return deleted


class RLClusterStorage(RLStorage):
    """Rate limit storage on rl in a Redis or Valkey Cluster, over redis-py's
    cluster client.

    :param uri: ``rl+cluster://[user:password@]host:port[,host:port...]``
    :param options: passed to :class:`redis.cluster.RedisCluster`

    Every limit is one key, so no hash tags are needed. With the function
    library, load it on every primary (``load_functions=True`` does that).
    """

    STORAGE_SCHEME = ["rl+cluster"]

    def _connect(self, uri: str, **options):
        nodes, auth = _core.cluster_nodes(uri)
        client = redis.cluster.RedisCluster(
            startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in nodes], **{**auth, **options}
        )
        _keys_of_fcall_locally(client)
        return client

    def _has_module(self) -> bool:
        # The cluster client read COMMAND from a node when it started; read
        # it again once the server has changed since.
        parser = self.storage.commands_parser
        if self._forgotten:
            parser.initialize(self.storage)
        return "rl.slide" in parser.commands

    def _where(self) -> str:
        return ",".join(f"{n.host}:{n.port}" for n in self.storage.get_nodes())


def _keys_of_fcall_locally(client) -> None:
    """redis-py's cluster client asks a node (COMMAND GETKEYS) for the keys of
    every FCALL, a second round trip per hit; the keys are the `numkeys`
    arguments after the function's name, as for EVAL, which it reads itself."""
    parser = client.commands_parser
    asked = parser.get_keys

    def get_keys(redis_conn, *args):
        if str(args[0]).upper() in ("FCALL", "FCALL_RO"):
            return list(args[3 : 3 + int(args[2])])
        return asked(redis_conn, *args)

    parser.get_keys = get_keys
