"""One column of the Graph screen: the skills the centred skill depends on, those that depend
on it (its blast radius, as a tree indented by depth) or those merely related to it. Drawn
with the line API, so a radius of thousands scrolls smoothly; enter re-centres.

Rows are `GraphRow`s, built from the store's data by `dependency_rows`, `dependent_rows` and
`related_rows`. Names come from SKILL.md files: they are drawn literally (`one_line`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import DEPENDENCY_TYPES, BlastRadius, Dependency, Dependent, GraphFocus
from store.text import one_line
from widgets.graph_style import glyph, status_style
from widgets.keys import bind
from widgets.line_table import LineTable, fit, navigation_bindings

#: Widths of the relation and status columns; the name takes the rest.
RELATION_WIDTH = 17
STATUS_WIDTH = 10
#: Below this width the status column is left out.
NARROW = 56


@dataclass(frozen=True)
class GraphRow:
    """One line of a graph column."""

    name: str
    status: str  # the skill's status, or "missing"
    relation: str  # how it is related to the skill above it (or to the centre)
    depth: int = 1  # 1: next to the centre; dependents nest deeper
    note: str = ""  # "by hand", "no such skill", …
    more: int = 0  # a "+N more" line (not a skill) when > 0

    @property
    def key(self) -> str:
        return f"{self.relation}\t{self.name}\t{self.more}"


def dependencies_of(focus: GraphFocus) -> list[Dependency]:
    """What the centred skill depends on: its `requires` and `extends` relations (the others
    are related skills, as `librarian blast` has them)."""
    return [d for d in focus.dependencies if d.relation in DEPENDENCY_TYPES]


def dependency_rows(dependencies: Sequence[Dependency]) -> list[GraphRow]:
    """What the skill depends on, dangling targets marked."""
    return [
        GraphRow(
            d.name,
            d.status,
            d.relation,
            note=", ".join(
                n
                for n in (
                    "no such skill" if d.missing else ("by hand" if d.manual else ""),
                    f"pinned to v{d.pin}" if d.pin else "",
                )
                if n
            ),
        )
        for d in dependencies
    ]


def dependent_rows(focus: GraphFocus) -> list[GraphRow]:
    """The listed dependents as a tree — each under the skill it depends on along its
    shortest path — and a last "+N more" line when not all of them are listed."""
    radius = focus.radius
    rows = [
        GraphRow(d.name, d.status, d.relation, d.depth, f"pins v{d.pin}" if d.pin else "")
        for d in _tree(radius)
    ]
    hidden = focus.dependent_count - len(radius.dependents)
    if hidden > 0:
        rows.append(GraphRow("", "", "", more=hidden))
    return rows


def related_rows(focus: GraphFocus) -> list[GraphRow]:
    """Skills merely related to the centred one (complements, enables, often used with):
    those it points at (`→ enables`), then those pointing at it (`← complements`)."""
    outgoing = [
        GraphRow(
            d.name,
            d.status,
            f"→ {d.relation}",
            note="no such skill" if d.missing else ("by hand" if d.manual else ""),
        )
        for d in focus.dependencies
        if d.relation not in DEPENDENCY_TYPES
    ]
    incoming = [GraphRow(r.name, r.status, f"← {r.relation}") for r in focus.radius.related]
    return outgoing + incoming


def _tree(radius: BlastRadius) -> list[Dependent]:
    children: dict[str, list[Dependent]] = defaultdict(list)
    for d in radius.dependents:
        children[d.path[1]].append(d)
    ordered: list[Dependent] = []
    stack = list(reversed(children[radius.skill]))
    while stack:
        d = stack.pop()
        ordered.append(d)
        stack += reversed(children.get(d.name, []))
    return ordered


def _label(row: GraphRow) -> str:
    """The skill's name and its note, as listed."""
    return one_line(row.name, 300) + (f" ({row.note})" if row.note else "")


class GraphList(LineTable[GraphRow, str]):
    """Skills around the centred one, one per line, under a title line.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | centre the graph on the skill under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "graph",
            up="Previous skill",
            down="Next skill",
            page_up="Up a page",
            page_down="Down a page",
            first="First skill",
            last="Last skill",
        ),
        bind(
            "open",
            "select",
            "Centre",
            show=False,
            id="graph.select",
            tooltip="Centre the graph on this skill (backspace comes back)",
        ),
    ]

    COMPONENT_CLASSES = {
        "graph-list--header",
        "graph-list--cursor",
        "graph-list--dim",
        "graph-list--blast",
    }

    DEFAULT_CSS = """
    GraphList > .graph-list--header { background: $panel; color: $text; text-style: bold; }
    GraphList > .graph-list--cursor { background: $block-cursor-blurred-background; }
    GraphList:focus > .graph-list--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    GraphList > .graph-list--dim { color: $text-muted; }
    GraphList > .graph-list--blast { color: $text-error; text-style: bold; }
    """

    COMPONENT_PREFIX = "graph-list"

    #: The header line (set by the screen), drawn in the alert colour when `alert` is set.
    title: str = ""
    alert: bool = False
    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "None."
    #: The longest indent, name and note listed (the relation column follows it).
    _label_width = 0

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto a row (None when the list is empty)."""

        graph_list: GraphList
        row: GraphRow | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a row."""

        graph_list: GraphList
        row: GraphRow

    def row_key(self, row: GraphRow) -> str:
        return row.key

    def show(
        self, title: str, rows: Sequence[GraphRow], empty: str, *, alert: bool = False
    ) -> None:
        """New rows under a new title; the cursor goes to the top."""
        self.title = title
        self.alert = alert
        self.empty_text = empty
        self._rows = []  # a new centre: the cursor does not follow a row across
        self.set_rows(rows)

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, self.current))

    def _select(self, key: str) -> None:
        current = self.current
        if current is not None:
            self.post_message(self.Selected(self, current))

    # -- rendering -----------------------------------------------------------------

    def render_header(self, width: int) -> Strip:
        header = self._text_line(f" {self.title}", "header", width)
        if not self.alert:
            return header
        blast = self.get_component_rich_style("graph-list--blast")
        return Strip([Segment(s.text, (s.style or Style()) + blast) for s in header])

    def render_row(self, row: GraphRow, is_cursor: bool, width: int) -> Strip:
        cursor = self.get_component_rich_style("graph-list--cursor")
        if row.more:
            text = f"  … +{row.more:,} more (counted, not listed)"
            style = cursor if is_cursor else self.get_component_rich_style("graph-list--dim")
            return Strip([Segment(fit(text, width), style)])
        segments = [
            Segment(text, cursor if is_cursor else self.rich_style + style)
            for text, style in self._cells(row, width)
        ]
        fill = cursor if is_cursor else self.rich_style
        return Strip(segments).adjust_cell_length(width, fill).simplify()

    def _rows_replaced(self) -> None:
        # The relation and status columns follow the longest name (not the far edge).
        self._label_width = max(
            (2 * min(r.depth - 1, 12) + len(_label(r)) for r in self.rows if not r.more),
            default=0,
        )

    def _relation_width(self) -> int:
        """As wide as the longest relation listed, at most `RELATION_WIDTH` (names get the
        rest)."""
        return min(max((len(r.relation) for r in self.rows), default=0), RELATION_WIDTH)

    def _cells(self, row: GraphRow, width: int) -> list[tuple[str, Style]]:
        indent = "  " * min(row.depth - 1, 12)
        # A narrow column drops the status word (the glyph's colour still says it).
        status_width = STATUS_WIDTH + 1 if width >= NARROW else 0
        relation_width = self._relation_width()
        room = min(width - 3 - relation_width - 1 - status_width, self._label_width)
        name_width = max(room - len(indent), 6)
        name = one_line(row.name, 300)
        dim = self.get_component_rich_style("graph-list--dim")
        colour = status_style(row.status)
        label = fit(_label(row), name_width)
        cells = [
            (f" {indent}{glyph(row.status)} ", colour),
            (label[: len(name)], colour if row.status == "missing" else Style()),
            (label[len(name) :], colour if row.note == "no such skill" else dim),
            (" " + fit(row.relation, relation_width), dim),
        ]
        if status_width:
            cells.append((" " + fit(row.status, STATUS_WIDTH), colour))
        return cells
