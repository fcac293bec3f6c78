"""rl as a storage for limits (Flask-Limiter, slowapi).

Importing this package registers the schemes `rl://`, `rls://`,
`rl+unix://`, `rl+cluster://` and their asyncio forms `async+rl://`,
`async+rls://`, `async+rl+unix://`, `async+rl+cluster://` with limits:
import it before the storage URI is resolved (before Flask-Limiter's
`init_app`, slowapi's `Limiter(...)`).
"""

from ._core import library_source
from .aio import RLAsyncClusterStorage, RLAsyncStorage
from .storage import RLClusterStorage, RLStorage

__all__ = [
    "RLAsyncClusterStorage",
    "RLAsyncStorage",
    "RLClusterStorage",
    "RLStorage",
    "library_source",
]
