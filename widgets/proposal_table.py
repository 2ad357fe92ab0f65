"""Computed relation proposals waiting for review, one per line (line API), for the review
queue: the pair, how many sessions used both, the two skills' statuses, when proposed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import RelationProposal
from store.text import one_line
from widgets.line_table import LineTable, fit, navigation_bindings, pad
from widgets.pattern_text import when

Pair = tuple[str, str]

#: (title, width); width 0 takes what is left.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("", 1),
    ("often used together", 0),
    ("shared", 6),
    ("statuses", 23),
    ("proposed", 16),
)
STATUS_GLYPHS = {"pending": "?", "accepted": "✓", "rejected": "✗"}
#: Skill statuses that make a reviewer look twice.
WARN_STATUSES = frozenset({"deprecated", "retired", "uninstalled", "missing"})


class ProposalTable(LineTable[RelationProposal, Pair]):
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
        Binding(
            "enter",
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
    KEEP_POSITION = True

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

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._busy: set[Pair] = set()

    def row_key(self, row: RelationProposal) -> Pair:
        return (row.source_name, row.target_name)

    @property
    def busy(self) -> frozenset[Pair]:
        return frozenset(self._busy)

    def set_busy(self, pair: Pair, busy: bool = True) -> None:
        """Flag a proposal while a decision on it is being written (drawn dimmed)."""
        if busy:
            self._busy.add(pair)
        else:
            self._busy.discard(pair)
        self.refresh()

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: Pair | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: Pair) -> None:
        self.post_message(self.Selected(self, key))

    def _rows_replaced(self) -> None:
        self._busy &= {self.row_key(p) for p in self._rows}

    # -- rendering -----------------------------------------------------------------

    def render_header(self, width: int) -> Strip:
        return self._text_line(_header(width), "header", width)

    def render_row(self, row: RelationProposal, is_cursor: bool, width: int) -> Strip:
        cells = _cells(row, width)
        if is_cursor:
            base = self.get_component_rich_style("proposal-table--cursor")
            segments = [Segment(text, base) for _, text in cells]
        elif self.row_key(row) in self._busy:
            dim = self.rich_style + self.get_component_rich_style("proposal-table--busy")
            segments = [Segment(text, dim) for _, text in cells]
        else:
            segments = [
                Segment(text, self.rich_style + self._cell_style(key, row)) for key, text in cells
            ]
        return Strip(segments).crop(0, width).simplify()

    def _cell_style(self, key: str, row: RelationProposal) -> Style:
        if key == "" and row.status == "pending":
            return self.get_component_rich_style("proposal-table--pending")
        if key == "statuses" and {row.source_status, row.target_status} & WARN_STATUSES:
            return self.get_component_rich_style("proposal-table--warning")
        if key == "proposed":
            return self.get_component_rich_style("proposal-table--dim")
        return Style()


def _widths(width: int) -> list[int]:
    fixed = sum(w for _, w in COLUMNS)
    return [w if w else max(width - fixed - len(COLUMNS), 10) for _, w in COLUMNS]


def _header(width: int) -> str:
    return " ".join(pad(title, w) for (title, _), w in zip(COLUMNS, _widths(width), strict=True))


def pair_text(row: RelationProposal, limit: int = 200) -> str:
    """`a ↔ b`, each name on one neutralised line."""
    return f"{one_line(row.source_name, limit)} ↔ {one_line(row.target_name, limit)}"


def _cells(row: RelationProposal, width: int) -> list[tuple[str, str]]:
    values = [
        STATUS_GLYPHS.get(row.status, "?"),
        pair_text(row),
        str(row.shared),
        f"{one_line(row.source_status, 10) or '?'} · {one_line(row.target_status, 10) or '?'}",
        when(row.proposed_at),
    ]
    return [
        (key, fit(value, w) + " ")
        for (key, _), w, value in zip(COLUMNS, _widths(width), values, strict=True)
    ]
