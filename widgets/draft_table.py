"""SKILL.md drafts waiting for review, one per line (line API), for the review queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import Draft
from store.text import one_line
from widgets.decision_table import DecisionTable
from widgets.keys import bind
from widgets.line_table import Column, navigation_bindings
from widgets.pattern_text import when

STATUS_GLYPHS = {"pending": "✎", "approved": "✓", "rejected": "✗"}
COLUMNS: tuple[Column[Draft], ...] = (
    Column("", 1, lambda r: STATUS_GLYPHS.get(r.status, "?")),
    Column("skill", 0, lambda r: one_line(r.name, 200)),
    Column("cites", 5, lambda r: str(len(r.citations))),
    Column("pattern", 15, lambda r: one_line(r.pattern_id, 40)),
    Column("drafted", 16, lambda r: when(r.created_at)),
    Column("by", 24, lambda r: one_line(r.created_by, 200) or "unknown"),
)


class DraftTable(DecisionTable[Draft, str]):
    """Drafts in the order they were made; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the draft (its SKILL.md) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "drafts",
            up="Previous draft",
            down="Next draft",
            page_up="Up a page",
            page_down="Down a page",
            first="First draft",
            last="Last draft",
        ),
        bind("open", "select", "Open", show=False, id="drafts.select", tooltip="Read the SKILL.md"),
    ]

    COMPONENT_CLASSES = {
        "draft-table--header",
        "draft-table--cursor",
        "draft-table--busy",
        "draft-table--dim",
        "draft-table--pending",
    }

    DEFAULT_CSS = """
    DraftTable > .draft-table--header { background: $panel; color: $text; text-style: bold; }
    DraftTable > .draft-table--cursor { background: $block-cursor-blurred-background; }
    DraftTable:focus > .draft-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    DraftTable > .draft-table--busy { color: $text-disabled; }
    DraftTable > .draft-table--dim { color: $text-muted; }
    DraftTable > .draft-table--pending { color: $text-warning; text-style: bold; }
    """

    COMPONENT_PREFIX = "draft-table"
    COLUMNS = COLUMNS

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No drafts."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another draft (None when the table is empty)."""

        table: DraftTable
        draft_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a draft."""

        table: DraftTable
        draft_id: str

    def row_key(self, row: Draft) -> str:
        return row.draft_id

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    def cell_style(self, key: str, row: Draft) -> Style:
        if key == "" and row.status == "pending":
            return self.get_component_rich_style("draft-table--pending")
        if key in ("pattern", "drafted", "by"):
            return self.get_component_rich_style("draft-table--dim")
        return Style()
