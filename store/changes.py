"""Has the library changed? A cheap probe of the event log, for views that stay open.

Every change to a library is an event, appended with the next `seq` (INTEGER PRIMARY KEY),
whichever process writes it: this app, the CLI, the hook worker, the MCP server. So the
log's head (`max(seq)`, one index lookup) tells a view whether anything changed since it
last looked. When it moved, the types of the new events say what (bounded: a big scan is
"many"); retrieval bookkeeping, which changes nothing a view shows, does not count.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.db import Database
from store.models.events import EventType

#: Event types that change nothing a view shows (the retrieval log's bookkeeping).
QUIET_TYPES = frozenset({EventType.RETRIEVAL_LOGGED, EventType.RETRIEVAL_REPEATED})
#: New events whose types are read at most; beyond, a change is "many" (types unknown).
TYPES_LIMIT = 5000


@dataclass(frozen=True)
class Changes:
    """Events appended since the last look: the new head, and their types (empty when
    there were more than `TYPES_LIMIT`)."""

    head: int
    types: frozenset[str]


def head(db: Database) -> int:
    """The event log's head: the last event's `seq` (0 for an empty log)."""
    with db.read() as conn:
        return int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])


class ChangeProbe:
    """Polls the event log; `poll` says what changed since the previous poll, or None."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.seen = head(db)

    def poll(self) -> Changes | None:
        """None when no event that a view shows was appended since the last poll."""
        with self.db.read() as conn:
            now = int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])
            if now == self.seen:
                return None
            types: frozenset[str] = frozenset()
            if now - self.seen <= TYPES_LIMIT:
                types = frozenset(
                    str(r[0])
                    for r in conn.execute(
                        "SELECT DISTINCT type FROM events WHERE seq > ? AND seq <= ?",
                        (self.seen, now),
                    )
                )
        self.seen = now
        if types and types <= QUIET_TYPES:
            return None
        return Changes(now, types)
