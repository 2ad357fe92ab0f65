"""Ingested sessions, one per line, drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import SessionSummary
from store.text import home_relative, one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings

#: Below this width the turn, tool call and error counts are left out (the project keeps room).
NARROW = 100
COLUMNS: tuple[Column[SessionSummary], ...] = (
    Column("started", 16, lambda r: started_text(r.started_at)),
    Column("project", 40, lambda r: one_line(home_relative(r.project), 300), keep_end=True),
    Column("branch", 0, lambda r: one_line(r.branch, 100) or "-"),
    Column("turns", 5, lambda r: str(r.turns), right=True, narrow=NARROW),
    Column("tools", 5, lambda r: str(r.tool_calls), right=True, narrow=NARROW),
    Column("errors", 6, lambda r: str(r.errors) if r.errors else "-", right=True, narrow=NARROW),
    Column("nodes", 5, lambda r: str(r.node_count), right=True),
    Column("pending", 7, lambda r: str(r.pending_count) if r.pending_count else "-", right=True),
)


class SessionList(LineTable[SessionSummary, str]):
    """Sessions newest first; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the session under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "sessions",
            up="Previous session",
            down="Next session",
            page_up="Up a page",
            page_down="Down a page",
            first="Newest",
            last="Oldest",
        ),
        bind(
            "open",
            "select",
            "Open",
            show=False,
            id="sessions.select",
            tooltip="Open the session's graph",
        ),
    ]

    COMPONENT_CLASSES = {
        "session-list--header",
        "session-list--cursor",
        "session-list--error",
        "session-list--pending",
        "session-list--dim",
    }

    DEFAULT_CSS = """
    SessionList > .session-list--header { background: $panel; color: $text; text-style: bold; }
    SessionList > .session-list--cursor { background: $block-cursor-blurred-background; }
    SessionList:focus > .session-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    SessionList > .session-list--error { color: $text-error; }
    SessionList > .session-list--pending { color: $text-warning; text-style: bold; }
    SessionList > .session-list--dim { color: $text-muted; }
    """

    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "session-list"
    #: The branch takes what the other columns leave, at least this.
    FILL_MIN = 16

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No sessions."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another session (None when the list is empty)."""

        session_list: SessionList
        session_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a session."""

        session_list: SessionList
        session_id: str

    def row_key(self, row: SessionSummary) -> str:
        return row.session_id

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    # -- rendering -----------------------------------------------------------------

    def cell_style(self, key: str, row: SessionSummary) -> Style:
        if key == "errors" and row.errors:
            return self.get_component_rich_style("session-list--error")
        if key == "pending" and row.pending_count:
            return self.get_component_rich_style("session-list--pending")
        if key in ("started", "branch"):
            return self.get_component_rich_style("session-list--dim")
        return Style()


def started_text(started_at: str) -> str:
    """`2026-05-04 09:12`: the start to the minute."""
    started = one_line(started_at, 40)
    return f"{started[:10]} {started[11:16]}" if len(started) >= 16 else started
