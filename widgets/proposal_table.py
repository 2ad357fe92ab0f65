"""Computed relation proposals waiting for review, one per line (line API), for the review
queue: the pair, how many sessions used both, the two skills' statuses, when proposed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import RelationProposal
from store.text import one_line
from widgets.decision_table import DecisionTable
from widgets.keys import bind
from widgets.line_table import Column, navigation_bindings
from widgets.pattern_text import when

Pair = tuple[str, str]

STATUS_GLYPHS = {"pending": "?", "accepted": "✓", "rejected": "✗"}
COLUMNS: tuple[Column[RelationProposal], ...] = (
    Column("", 1, lambda r: STATUS_GLYPHS.get(r.status, "?")),
    Column("often used together", 0, lambda r: pair_text(r)),
    Column("shared", 6, lambda r: str(r.shared)),
    Column(
        "statuses",
        23,
        lambda r: (
            f"{one_line(r.source_status, 10) or '?'} · {one_line(r.target_status, 10) or '?'}"
        ),
    ),
    Column("proposed", 16, lambda r: when(r.proposed_at)),
)
#: Skill statuses that make a reviewer look twice.
WARN_STATUSES = frozenset({"deprecated", "retired", "uninstalled", "missing"})


class ProposalTable(DecisionTable[RelationProposal, Pair]):
    """Proposals, most shared sessions first; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the proposal (its shared sessions) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "proposals",
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
            id="proposals.select",
            tooltip="Read the sessions that used both skills",
        ),
    ]

    COMPONENT_CLASSES = {
        "proposal-table--header",
        "proposal-table--cursor",
        "proposal-table--busy",
        "proposal-table--dim",
        "proposal-table--pending",
        "proposal-table--warning",
    }

    DEFAULT_CSS = """
    ProposalTable > .proposal-table--header { background: $panel; color: $text; text-style: bold; }
    ProposalTable > .proposal-table--cursor { background: $block-cursor-blurred-background; }
    ProposalTable:focus > .proposal-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    ProposalTable > .proposal-table--busy { color: $text-disabled; }
    ProposalTable > .proposal-table--dim { color: $text-muted; }
    ProposalTable > .proposal-table--pending { color: $text-warning; text-style: bold; }
    ProposalTable > .proposal-table--warning { color: $text-warning; }
    """

    COMPONENT_PREFIX = "proposal-table"
    COLUMNS = COLUMNS

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No relation proposals."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another proposal (None when the table is empty)."""

        table: ProposalTable
        pair: Pair | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a proposal."""

        table: ProposalTable
        pair: Pair

    def row_key(self, row: RelationProposal) -> Pair:
        return (row.source_name, row.target_name)

    def _announce(self, key: Pair | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: Pair) -> None:
        self.post_message(self.Selected(self, key))

    def cell_style(self, key: str, row: RelationProposal) -> Style:
        if key == "" and row.status == "pending":
            return self.get_component_rich_style("proposal-table--pending")
        if key == "statuses" and {row.source_status, row.target_status} & WARN_STATUSES:
            return self.get_component_rich_style("proposal-table--warning")
        if key == "proposed":
            return self.get_component_rich_style("proposal-table--dim")
        return Style()


def statuses_text(row: RelationProposal) -> str:
    """`active · deprecated`: the two skills' statuses."""
    return f"{one_line(row.source_status, 10) or '?'} · {one_line(row.target_status, 10) or '?'}"


def pair_text(row: RelationProposal, limit: int = 200) -> str:
    """`a ↔ b`, each name on one neutralised line."""
    return f"{one_line(row.source_name, limit)} ↔ {one_line(row.target_name, limit)}"
