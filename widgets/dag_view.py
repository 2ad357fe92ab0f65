"""A session's reasoning DAG drawn git-log style with the line API (smooth at 10,000+ rows).

The layout is `widgets.dag_layout.layout_dag` (pure); this widget only draws its rows, with a
row-number gutter (back-references such as `↑#3` name these numbers) and a status marker.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from store.models import NODE_TYPES, Edge, Node
from widgets.dag_layout import (
    DagRow,
    arc_nodes,
    layout_dag,
    links,
    message_order,
    ordered_nodes,
    type_word,
)
from widgets.keys import bind
from widgets.line_table import navigation_bindings, wrap

#: The component class that colours each node type's glyph and type word.
TYPE_CLASSES: dict[str, str] = {t: f"dag-view--{t.lower().replace('_', '-')}" for t in NODE_TYPES}
#: Statuses drawn dimmed (a merged node is a duplicate of another).
DIM_STATUSES = frozenset({"rejected", "merged", "forgotten"})
PENDING_MARK = "•"


class DagView(ScrollView, can_focus=True):
    """Nodes one per line, oldest first; edges as lanes on the left, labels on the right.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | left | jump to a parent (again: the next parent, when there are several) |
    | right | jump to a child (again: the next child) |
    | enter | select the node under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "dag",
            up="Previous node",
            down="Next node",
            page_up="Up a page",
            page_down="Down a page",
            first="First node",
            last="Last node",
        ),
        bind(
            "left",
            "parent",
            "Parent",
            id="dag.parent",
            tooltip="Jump to a node with an edge into this one; press again for the next",
        ),
        bind(
            "right",
            "child",
            "Child",
            id="dag.child",
            tooltip="Jump to a node this one has an edge into; press again for the next",
        ),
        bind("open", "select", "Open", id="dag.select", tooltip="Open the node under the cursor"),
    ]

    COMPONENT_CLASSES = {
        *TYPE_CLASSES.values(),
        "dag-view--cursor",
        "dag-view--gutter",
        "dag-view--lanes",
        "dag-view--back-ref",
        "dag-view--pending",
        "dag-view--rejected",
        "dag-view--arc",
    }

    DEFAULT_CSS = """
    DagView {
        background: $surface;
        scrollbar-gutter: stable;
    }
    DagView > .dag-view--cursor { background: $block-cursor-blurred-background; }
    DagView:focus > .dag-view--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    DagView > .dag-view--hypothesis { color: $text-accent; }
    DagView > .dag-view--investigation { color: $text-primary; }
    DagView > .dag-view--discovery { color: $text-primary; text-style: bold; }
    DagView > .dag-view--pivot { color: $text-warning; text-style: bold; }
    DagView > .dag-view--dead-end { color: $text-error; text-style: bold; }
    DagView > .dag-view--solution { color: $text-success; text-style: bold; }
    DagView > .dag-view--context-load { color: $text-muted; }
    DagView > .dag-view--gutter { color: $text-muted; }
    DagView > .dag-view--lanes { color: $text-muted; }
    DagView > .dag-view--back-ref { color: $text-muted; text-style: italic; }
    DagView > .dag-view--pending { color: $text-warning; text-style: bold; }
    DagView > .dag-view--rejected { color: $text-disabled; }
    DagView > .dag-view--arc { background: $warning 12%; color: $text-warning; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    #: Tint the rows on a DEAD_END → PIVOT/SOLUTION path (`dag-view--arc`).
    highlight_arcs: reactive[bool] = reactive(False)

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto a node (None when nothing is shown)."""

        dag_view: DagView
        node_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a node."""

        dag_view: DagView
        node_id: str

    def __init__(
        self,
        *,
        max_lanes: int = 6,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_lanes = max_lanes
        #: Shown on the first line when there are no rows (set by the screen).
        self.empty_text = "No nodes."
        self._graph_nodes: list[Node] = []  # all of them, in message order
        self._edges: list[Edge] = []
        self._types: frozenset[str] | None = None
        self._by_id: dict[str, Node] = {}
        self._rows: list[DagRow] = []
        self._row_of: dict[str, int] = {}
        self._parents: Mapping[str, tuple[str, ...]] = {}
        self._children: Mapping[str, tuple[str, ...]] = {}
        self._arcs: frozenset[str] = frozenset()
        # The last parent/child jump (action, origin, target, step), so pressing it again cycles.
        self._jump: tuple[str, str, str, int] | None = None
        self._jumping = False

    # -- public API ----------------------------------------------------------------

    @property
    def rows(self) -> Sequence[DagRow]:
        return self._rows

    @property
    def current(self) -> Node | None:
        if 0 <= self.cursor < len(self._rows):
            return self._by_id[self._rows[self.cursor].node_id]
        return None

    @property
    def arcs(self) -> frozenset[str]:
        """Ids of the shown nodes on a DEAD_END → PIVOT/SOLUTION path."""
        return self._arcs

    def set_graph(self, nodes: Sequence[Node], edges: Sequence[Edge]) -> None:
        """Replace the graph and lay it out, keeping the cursor on the same node if shown."""
        keep = self.current
        self._graph_nodes = ordered_nodes(nodes)
        self._by_id = {node.node_id: node for node in self._graph_nodes}
        self._edges = list(edges)
        self._relayout(keep)

    def filter_types(self, types: Collection[str] | None) -> None:
        """Show only nodes of these types (None: all); edges to hidden nodes are dropped."""
        self._types = None if types is None else frozenset(types)
        self._relayout(self.current)

    def move_to(self, node_id: str) -> bool:
        row = self._row_of.get(node_id)
        if row is not None:
            self.cursor = row
        return row is not None

    # -- actions -------------------------------------------------------------------

    def action_cursor_up(self) -> None:
        self.cursor = max(self.cursor - 1, 0)

    def action_cursor_down(self) -> None:
        self.cursor = min(self.cursor + 1, self._last())

    def action_page_up_rows(self) -> None:
        self.cursor = max(self.cursor - self._page(), 0)

    def action_page_down_rows(self) -> None:
        self.cursor = min(self.cursor + self._page(), self._last())

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self._last()

    def action_parent(self) -> None:
        self._jump_along("parent", self._parents)

    def action_child(self) -> None:
        self._jump_along("child", self._children)

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current.node_id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys the binding out in the footer instead of hiding it.
        table = {"parent": self._parents, "child": self._children}.get(action)
        if table is None:
            return True
        current = self.current
        return True if current is not None and table.get(current.node_id) else None

    # -- watchers ------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        if not self._jumping:
            self._jump = None
        top = int(self.scroll_offset.y)
        self._scroll_to_cursor()
        if int(self.scroll_offset.y) == top:
            for row in {old, new}:
                self.refresh_lines(row - top)
        else:
            self.refresh()
        self.refresh_bindings()
        self.post_message(self.Highlighted(self, self.current.node_id if self.current else None))

    # -- helpers -------------------------------------------------------------------

    def _relayout(self, keep: Node | None) -> None:
        shown = [n for n in self._graph_nodes if self._types is None or n.type in self._types]
        self._rows = layout_dag(shown, self._edges, self.max_lanes)
        self._row_of = {row.node_id: index for index, row in enumerate(self._rows)}
        self._parents, self._children = links(self._rows, self._edges)
        self._arcs = arc_nodes(shown, self._edges)
        self.virtual_size = Size(self.size.width, max(len(self._rows), 1))
        self.cursor = self._nearest_row(keep)
        self.refresh()

    def _nearest_row(self, node: Node | None) -> int:
        """The row of `node`, else of the first shown node after it in message order."""
        if node is None or not self._rows:
            return 0
        if node.node_id in self._row_of:
            return self._row_of[node.node_id]
        keys = [message_order(self._by_id[row.node_id]) for row in self._rows]
        return min(bisect_left(keys, message_order(node)), self._last())

    def _jump_along(self, action: str, table: Mapping[str, tuple[str, ...]]) -> None:
        current = self.current
        if current is None:
            return
        origin, step = current.node_id, 0
        last = self._jump
        # Pressed again right after a jump: the next target of the same origin, if it has more.
        if last and (last[0], last[2]) == (action, origin) and len(table.get(last[1], ())) > 1:
            origin, step = last[1], last[3] + 1
        targets = table.get(origin, ())
        if not targets:
            return
        target = targets[step % len(targets)]
        self._jumping = True
        try:
            self.move_to(target)
        finally:
            self._jumping = False
        self._jump = (action, origin, target, step)

    def _last(self) -> int:
        return max(len(self._rows) - 1, 0)

    def _page(self) -> int:
        return max(self.size.height - 1, 1)

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        visible = max(self.size.height, 1)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False)

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, max(len(self._rows), 1))

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < len(self._rows):
            self.cursor = index

    # -- rendering -----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = int(self.scroll_offset.y) + y
        if not self._rows:
            lines = wrap(self.empty_text, width)
            if y >= len(lines):
                return Strip.blank(width, self.rich_style)
            style = self.get_component_rich_style("dag-view--gutter")
            return Strip([Segment(lines[y], style)]).adjust_cell_length(width, self.rich_style)
        if index >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        return self._row_strip(index, width)

    def _row_strip(self, index: int, width: int) -> Strip:
        row = self._rows[index]
        node = self._by_id[row.node_id]
        on_arc = self.highlight_arcs and row.node_id in self._arcs
        if index == self.cursor:
            # The cursor row is drawn in the cursor's colours only: they must stay readable.
            base = self.get_component_rich_style("dag-view--cursor")
            segments = [Segment(text, base) for text, _ in self._pieces(index, row, node, on_arc)]
        else:
            base = self.get_component_rich_style("dag-view--arc") if on_arc else self.rich_style
            background = Style(bgcolor=base.bgcolor)
            segments = [
                Segment(text, self._style(key) + background)
                for text, key in self._pieces(index, row, node, on_arc)
            ]
        strip = Strip(segments)
        if strip.cell_length > width > 1:
            strip = Strip([*strip.crop(0, width - 1), Segment("…", base)])
        return strip.adjust_cell_length(width, base).simplify()

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component) if component else self.rich_style

    def _pieces(self, index: int, row: DagRow, node: Node, on_arc: bool) -> list[tuple[str, str]]:
        """(text, component class or "" for plain text) from left to right."""
        dim = node.status in DIM_STATUSES
        kind = "dag-view--rejected" if dim else TYPE_CLASSES.get(node.type, "")
        word = len(type_word(node.type))
        pieces = [
            (f"{index + 1:>{len(str(len(self._rows)))}} ", "dag-view--gutter"),
            (PENDING_MARK if node.status == "pending" else " ", "dag-view--pending"),
            (" " + row.lanes, "dag-view--arc" if on_arc else "dag-view--lanes"),
            (row.glyph, kind),
            (" ", ""),
            (row.label[:word], kind),
            (row.label[word:], "dag-view--rejected" if dim else ""),
        ]
        if row.back_refs:
            pieces.append(("  " + " ".join(row.back_refs), "dag-view--back-ref"))
        return pieces
