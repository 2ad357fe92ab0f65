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
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType

from store.models import ERASED, Event

Handler = Callable[[sqlite3.Connection, Event], None]
#: Projects a run of consecutive events of one type at once, leaving the same rows as its
#: type's `Handler` applied to each in order (a bulk write's shortcut; replays use the
#: `Handler`, and `verify` compares the two).
BatchHandler = Callable[[sqlite3.Connection, Sequence[Event]], None]


class Projection:
    """One domain's projection handlers, by the event type each handles."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self._handlers: dict[str, Handler] = {}
        self._batch: dict[str, BatchHandler] = {}

    @property
    def handlers(self) -> Mapping[str, Handler]:
        return MappingProxyType(self._handlers)

    @property
    def batch_handlers(self) -> Mapping[str, BatchHandler]:
        return MappingProxyType(self._batch)

    def handles_many(self, type_: str) -> Callable[[BatchHandler], BatchHandler]:
        """Decorate the bulk twin of the handler of `type_` (see `BatchHandler`)."""

        def register(func: BatchHandler) -> BatchHandler:
            if type_ in self._batch:
                raise ValueError(f"{self.domain}: {type_} has two bulk handlers")
            self._batch[type_] = func
            return func

        return register

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
        batch: dict[str, BatchHandler] = {}
        for projection in projections:
            for type_, many in projection.batch_handlers.items():
                if owner.get(type_) != projection.domain:
                    raise ValueError(f"{projection.domain}: a bulk handler for {type_} alone")
                batch[type_] = many
        self.batch_handlers: Mapping[str, BatchHandler] = MappingProxyType(batch)

    def apply(self, conn: sqlite3.Connection, event: Event) -> None:
        """Update the projections for one event; unknown types change nothing."""
        handler = self.handlers.get(event.type)
        if handler is not None:
            handler(conn, event)

    def apply_many(self, conn: sqlite3.Connection, events: Sequence[Event]) -> None:
        """Update the projections for events in order: a run of one type with a bulk
        handler at once, the others one by one."""
        start = 0
        while start < len(events):
            type_ = events[start].type
            end = start + 1
            while end < len(events) and events[end].type == type_:
                end += 1
            many = self.batch_handlers.get(type_)
            if many is not None:
                many(conn, events[start:end])
            else:
                for event in events[start:end]:
                    self.apply(conn, event)
            start = end


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
