"""The kernel every domain module takes: the database, the config, the clock, who acts, the
event writer and the vectors; nothing about skills, sessions or patterns.

`store.library.Library` (the entry object of the CLI, the app and the MCP server) opens one
and hands it to the domain modules; they never see `Library`, so nothing under `store/` calls
back up into it. Per-library caches a domain keeps (the dependency graph, pattern memory, the
retrieval log) live in `service`, keyed by the function that builds them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from store import events
from store.config import Config
from store.db import Database
from store.embed import Embedder, FastEmbedder
from store.errors import LibrarianError
from store.identity import resolve_actor
from store.models import Event
from store.paths import LibraryPaths
from store.vectors import Vectors

Clock = Callable[[], str]
T = TypeVar("T")


class LibraryError(LibrarianError):
    """A problem a person can act on (bad argument, unknown skill, broken file)."""


class Kernel:
    """One open library directory: SQLite event log and projections, config, vectors."""

    def __init__(
        self,
        root: Path,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """Open (and, unless `read_only`, create or upgrade) the library at `root`.

        Read-only opens create, migrate and rewrite nothing: the database is opened with
        SQLite's `mode=ro`, the vector index is kept in memory, and every write raises
        `ReadOnlyError`. Without a `clock`, the library's own: `clock.start` in its config
        (the demo's date), else the real time."""
        self.paths = LibraryPaths(root)
        self.clock: Clock = clock or events.now_iso
        self.read_only = read_only
        if not read_only:
            if not self.paths.writable():
                raise LibraryError(
                    f"{root} is read-only for you: this command changes the library"
                    " (commands that only read, and the app, still open it)"
                )
            self.paths.ensure()
        self.config = Config(self.paths.config, create=not read_only)
        self.db = Database(self.paths.db, read_only=read_only, head=self.paths.head)
        if clock is None:
            self.clock = self._own_clock()
        self.vectors = Vectors(
            self.db,
            self.paths.vectors,
            str(self.config.get("embedding.model")),
            self._configured_embedder,
            read_only=read_only,
        )
        if embedder is not None:
            self.vectors.use(embedder)
        self._actor = ""
        #: Bumped by every event that may change what pattern memory serves.
        self.memory_epoch = 0
        self._services: dict[Callable[[Kernel], Any], Any] = {}
        self._on_close: list[Callable[[], object]] = []

    def _own_clock(self) -> Clock:
        """The real time, unless the config sets `clock.start`: a library that lives at its
        own date (the demo) reads that moment, or just after its newest event when that is
        later, and moves on in real time from there."""
        start = str(self.config.get("clock.start", "") or "")
        if not start:
            return events.now_iso
        try:
            moment = datetime.fromisoformat(start)
        except ValueError as exc:
            raise LibraryError(f"clock.start: not an ISO 8601 time: {start!r}") from exc
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        with self.db.read() as conn:
            row = conn.execute("SELECT ts FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        if row is not None:
            moment = max(moment, datetime.fromisoformat(row[0]) + timedelta(microseconds=1))
        return events.running_clock(moment.isoformat(timespec="microseconds"))

    def _configured_embedder(self) -> Embedder:
        return FastEmbedder(
            self.paths.models,
            model_name=str(self.config.get("embedding.model")),
            batch_size=int(self.config.get("embedding.batch_size")),
            max_length=int(self.config.get("embedding.max_length")),
        )

    @property
    def embedder(self) -> Embedder:
        return self.vectors.embedder

    @property
    def model_name(self) -> str:
        return self.vectors.model_name

    @property
    def actor(self) -> str:
        if not self._actor:
            self._actor = resolve_actor(
                str(self.config.get("reviewer.name") or ""),
                str(self.config.get("reviewer.email") or ""),
            )
        return self._actor

    @contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Record events as someone else for a while (the demo's scripted history)."""
        previous, self._actor = self._actor, actor
        try:
            yield
        finally:
            self._actor = previous

    def now(self) -> datetime:
        """The library's clock as a datetime (tests and the demo run on a fixed clock)."""
        return datetime.fromisoformat(self.clock())

    def append_event(
        self, conn: sqlite3.Connection, type_: str, subject: str, payload: dict[str, Any]
    ) -> Event:
        """Append an event (and update projections) inside an open write transaction."""
        if type_.startswith(("node.", "pattern.", "session.")):
            self.memory_epoch += 1  # what pattern memory serves may have changed
        return events.append(conn, type_, subject, payload, self.actor, ts=self.clock())

    def append_events(
        self, conn: sqlite3.Connection, entries: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> list[Event]:
        """Append (type, subject, payload) entries in order, as `append_event` one by one
        would, in one INSERT (see `events.append_many`)."""
        if any(t.startswith(("node.", "pattern.", "session.")) for t, _s, _p in entries):
            self.memory_epoch += 1
        return events.append_many(conn, entries, self.actor, self.clock)

    def last_seq(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])

    def service(self, build: Callable[[Kernel], T]) -> T:
        """The one instance `build(kernel)` makes for this library (built on first use)."""
        found = self._services.get(build)
        if found is None:
            found = self._services[build] = build(self)
        return found

    def peek(self, build: Callable[[Kernel], T]) -> T | None:
        """The instance `service(build)` made, or None before anything asked for it."""
        return self._services.get(build)

    def on_close(self, callback: Callable[[], object]) -> None:
        """Run `callback` when the library closes, before the database does."""
        self._on_close.append(callback)

    def close(self) -> None:
        """Run the close callbacks (the retrieval log writes its counts), then close the
        database."""
        try:
            for callback in self._on_close:
                callback()
        finally:
            self.db.close()
