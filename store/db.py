"""One SQLite connection shared across threads, guarded by one lock."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from store.migrations import migrate


class Database:
    """WAL, busy_timeout, and `BEGIN IMMEDIATE` for every write transaction."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        self._configure()
        migrate(self.conn)

    def _configure(self) -> None:
        if self.path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: all or nothing, other writers wait (not fail)."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            yield self.conn

    def close(self) -> None:
        with self.lock:
            self.conn.close()
