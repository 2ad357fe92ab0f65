"""Enrichment proposals for thin skills, one per line (line API), for the review queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import Enrichment
from store.text import one_line
from widgets.decision_table import DecisionTable
from widgets.keys import bind
from widgets.line_table import Column, navigation_bindings
from widgets.pattern_text import when

STATUS_GLYPHS = {"pending": "✎", "approved": "✓", "rejected": "✗", "stale": "~", "replaced": "~"}
COLUMNS: tuple[Column[Enrichment], ...] = (
    Column("", 1, lambda r: STATUS_GLYPHS.get(r.status, "?")),
    Column("skill", 0, lambda r: one_line(r.skill_name, 200)),
    Column("ver", 4, lambda r: f"v{r.version_no}"),
    Column("by", 18, lambda r: one_line(r.source, 60)),
    Column("proposed", 16, lambda r: when(r.created_at)),
)


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
        bind(
            "open",
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

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    def cell_style(self, key: str, row: Enrichment) -> Style:
        if key == "" and row.status == "pending":
            return self.get_component_rich_style("enrichment-table--pending")
        if key in ("ver", "by", "proposed"):
            return self.get_component_rich_style("enrichment-table--dim")
        return Style()
