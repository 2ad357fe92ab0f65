"""One SQLite connection shared across threads, guarded by one lock."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from store.chain_head import HeadFile, tip
from store.errors import LibrarianError
from store.migrations import MIGRATIONS, migrate


class LibraryDatabaseError(LibrarianError):
    """The library's database cannot be opened or read (damaged, not SQLite, unreadable)."""


class ReadOnlyError(LibrarianError):
    """A change was asked of a library opened read-only."""


class Database:
    """WAL, busy_timeout, and `BEGIN IMMEDIATE` for every write transaction.

    `read_only` opens the file with SQLite's `mode=ro` (no migration, no journal change,
    nothing created: a missing or empty file reads as an empty library) and refuses
    `write()`. `head`, the library's head file, is kept at the log's tip after every commit
    that appended events."""

    def __init__(
        self, path: Path | str, *, read_only: bool = False, head: Path | None = None
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.lock = threading.RLock()
        self.head = HeadFile(head) if head is not None and not read_only else None
        try:
            self.conn = self._open_file() if self.read_only else self._open_rw()
        except sqlite3.DatabaseError as exc:
            raise LibraryDatabaseError(f"{self.path} cannot be read: {exc}") from exc
        self.conn.row_factory = sqlite3.Row
        try:
            self._configure()
            if self.head is not None:
                self.head.record_if_missing(self.conn)
        except BaseException as exc:
            self.conn.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise LibraryDatabaseError(f"{self.path} cannot be read: {exc}") from exc
            raise

    def _open_rw(self) -> sqlite3.Connection:
        return sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=10.0
        )

    def _open_file(self) -> sqlite3.Connection:
        """Read-only; an absent or empty file is an empty library, in memory."""
        file = Path(self.path)
        if self.path == ":memory:" or not file.exists() or file.stat().st_size == 0:
            return sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        uri = "file:" + quote(str(file.resolve())) + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA user_version").fetchone()
        except sqlite3.OperationalError as exc:
            conn.close()
            # A WAL database in a folder we may not write to cannot set up its shared memory
            # (SQLITE_READONLY_CANTINIT; on a read-only file system, where even root cannot
            # create the -shm file, SQLITE_CANTOPEN); with no write-ahead log left over, the
            # file alone is the whole database.
            name = exc.sqlite_errorname
            if not (name.startswith("SQLITE_READONLY") or name == "SQLITE_CANTOPEN"):
                raise
            wal = Path(self.path + "-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise LibraryDatabaseError(
                    f"{self.path} has changes in its write-ahead log that only a process"
                    " allowed to write the library folder can read"
                ) from exc
            conn = sqlite3.connect(
                uri + "&immutable=1", uri=True, check_same_thread=False, isolation_level=None
            )
        return conn

    def _configure(self) -> None:
        if self.read_only:
            self._check_schema()
            return
        if self.path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        migrate(self.conn)

    def _check_schema(self) -> None:
        self.conn.execute("PRAGMA busy_timeout=10000")
        version = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if version == 0 and not self.conn.execute("SELECT 1 FROM sqlite_master").fetchone():
            self.conn.close()  # an empty database file: an empty library, in memory
            self.conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            migrate(self.conn)
        elif version < len(MIGRATIONS):
            raise LibraryDatabaseError(
                f"{self.path} has schema version {version}, this librarian reads"
                f" {len(MIGRATIONS)}: open it once with a command that writes (e.g. `scan`)"
                " to upgrade it"
            )

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: all or nothing, other writers wait (not fail)."""
        if self.read_only:
            raise ReadOnlyError("the library is open read-only: nothing was changed")
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
                end = tip(self.conn) if self.head is not None else None
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
            if self.head is not None and end is not None:
                self.head.advance(self.conn, end)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            yield self.conn

    def close(self) -> None:
        with self.lock:
            self.conn.close()
