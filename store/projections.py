"""Projections: every table they write is a pure function of the event log.

Each domain declares one `Projection`, its handlers by event type, beside its own queries
(`store/skills/projections.py`, `store/patterns/projections.py`, …); `store.projectors` lists
them all in one `Registry`, whose `apply` is the only code that writes projection rows, both
for live writes (inside the same transaction as the event) and for replays (`rebuild`,
`verify`). This module imports no domain: it is the registry's vocabulary and the content
store every domain shares.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from store.models import ERASED, Event

Handler = Callable[[sqlite3.Connection, Event], None]


class Projection:
    """One domain's projection handlers, by the event type each handles."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self._handlers: dict[str, Handler] = {}

    @property
    def handlers(self) -> Mapping[str, Handler]:
        return MappingProxyType(self._handlers)

    def handles(self, *types: str) -> Callable[[Handler], Handler]:
        """Decorate the function that projects events of `types`."""

        def register(func: Handler) -> Handler:
            for type_ in types:
                if type_ in self._handlers:
                    raise ValueError(f"{self.domain}: {type_} is projected twice")
                self._handlers[type_] = func
            return func

        return register


class Registry:
    """The handlers of every domain's projection; an event type belongs to one domain."""

    def __init__(self, projections: Iterable[Projection]) -> None:
        handlers: dict[str, Handler] = {}
        owner: dict[str, str] = {}
        for projection in projections:
            for type_, handler in projection.handlers.items():
                if type_ in handlers:
                    raise ValueError(
                        f"{type_} is projected by both {owner[type_]} and {projection.domain}"
                    )
                handlers[type_], owner[type_] = handler, projection.domain
        self.handlers: Mapping[str, Handler] = MappingProxyType(handlers)

    def apply(self, conn: sqlite3.Connection, event: Event) -> None:
        """Update the projections for one event; unknown types change nothing."""
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(conn, event)


def store_blob(conn: sqlite3.Connection, text: str) -> str:
    """Store content once, by its SHA-256; returns the hash events refer to."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    conn.execute("INSERT OR IGNORE INTO blobs(hash, text) VALUES (?,?)", (digest, text))
    return digest


def blob_text(conn: sqlite3.Connection, digest: str) -> str:
    """Content stored once by hash (file texts, drafts); `ERASED` once `forget` erased it."""
    row = conn.execute("SELECT text, erased_at FROM blobs WHERE hash=?", (digest,)).fetchone()
    if row is None:
        return ""
    return ERASED if row[1] else str(row[0])
