"""A fast, scrolling table of skills drawn with the line API (smooth at 10,000+ rows)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import SkillSummary
from store.text import home_relative, one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings

#: Below these widths the version, warning and lint columns, then the root, are left out
#: (the detail pane has them all; the severity marker stays in the first column).
NARROW, NO_ROOT = 56, 90
COLUMNS: tuple[Column[SkillSummary], ...] = (
    Column("", 2, lambda r: {"high": "!!", "medium": "! "}.get(r.max_severity, "  ")),
    Column("name", 0, lambda r: one_line(r.name, 200)),
    Column("status", 11, lambda r: r.status + ("*" if r.shadowed else "")),
    Column("ver", 4, lambda r: f"v{r.version_no}", narrow=NARROW),
    Column("warn", 5, lambda r: str(r.warning_count) if r.warning_count else "-", narrow=NARROW),
    Column(
        "lint",
        6,
        lambda r: f"{r.finding_count}{r.max_severity[:1].upper()}" if r.finding_count else "-",
        narrow=NARROW,
    ),
    Column(
        "root", 40, lambda r: one_line(home_relative(r.root), 500), keep_end=True, narrow=NO_ROOT
    ),
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
        bind("open", "select", "Open", show=False, id="table.select"),
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

    FILL_MIN = 16
    COLUMNS = COLUMNS
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

    def cell_style(self, key: str, row: SkillSummary) -> Style:
        if key in ("", "lint") and row.max_severity in ("high", "medium"):
            return self.get_component_rich_style(f"skill-table--{row.max_severity}")
        if key == "warn" and row.warning_count:
            return self.get_component_rich_style("skill-table--warning")
        if key in ("status", "root") and (
            row.shadowed or row.status in ("deprecated", "uninstalled")
        ):
            return self.get_component_rich_style("skill-table--dim")
        return Style()
