"""The Patterns screen's table: patterns grouped by kind, drawn with the line API.

Rows are `Pattern`s; their graduation checks arrive later (checking every pattern takes a
while on a big library) through `set_checks`, and fill the retrieval, criteria and state
columns in. Decayed patterns are dimmed, graduated ones marked, re-validation flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import PATTERN_KINDS, GraduationCheck, Pattern
from store.text import one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings
from widgets.pattern_text import criteria_met, pattern_state, retrieval_rate

#: The columns; the glyph, retrieval rate, criteria met and state follow the pattern's
#: graduation check (`PatternTable.cell_text`).
COLUMNS: tuple[Column[Pattern], ...] = (
    Column("", 1),
    Column("kind", 8, lambda r: one_line(r.kind, 20)),
    Column("title", 0, lambda r: one_line(r.title, 400)),
    Column("nodes", 5, lambda r: str(r.members), right=True),
    Column("sess", 4, lambda r: str(r.sessions), right=True),
    Column("retr", 5, right=True),
    Column("conf", 4, lambda r: f"{r.confidence:.2f}"[:4], right=True),
    Column("met", 3, right=True),
    Column("state", 11),
)
STATE_GLYPHS = {
    "re-validate": "!",
    "graduated": "◆",
    "draft": "✎",
    "eligible": "✓",
    "active": " ",
    "decayed": "·",
}


def matching(patterns: Iterable[Pattern], kind: str | None, text: str) -> list[Pattern]:
    """The patterns of `kind` (None: every kind) whose words contain `text` (any case),
    grouped by kind in the design's order (pitfalls, strategies, insights); each group keeps
    the order it was given in."""
    needle = text.strip().casefold()
    order = {k: i for i, k in enumerate(PATTERN_KINDS)}
    found = [
        p
        for p in patterns
        if (kind is None or p.kind == kind) and (not needle or needle in _haystack(p))
    ]
    return sorted(found, key=lambda p: order.get(p.kind, len(order)))


def _haystack(pattern: Pattern) -> str:
    words = (pattern.title, pattern.summary, pattern.trigger, pattern.resolution)
    ids = (pattern.pattern_id, pattern.project, pattern.skill_name)
    return "\n".join((*words, *ids)).casefold()


class PatternTable(LineTable[Pattern, str]):
    """Patterns, one per line; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the pattern (its member nodes) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "patterns",
            up="Previous pattern",
            down="Next pattern",
            page_up="Up a page",
            page_down="Down a page",
            first="First pattern",
            last="Last pattern",
        ),
        bind(
            "open",
            "select",
            "Members",
            show=False,
            id="patterns.select",
            tooltip="To the pattern's member nodes",
        ),
    ]

    COMPONENT_CLASSES = {
        "pattern-table--header",
        "pattern-table--cursor",
        "pattern-table--dim",
        "pattern-table--pitfall",
        "pattern-table--strategy",
        "pattern-table--insight",
        "pattern-table--eligible",
        "pattern-table--draft",
        "pattern-table--graduated",
        "pattern-table--re-validate",
    }

    DEFAULT_CSS = """
    PatternTable > .pattern-table--header { background: $panel; color: $text; text-style: bold; }
    PatternTable > .pattern-table--cursor { background: $block-cursor-blurred-background; }
    PatternTable:focus > .pattern-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    PatternTable > .pattern-table--dim { color: $text-muted; }
    PatternTable > .pattern-table--pitfall { color: $text-error; }
    PatternTable > .pattern-table--strategy { color: $text-primary; }
    PatternTable > .pattern-table--insight { color: $text-accent; }
    PatternTable > .pattern-table--eligible { color: $text-success; text-style: bold; }
    PatternTable > .pattern-table--draft { color: $text-warning; text-style: bold; }
    PatternTable > .pattern-table--graduated { color: $text-success; }
    PatternTable > .pattern-table--re-validate { color: $text-warning; text-style: bold reverse; }
    """

    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "pattern-table"
    KEEP_POSITION = True

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No patterns."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another pattern (None when the table is empty)."""

        table: PatternTable
        pattern_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a pattern."""

        table: PatternTable
        pattern_id: str

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._checks: dict[str, GraduationCheck] = {}
        self._index: dict[str, int] = {}

    # -- public API ----------------------------------------------------------------

    def row_key(self, row: Pattern) -> str:
        return row.pattern_id

    def index_of(self, key: str) -> int | None:
        return self._index.get(key)

    @property
    def checks(self) -> Mapping[str, GraduationCheck]:
        return self._checks

    def check_of(self, pattern_id: str) -> GraduationCheck | None:
        return self._checks.get(pattern_id)

    def set_checks(self, checks: Sequence[GraduationCheck]) -> None:
        """Every pattern's graduation check (replaces the ones known)."""
        self._checks = {c.pattern.pattern_id: c for c in checks}
        self.refresh()

    def update_check(self, check: GraduationCheck) -> None:
        """One pattern's fresh check (and the pattern as it is now, when it is listed)."""
        self._checks[check.pattern.pattern_id] = check
        index = self.index_of(check.pattern.pattern_id)
        if index is not None:
            self._rows[index] = check.pattern
            self.refresh_lines(index - int(self.scroll_offset.y) + 1)  # only its line

    def state_of(self, pattern: Pattern) -> str:
        return pattern_state(pattern, self._checks.get(pattern.pattern_id))

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    def _rows_replaced(self) -> None:
        self._index = {p.pattern_id: i for i, p in enumerate(self._rows)}

    # -- rendering -----------------------------------------------------------------

    def cell_text(self, column: Column[Any], row: Pattern) -> str:
        if column.text is not None:
            return column.text(row)
        check = self._checks.get(row.pattern_id)
        if column.title == "retr":
            rate = retrieval_rate(check)
            return "…" if rate is None else f"{rate:.2f}"
        if column.title == "met":
            return criteria_met(check)
        state = pattern_state(row, check)
        return STATE_GLYPHS.get(state, " ") if column.title == "" else state

    def row_style(self, row: Pattern) -> Style | None:
        if self.state_of(row) == "decayed":  # dimmed whole
            return self.get_component_rich_style("pattern-table--dim")
        return None

    def cell_style(self, key: str, row: Pattern) -> Style:
        if key == "kind":
            return self.get_component_rich_style(f"pattern-table--{row.kind}")
        state = self.state_of(row) if key in ("", "state") else ""
        if key in ("", "state") and state not in ("active", "decayed"):
            return self.get_component_rich_style(f"pattern-table--{state}")
        if key in ("state", "retr", "met"):
            return self.get_component_rich_style("pattern-table--dim")
        return Style()
