"""What a domain module needs from the library, and nothing more.

Governance code (`store/lifecycle/candidates.py`, `pins.py`, `store/skills/usage.py`,
`store/patterns/literals.py`, `store/skills/enrich.py`, …) takes a `Ledger`: the database, the
config, the clock and the event writer. `store.kernel.Kernel` satisfies it (and so does the
`Library` façade); nothing here imports either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from store.models.events import Event

if TYPE_CHECKING:  # annotations only: the database imports the projections, which use this
    from store.config import Config
    from store.db import Database


class Ledger(Protocol):
    """The database, the config, the clock and the writer of events."""

    @property
    def db(self) -> Database: ...

    @property
    def config(self) -> Config: ...

    @property
    def clock(self) -> Callable[[], str]: ...

    def append_event(
        self, conn: sqlite3.Connection, type_: str, subject: str, payload: dict[str, Any]
    ) -> Event:
        """Append one event (and update its projections) inside an open write transaction."""
        ...


#: The event writer alone, for code that runs inside a caller's transaction.
Append = Callable[[sqlite3.Connection, str, str, dict[str, Any]], Event]
