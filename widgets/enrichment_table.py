"""Enrichment proposals for thin skills, one per line (line API), for the review queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message

from store.models import Enrichment
from store.text import one_line
from widgets.decision_table import DecisionTable
from widgets.line_table import navigation_bindings
from widgets.pattern_text import when

#: (title, width); width 0 takes what is left.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("", 1),
    ("skill", 0),
    ("ver", 4),
    ("by", 18),
    ("proposed", 16),
)
STATUS_GLYPHS = {"pending": "✎", "approved": "✓", "rejected": "✗", "stale": "~", "replaced": "~"}


class EnrichmentTable(DecisionTable[Enrichment, str]):
    """Proposals in the order they were made; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | read the proposal's diff |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "enrichments",
            up="Previous proposal",
            down="Next proposal",
            page_up="Up a page",
            page_down="Down a page",
            first="First proposal",
            last="Last proposal",
        ),
        Binding(
            "enter",
            "select",
            "Open",
            show=False,
            id="enrichments.select",
            tooltip="Read the diff the approval would write",
        ),
    ]

    COMPONENT_CLASSES = {
        "enrichment-table--header",
        "enrichment-table--cursor",
        "enrichment-table--busy",
        "enrichment-table--dim",
        "enrichment-table--pending",
    }

    DEFAULT_CSS = """
    EnrichmentTable > .enrichment-table--header {
        background: $panel; color: $text; text-style: bold;
    }
    EnrichmentTable > .enrichment-table--cursor { background: $block-cursor-blurred-background; }
    EnrichmentTable:focus > .enrichment-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    EnrichmentTable > .enrichment-table--busy { color: $text-disabled; }
    EnrichmentTable > .enrichment-table--dim { color: $text-muted; }
    EnrichmentTable > .enrichment-table--pending { color: $text-warning; text-style: bold; }
    """

    COMPONENT_PREFIX = "enrichment-table"
    COLUMNS = COLUMNS

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No enrichment proposals."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another proposal (None when the table is empty)."""

        table: EnrichmentTable
        proposal_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a proposal."""

        table: EnrichmentTable
        proposal_id: str

    def row_key(self, row: Enrichment) -> str:
        return row.proposal_id

    def values(self, row: Enrichment) -> list[str]:
        return [
            STATUS_GLYPHS.get(row.status, "?"),
            one_line(row.skill_name, 200),
            f"v{row.version_no}",
            one_line(row.source, 60),
            when(row.created_at),
        ]

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    def _cell_style(self, key: str, row: Enrichment) -> Style:
        if key == "" and row.status == "pending":
            return self.get_component_rich_style("enrichment-table--pending")
        if key in ("ver", "by", "proposed"):
            return self.get_component_rich_style("enrichment-table--dim")
        return Style()
