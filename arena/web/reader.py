"""The web's access to the store's read queries (arena.store.browse): a `Reader` gives each
worker thread its own read-only Store, since a SQLite connection belongs to the thread that made
it. The queries and their records are the store's."""

from __future__ import annotations

import threading
from pathlib import Path

from arena.store import Store
from arena.store.browse import BrowseQueries


class Reader:
    """Read-only Stores, one per thread, opened on first use (a SQLite connection belongs to the
    thread that made it). Opening one checks the database (exists, is Arena's, schema not newer
    than this Arena's): create_app opens one at once so that a bad --db fails before serving."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        self._local = threading.local()

    def store(self) -> Store:
        store = getattr(self._local, "store", None)
        if store is None:
            store = Store(self.path, readonly=True)
            self._local.store = store
        return store

    def queries(self) -> BrowseQueries:
        return BrowseQueries(self.store())

    def close(self) -> None:
        """Let go of every thread's connection: dropping the thread-local map frees them, and a
        freed sqlite3 connection closes itself (close() itself only works on its own thread)."""
        self._local = threading.local()
