"""A fast, scrolling table of skills drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store.models import SkillSummary
from store.text import one_line

COLUMNS: tuple[tuple[str, int], ...] = (
    ("", 2),
    ("name", 30),
    ("status", 11),
    ("ver", 4),
    ("warn", 5),
    ("lint", 6),
    ("root", 0),
)


class SkillTable(ScrollView, can_focus=True):
    """Skills, one per line; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the skill under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="table.up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("pageup", "page_up_rows", "Page up", show=False, id="table.page_up"),
        Binding("pagedown", "page_down_rows", "Page down", show=False, id="table.page_down"),
        Binding("home", "first", "First", show=False, id="table.first"),
        Binding("end", "last", "Last", show=False, id="table.last"),
        Binding("enter", "select", "Open", show=False, id="table.select"),
    ]

    COMPONENT_CLASSES = {
        "skill-table--header",
        "skill-table--cursor",
        "skill-table--high",
        "skill-table--medium",
        "skill-table--warning",
        "skill-table--dim",
    }

    DEFAULT_CSS = """
    SkillTable {
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    SkillTable > .skill-table--header { background: $panel; color: $text; text-style: bold; }
    SkillTable > .skill-table--cursor { background: $block-cursor-blurred-background; }
    SkillTable:focus > .skill-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    SkillTable > .skill-table--high { color: $error; text-style: bold; }
    SkillTable > .skill-table--medium { color: $warning; }
    SkillTable > .skill-table--warning { color: $warning; }
    SkillTable > .skill-table--dim { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto a skill (None when the table is empty)."""

        table: SkillTable
        skill_id: int | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a skill."""

        table: SkillTable
        skill_id: int

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[SkillSummary] = []
        #: Shown on the first row when there are no rows (set by the screen).
        self.empty_text = "No skills."

    @property
    def rows(self) -> Sequence[SkillSummary]:
        return self._rows

    @property
    def current(self) -> SkillSummary | None:
        return self._rows[self.cursor] if 0 <= self.cursor < len(self._rows) else None

    def set_rows(self, rows: Sequence[SkillSummary]) -> None:
        """Replace the rows, keeping the cursor on the same skill when it is still there."""
        keep = self.current.skill_id if self.current else None
        self._rows = list(rows)
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._rows) + 1)
        position = next((i for i, r in enumerate(self._rows) if r.skill_id == keep), 0)
        self.cursor = min(position, max(len(self._rows) - 1, 0))
        self.refresh()

    def move_to(self, skill_id: int) -> bool:
        for index, row in enumerate(self._rows):
            if row.skill_id == skill_id:
                self.cursor = index
                return True
        return False

    # -- actions -------------------------------------------------------------------

    def action_cursor_up(self) -> None:
        self.cursor = max(self.cursor - 1, 0)

    def action_cursor_down(self) -> None:
        self.cursor = min(self.cursor + 1, max(len(self._rows) - 1, 0))

    def action_page_up_rows(self) -> None:
        self.cursor = max(self.cursor - self._page(), 0)

    def action_page_down_rows(self) -> None:
        self.cursor = min(self.cursor + self._page(), max(len(self._rows) - 1, 0))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = max(len(self._rows) - 1, 0)

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current.skill_id))

    # -- watchers and rendering ----------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        self._scroll_to_cursor()
        if int(self.scroll_offset.y) == top:
            # Only the two rows that changed are redrawn (row y is line y + 1 - top).
            for row in {old, new}:
                self.refresh_lines(row - top + 1)
        else:
            self.refresh()
        self.post_message(self.Highlighted(self, self.current.skill_id if self.current else None))

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
        self.virtual_size = Size(self.scrollable_content_region.width, len(self._rows) + 1)

    def on_click(self, event: object) -> None:
        offset = getattr(event, "y", None)
        if isinstance(offset, int) and offset > 0:
            index = int(self.scroll_offset.y) + offset - 1
            if 0 <= index < len(self._rows):
                self.cursor = index

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            style = self.get_component_rich_style("skill-table--header")
            return Strip([Segment(_pad(_header(width), width), style)]).simplify()
        index = int(self.scroll_offset.y) + y - 1
        if not self._rows and y == 1:
            style = self.get_component_rich_style("skill-table--dim")
            return Strip([Segment(_pad(f"  {self.empty_text}", width), style)])
        if index >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        return self._row_strip(self._rows[index], index == self.cursor, width)

    def _row_strip(self, row: SkillSummary, is_cursor: bool, width: int) -> Strip:
        base = (
            self.get_component_rich_style("skill-table--cursor") if is_cursor else self.rich_style
        )
        # The cursor row is drawn in the cursor's colours only: red on blue is unreadable,
        # and the marker column still shows the severity.
        segments = [
            Segment(text, base + self._cell_style(key, row))
            if style_key and not is_cursor
            else Segment(text, base)
            for key, text, style_key in _cells(row, width)
        ]
        return Strip(segments).crop(0, width).simplify()

    def _cell_style(self, key: str, row: SkillSummary) -> Style:
        if key in ("", "lint") and row.max_severity in ("high", "medium"):
            return self.get_component_rich_style(f"skill-table--{row.max_severity}")
        if key == "warn" and row.warning_count:
            return self.get_component_rich_style("skill-table--warning")
        if key in ("status", "root") and (
            row.shadowed or row.status in ("deprecated", "uninstalled")
        ):
            return self.get_component_rich_style("skill-table--dim")
        return Style()


def _widths(width: int) -> list[int]:
    fixed = sum(w for _, w in COLUMNS)
    return [w if w else max(width - fixed - len(COLUMNS), 4) for _, w in COLUMNS]


def _pad(text: str, width: int) -> str:
    return text[:width].ljust(width)


def _header(width: int) -> str:
    return " ".join(_pad(title, w) for (title, _), w in zip(COLUMNS, _widths(width), strict=True))


def _cells(row: SkillSummary, width: int) -> list[tuple[str, str, bool]]:
    marker = {"high": "!!", "medium": "! "}.get(row.max_severity, "  ")
    status = row.status + ("*" if row.shadowed else "")
    lint = f"{row.finding_count}{row.max_severity[:1].upper()}" if row.finding_count else "-"
    values = [
        marker,
        one_line(row.name, 200),
        status,
        f"v{row.version_no}",
        str(row.warning_count) if row.warning_count else "-",
        lint,
        one_line(row.root, 500),
    ]
    cells = []
    for (key, _), w, value in zip(COLUMNS, _widths(width), values, strict=True):
        cells.append((key, _fit(value, w, keep_end=key == "root") + " ", True))
    return cells


def _fit(text: str, width: int, keep_end: bool = False) -> str:
    """Pad or shorten to `width`; paths keep their end, where roots differ."""
    if len(text) <= width:
        return text.ljust(width)
    if width < 2:
        return "…"[:width]
    return "…" + text[len(text) - width + 1 :] if keep_end else text[: width - 1] + "…"
