"""Ingested sessions, one per line, drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store.models import SessionSummary
from store.text import one_line

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


class SessionList(ScrollView, can_focus=True):
    """Sessions newest first; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the session under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "up,k", "cursor_up", "Up", show=False, id="sessions.up", tooltip="Previous session"
        ),
        Binding(
            "down,j", "cursor_down", "Down", show=False, id="sessions.down", tooltip="Next session"
        ),
        Binding(
            "pageup",
            "page_up_rows",
            "Page up",
            show=False,
            id="sessions.page_up",
            tooltip="Up a page",
        ),
        Binding(
            "pagedown",
            "page_down_rows",
            "Page down",
            show=False,
            id="sessions.page_down",
            tooltip="Down a page",
        ),
        Binding("home", "first", "First", show=False, id="sessions.first", tooltip="Newest"),
        Binding("end", "last", "Last", show=False, id="sessions.last", tooltip="Oldest"),
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
    SessionList {
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    SessionList > .session-list--header { background: $panel; color: $text; text-style: bold; }
    SessionList > .session-list--cursor { background: $block-cursor-blurred-background; }
    SessionList:focus > .session-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    SessionList > .session-list--error { color: $text-error; }
    SessionList > .session-list--pending { color: $text-warning; text-style: bold; }
    SessionList > .session-list--dim { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

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

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[SessionSummary] = []
        self._announced: str | None = ""
        #: Shown on the first row when there are no rows (set by the screen).
        self.empty_text = "No sessions."

    # -- public API ----------------------------------------------------------------

    @property
    def rows(self) -> Sequence[SessionSummary]:
        return self._rows

    @property
    def current(self) -> SessionSummary | None:
        return self._rows[self.cursor] if 0 <= self.cursor < len(self._rows) else None

    def set_rows(self, rows: Iterable[SessionSummary], focus: str | None = None) -> None:
        """Replace the rows; the cursor goes to `focus`, else stays on the same session."""
        keep = focus or (self.current.session_id if self.current else None)
        self._rows = list(rows)
        self.virtual_size = Size(self._width(), len(self._rows) + 1)
        position = next((i for i, r in enumerate(self._rows) if r.session_id == keep), 0)
        self.cursor = self._clamp(position)
        self.refresh()

    def move_to(self, session_id: str) -> bool:
        for index, row in enumerate(self._rows):
            if row.session_id == session_id:
                self.cursor = index
                return True
        return False

    # -- actions -------------------------------------------------------------------

    def action_cursor_up(self) -> None:
        self.cursor = max(self.cursor - 1, 0)

    def action_cursor_down(self) -> None:
        self.cursor = self._clamp(self.cursor + 1)

    def action_page_up_rows(self) -> None:
        self.cursor = max(self.cursor - self._page(), 0)

    def action_page_down_rows(self) -> None:
        self.cursor = self._clamp(self.cursor + self._page())

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self._clamp(len(self._rows))

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current.session_id))

    # -- watchers ------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        self._scroll_to_cursor()
        if int(self.scroll_offset.y) == top:
            for row in {old, new}:
                self.refresh_lines(row - top + 1)
        else:
            self.refresh()
        session_id = self.current.session_id if self.current else None
        if session_id != self._announced:
            self._announced = session_id
            self.post_message(self.Highlighted(self, session_id))

    # -- helpers -------------------------------------------------------------------

    def _clamp(self, index: int) -> int:
        return min(max(index, 0), max(len(self._rows) - 1, 0))

    def _width(self) -> int:
        """Columns for the rows: the vertical scrollbar's gutter is not theirs."""
        return self.scrollable_content_region.width

    def _page(self) -> int:
        return max(self.size.height - 2, 1)

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        visible = max(self.size.height - 1, 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def on_resize(self) -> None:
        self.virtual_size = Size(self._width(), len(self._rows) + 1)

    def on_click(self, event: events.Click) -> None:
        if event.y > 0:
            index = int(self.scroll_offset.y) + event.y - 1
            if 0 <= index < len(self._rows):
                self.cursor = index

    # -- rendering -----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self._width()
        if y == 0:
            style = self.get_component_rich_style("session-list--header")
            return Strip([Segment(_pad(_header(width), width), style)])
        index = int(self.scroll_offset.y) + y - 1
        if not self._rows and y == 1:
            style = self.get_component_rich_style("session-list--dim")
            return Strip([Segment(_pad(f"  {self.empty_text}", width), style)])
        if index >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        return self._row_strip(self._rows[index], index == self.cursor, width)

    def _row_strip(self, row: SessionSummary, is_cursor: bool, width: int) -> Strip:
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


def _pad(text: str, width: int) -> str:
    return text[:width].ljust(width)


def _header(width: int) -> str:
    return " ".join(
        title.rjust(w) if right else _pad(title, w)
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
        (title, (value.rjust(w) if right else _fit(value, w, keep_end=title == "project")) + " ")
        for (title, _, right), w, value in zip(COLUMNS, _widths(width), values, strict=True)
    ]


def _fit(text: str, width: int, keep_end: bool = False) -> str:
    if len(text) <= width:
        return text.ljust(width)
    if width < 2:
        return "…"[:width]
    return "…" + text[len(text) - width + 1 :] if keep_end else text[: width - 1] + "…"
