"""Live data: the open screen follows changes made elsewhere — another screen, the CLI, the
hook worker, the MCP server — without a restart.

One thread polls the event log's head (`store.changes.ChangeProbe`: one index lookup, and
nothing more when nothing changed) every `POLL_SECONDS`. When it moved, the screen being
shown gets a `LibraryChanged` message and reloads what it shows (`LibrarianScreen`
handles it). A screen that is hidden, or under a dialog, gets it once it is shown again
without one, so a dialog is never reloaded from under the user and a hidden screen does no
work. An app made with `watch=False` (tests, screenshots, benchmarks) does not poll.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message
from textual.screen import ModalScreen, Screen

from store.changes import ChangeProbe, Changes
from store.errors import LibrarianError
from store.library import Library

if TYPE_CHECKING:
    from textual.app import App

#: Seconds between two looks at the event log.
POLL_SECONDS = 1.0


@dataclass
class LibraryChanged(Message):
    """Events were appended since the screen last showed the library."""

    head: int
    types: frozenset[str]  # of the latest change; empty: too many to list (a big scan)


class LiveData:
    """Watches the library for commits and tells the shown screen (see the module doc)."""

    def __init__(self, app: App[int], library: Library) -> None:
        self.app = app
        self.library = library
        self.head = 0  # the last head that changed something a screen shows
        self.types: frozenset[str] = frozenset()
        self._shown: dict[int, int] = {}  # id(screen) -> the head it last showed

    def start(self, stop: threading.Event) -> None:
        """Poll until `stop` is set (in a thread worker of the app's "watch" group)."""
        self.app.run_worker(
            lambda: self._poll(stop),
            name="live data",
            group="watch",
            thread=True,
            exit_on_error=False,
        )

    def _poll(self, stop: threading.Event) -> None:
        probe = ChangeProbe(self.library.db)
        self.head = probe.seen
        while not stop.wait(POLL_SECONDS):
            # Thread-safe and non-blocking (a closing app drops it); `deliver` itself only
            # compares two numbers when nothing changed.
            try:
                changes = probe.poll()
            except (LibrarianError, sqlite3.Error):  # busy or closing: look again later
                continue
            self.app.call_later(self.deliver, changes)

    def deliver(self, changes: Changes | None) -> None:
        """On the app's thread: record a change, and tell the shown screen if it has not
        seen it (a screen met for the first time has just loaded: nothing to tell)."""
        screen = self.app.screen
        shown = not isinstance(screen, ModalScreen) and isinstance(screen, Screen)
        if shown:  # before the change is applied: a screen met now loaded before it
            self._shown.setdefault(id(screen), self.head)
        if changes is not None:
            self.head = changes.head
            self.types = changes.types
        if shown and self._shown[id(screen)] != self.head:
            self._shown[id(screen)] = self.head
            screen.post_message(LibraryChanged(self.head, self.types))
