"""The asyncio storages, on `limits.aio`: `async+rl://`, `async+rls://`,
`async+rl+cluster://`, over redis-py's asyncio clients. Same commands and
replies as the sync ones (limits_rl.storage)."""

from __future__ import annotations

import time

import redis
import redis.asyncio
import redis.asyncio.cluster
from limits.aio.storage import MovingWindowSupport, SlidingWindowCounterSupport, Storage

from . import _core
from ._core import LIBRARY, MODULE, Commands
from .storage import RLClusterStorage, RLStorage


class RLAsyncStorage(Storage, MovingWindowSupport, SlidingWindowCounterSupport):
    """Async rate limit storage on rl. Parameters as :class:`limits_rl.RLStorage`.

    The edition is found when the storage is made, over a short-lived sync
    connection (so a server with neither edition fails at start); if the
    server cannot be reached then, with the first call.
    """

    STORAGE_SCHEME = ["async+rl", "async+rls", "async+rl+unix"]
    PREFIX = RLStorage.PREFIX
    _sync_storage = RLStorage

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
        self._lookup = _core.SharedAsyncLookup()
        self._told = False
        self._forgotten = False
        probe = self._sync_storage(uri.removeprefix("async+"), key_prefix, load_functions, **options)
        try:
            self._commands = probe._edition()
        except redis.ConnectionError:
            pass
        finally:
            probe.storage.close()

    def _connect(self, uri: str, **options):
        return redis.asyncio.from_url(_core.redis_url(uri), **options)

    @property
    def base_exceptions(self):
        return redis.RedisError

    async def _has_module(self) -> bool:
        try:
            await self.storage.execute_command(*_core.probe(self.prefixed_key(_core.PROBE_KEY)))
            return True
        except redis.ResponseError as err:
            if _core.is_missing_command(err):
                return False
            raise

    async def _has_library(self) -> bool:
        try:
            await self.storage.execute_command("FCALL_RO", "rl_version", 0)
            return True
        except redis.ResponseError as err:
            if _core.is_missing_function(err):
                return False
            raise

    async def _load_library(self) -> None:
        try:
            await self.storage.function_load(_core.library_source())
        except redis.ResponseError as err:
            if not _core.is_library_present(err):
                raise

    def _where(self) -> str:
        return RLStorage._where(self)

    async def _edition(self) -> Commands:
        """As the sync storage's: found once, the look-up shared, found again when gone."""
        commands = self._commands
        if commands is None:
            commands = await self._lookup.run(self._find)
        return commands

    async def _find(self) -> Commands:
        if self._commands is not None:
            return self._commands
        if await self._has_module():
            edition = MODULE
        elif await self._has_library():
            edition = LIBRARY
        elif self.load_functions:
            await self._load_library()
            edition = LIBRARY
        else:
            raise _core.not_loaded(self._where(), self)
        self._told = False
        self._commands = Commands(edition)
        return self._commands

    async def _rl(self, build):
        """As the sync storage's `_rl`: sent again once in the edition found
        again when the server answers that its edition is gone."""
        commands = await self._edition()
        try:
            return await self.storage.execute_command(*build(commands))
        except redis.ResponseError as err:
            if not _core.is_gone(err, commands.edition):
                raise
        if self._commands is commands:
            self._forgotten = True
            self._commands = None
        return await self.storage.execute_command(*build(await self._edition()))

    def prefixed_key(self, key: str) -> str:
        return f"{self.key_prefix}:{key}"

    async def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        reply = await self._rl(lambda c: c.acquire_entry(self.prefixed_key(key), limit, expiry, amount))
        return bool(int(reply[0]))

    async def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        reply = await self._rl(lambda c: c.moving_window(self.prefixed_key(key), limit, expiry))
        return _core.moving_window(reply, limit, expiry)

    async def acquire_sliding_window_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        reply = await self._rl(lambda c: c.acquire_sliding(self.prefixed_key(key), limit, expiry, amount))
        return bool(int(reply[0]))

    async def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        reply = await self._rl(lambda c: c.sliding_window(self.prefixed_key(key), expiry))
        return _core.sliding_window(reply, expiry)

    async def clear_sliding_window(self, key: str, expiry: int) -> None:
        await self.clear(key)

    async def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        reply = await self._rl(lambda c: c.incr(self.prefixed_key(key), expiry, amount))
        return _core.incr(reply, amount)

    async def get(self, key: str) -> int:
        return int(await self.storage.get(self.prefixed_key(key)) or 0)

    async def get_expiry(self, key: str) -> float:
        return max(await self.storage.pttl(self.prefixed_key(key)), 0) / 1000 + time.time()

    async def clear(self, key: str) -> None:
        await self.storage.delete(self.prefixed_key(key))

    async def check(self) -> bool:
        try:
            return bool(await self.storage.ping())
        except Exception:  # noqa: BLE001
            return False

    async def reset(self) -> int | None:
        return await _delete_matching(self.storage, self.prefixed_key("*"))


async def _delete_matching(client, pattern: str) -> int:
    deleted, batch = 0, []
    async for key in client.scan_iter(match=pattern, count=1000):
        batch.append(key)
        if len(batch) == 500:
            deleted += await client.delete(*batch)
            batch = []
    if batch:
        deleted += await client.delete(*batch)
    return deleted


class RLAsyncClusterStorage(RLAsyncStorage):
    """Async rate limit storage on rl in a Cluster (``async+rl+cluster://``)."""

    STORAGE_SCHEME = ["async+rl+cluster"]
    _sync_storage = RLClusterStorage

    def _connect(self, uri: str, **options):
        nodes, auth = _core.cluster_nodes(uri)
        client = redis.asyncio.cluster.RedisCluster(
            startup_nodes=[redis.asyncio.cluster.ClusterNode(h, p) for h, p in nodes], **{**auth, **options}
        )
        parser = client.commands_parser
        asked = parser.get_keys

        async def get_keys(*args):
            # As in the sync cluster storage: no COMMAND GETKEYS per FCALL.
            if str(args[0]).upper() in ("FCALL", "FCALL_RO"):
                return list(args[3 : 3 + int(args[2])])
            return await asked(*args)

        parser.get_keys = get_keys
        return client

    async def _has_module(self) -> bool:
        await self.storage.initialize()
        parser = self.storage.commands_parser
        if self._forgotten:
            # As the sync cluster storage: COMMAND read again once the server changed.
            await parser.initialize()
        return "rl.slide" in parser.commands

    def _where(self) -> str:
        return RLClusterStorage._where(self)
