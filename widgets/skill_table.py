"""A fast, scrolling table of skills drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import SkillSummary
from store.text import home_relative, one_line
from widgets.line_table import LineTable, fit, navigation_bindings, pad

COLUMNS: tuple[tuple[str, int], ...] = (
    ("", 2),
    ("name", 30),
    ("status", 11),
    ("ver", 4),
    ("warn", 5),
    ("lint", 6),
    ("root", 0),
)


class SkillTable(LineTable[SkillSummary, int]):
    """Skills, one per line; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the skill under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings("table"),
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

    COMPONENT_PREFIX = "skill-table"
    HIGHLIGHT_REPEATS = True

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No skills."

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

    def row_key(self, row: SkillSummary) -> int:
        return row.skill_id

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: int | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: int) -> None:
        self.post_message(self.Selected(self, key))

    # -- rendering -----------------------------------------------------------------

    def render_header(self, width: int) -> Strip:
        return self._text_line(_header(width), "header", width)

    def render_row(self, row: SkillSummary, is_cursor: bool, width: int) -> Strip:
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


def _header(width: int) -> str:
    return " ".join(pad(title, w) for (title, _), w in zip(COLUMNS, _widths(width), strict=True))


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
        one_line(home_relative(row.root), 500),
    ]
    cells = []
    for (key, _), w, value in zip(COLUMNS, _widths(width), values, strict=True):
        cells.append((key, fit(value, w, keep_end=key == "root") + " ", True))
    return cells
