"""Ingested sessions, one per line, drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import SessionSummary
from store.text import one_line
from widgets.line_table import LineTable, fit, navigation_bindings, pad

#: (title, width, right-aligned); width 0 takes what is left.
COLUMNS: tuple[tuple[str, int, bool], ...] = (
    ("started", 16, False),
    ("project", 0, False),
    ("branch", 28, False),
    ("turns", 5, True),
    ("tools", 5, True),
    ("errors", 6, True),
    ("nodes", 5, True),
    ("pending", 7, True),
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
        Binding(
            "enter",
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

    COMPONENT_PREFIX = "session-list"

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

    def render_header(self, width: int) -> Strip:
        return self._text_line(_header(width), "header", width)

    def render_row(self, row: SessionSummary, is_cursor: bool, width: int) -> Strip:
        if is_cursor:
            base = self.get_component_rich_style("session-list--cursor")
            segments = [Segment(text, base) for _, text in _cells(row, width)]
        else:
            base = self.rich_style
            segments = [
                Segment(text, base + self._cell_style(key, row)) for key, text in _cells(row, width)
            ]
        return Strip(segments).crop(0, width).simplify()

    def _cell_style(self, key: str, row: SessionSummary) -> Style:
        if key == "errors" and row.errors:
            return self.get_component_rich_style("session-list--error")
        if key == "pending" and row.pending_count:
            return self.get_component_rich_style("session-list--pending")
        if key in ("started", "branch"):
            return self.get_component_rich_style("session-list--dim")
        return Style()


def _widths(width: int) -> list[int]:
    fixed = sum(w for _, w, _ in COLUMNS)
    return [w if w else max(width - fixed - len(COLUMNS), 10) for _, w, _ in COLUMNS]


def _header(width: int) -> str:
    return " ".join(
        title.rjust(w) if right else pad(title, w)
        for (title, _, right), w in zip(COLUMNS, _widths(width), strict=True)
    )


def _cells(row: SessionSummary, width: int) -> list[tuple[str, str]]:
    started = one_line(row.started_at, 40)
    values = [
        f"{started[:10]} {started[11:16]}" if len(started) >= 16 else started,
        one_line(row.project, 300),
        one_line(row.branch, 100) or "-",
        str(row.turns),
        str(row.tool_calls),
        str(row.errors) if row.errors else "-",
        str(row.node_count),
        str(row.pending_count) if row.pending_count else "-",
    ]
    return [
        (title, (value.rjust(w) if right else fit(value, w, keep_end=title == "project")) + " ")
        for (title, _, right), w, value in zip(COLUMNS, _widths(width), values, strict=True)
    ]
