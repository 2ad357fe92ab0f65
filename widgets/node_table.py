"""The review queue's table of reasoning nodes, drawn with the line API (smooth at 10,000+ rows).

Rows can be marked for a decision on several nodes at once, and flagged busy while a decision
on them is being written, so the cursor can move on before the write returns. Grouped by
session, each session's rows sit under a header line (session, project, start, node count);
the cursor moves over the rows only.

A suppressed node (below the knowledge bar) is marked `⊘`; its reason follows the summary.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import NODE_TYPES, Node
from store.text import home_relative, one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, fit, fit_cell, navigation_bindings, pad

#: The columns; the flags (marked, busy, status) and the age follow the table's state
#: (`NodeTable.cell_text`).
#: Below this width the informativeness and session columns are left out (the detail pane
#: shows both), so the summary keeps room.
NARROW = 100
COLUMNS: tuple[Column[Node], ...] = (
    Column("", 3),
    Column("type", 13, lambda r: one_line(r.type, 20)),
    Column("conf", 4, lambda r: f"{r.confidence:.2f}"[:4]),
    Column("info", 4, lambda r: f"{r.informativeness:.2f}"[:4], narrow=NARROW),
    Column("summary", 0, lambda r: one_line(r.summary, 400)),
    Column("project", 18, lambda r: one_line(home_relative(r.project), 300), keep_end=True),
    Column("session", 8, lambda r: one_line(r.session_id, 40), narrow=NARROW),
    Column("age", 4),
)
#: The component class that colours each node type's word.
TYPE_CLASSES: dict[str, str] = {t: f"node-table--{t.lower().replace('_', '-')}" for t in NODE_TYPES}
STATUS_GLYPHS = {
    "pending": " ",
    "approved": "✓",
    "rejected": "✗",
    "merged": "=",
    "forgotten": "⌫",
    "suppressed": "⊘",
}
MARK_GLYPH = "●"
BUSY_GLYPH = "…"
#: Confidence below which the value is dimmed (the warm tier starts at 0.35).
LOW_CONFIDENCE = 0.5
#: Informativeness below which the value is dimmed (the knowledge bar's scale is 0..1).
LOW_INFORMATIVENESS = 0.5
#: The share of the summary column a suppressed node's reason may take at most.
REASON_SHARE = 0.5


class NodeTable(LineTable[Node, str]):
    """Nodes, one per line; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | m | mark or unmark the node under the cursor, then move down |
    | ctrl+a | mark every row (again: unmark them all) |
    | enter | select the node under the cursor |

    `group_by_session` draws a header line above each session's rows.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "nodes",
            up="Previous node",
            down="Next node",
            page_up="Up a page",
            page_down="Down a page",
            first="First node",
            last="Last node",
        ),
        bind(
            "mark",
            "toggle_mark",
            "Mark",
            show=False,
            id="nodes.mark",
            tooltip="Mark or unmark this node; a decision applies to every marked node",
        ),
        bind(
            "mark_all",
            "mark_all",
            "Mark all",
            show=False,
            id="nodes.mark_all",
            tooltip="Mark every node in the list (again: unmark them all)",
        ),
        bind("open", "select", "Open", show=False, id="nodes.select", tooltip="Open the node"),
    ]

    COMPONENT_CLASSES = {
        *TYPE_CLASSES.values(),
        "node-table--header",
        "node-table--cursor",
        "node-table--marked",
        "node-table--busy",
        "node-table--dim",
        "node-table--group",
        "node-table--reason",
    }

    DEFAULT_CSS = """
    NodeTable > .node-table--header { background: $panel; color: $text; text-style: bold; }
    NodeTable > .node-table--cursor { background: $block-cursor-blurred-background; }
    NodeTable:focus > .node-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    NodeTable > .node-table--marked { background: $accent 25%; }
    NodeTable > .node-table--busy { color: $text-disabled; }
    NodeTable > .node-table--dim { color: $text-muted; }
    NodeTable > .node-table--group { background: $boost; color: $text-secondary; text-style: bold; }
    NodeTable > .node-table--reason { color: $text-warning; text-style: italic; }
    NodeTable > .node-table--hypothesis { color: $text-accent; }
    NodeTable > .node-table--investigation { color: $text-primary; }
    NodeTable > .node-table--discovery { color: $text-primary; text-style: bold; }
    NodeTable > .node-table--pivot { color: $text-warning; text-style: bold; }
    NodeTable > .node-table--dead-end { color: $text-error; text-style: bold; }
    NodeTable > .node-table--solution { color: $text-success; text-style: bold; }
    NodeTable > .node-table--context-load { color: $text-muted; }
    """

    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "node-table"
    KEEP_POSITION = True
    EAGER_SCROLL = True

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No nodes."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another node (None when the table is empty)."""

        table: NodeTable
        node_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a node."""

        table: NodeTable
        node_id: str

    @dataclass
    class MarksChanged(Message):
        """Nodes were marked or unmarked."""

        table: NodeTable
        count: int

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._index: dict[str, int] = {}
        self._marked: set[str] = set()
        self._busy: set[str] = set()
        self._now: datetime | None = None
        # Grouped by session (`_starts` is not None): the line of each row, the row on each
        # line (-1 on a header), and each header line's (first row, row count).
        self._starts: Mapping[str, str] | None = None
        self._session_times: Mapping[str, str] = {}
        self._lines: list[int] = []
        self._line_rows: list[int] = []
        self._heads: dict[int, tuple[int, int]] = {}

    # -- public API ----------------------------------------------------------------

    def row_key(self, row: Node) -> str:
        return row.node_id

    @property
    def marked(self) -> tuple[str, ...]:
        """Ids of the marked nodes, in row order."""
        return tuple(n.node_id for n in self._rows if n.node_id in self._marked)

    @property
    def mark_count(self) -> int:
        """How many nodes are marked (without walking the rows, unlike `marked`)."""
        return len(self._marked)

    @property
    def busy(self) -> frozenset[str]:
        return frozenset(self._busy)

    def set_now(self, now: str) -> None:
        """The moment ages are measured from (ISO 8601)."""
        self._now = _parse_time(now)
        self.refresh()

    def set_session_times(self, starts: Mapping[str, str]) -> None:
        """When each session started, by id: a node's `age` is its session's (when the work
        happened), not the time since it was ingested."""
        self._session_times = starts
        self.refresh()

    def index_of(self, node_id: str) -> int | None:
        return self._index.get(node_id)

    @property
    def grouped(self) -> bool:
        """True while the rows are drawn under session headers."""
        return self._starts is not None

    def group_by_session(self, starts: Mapping[str, str] | None) -> None:
        """Draw a header line above each run of rows from one session (`starts`: when each
        session started, by id, shown in its header); None: one plain list. The rows keep
        their order: the store gives each session's rows together."""
        self._starts = starts
        self._layout()
        self._resize()
        self._scroll_to_cursor()
        self.refresh()

    def update_nodes(self, nodes: Iterable[Node], keep_status: str | None = None) -> None:
        """Take decided nodes back: rows whose status is no longer `keep_status` go (when it
        is given), the others are replaced in place. The cursor stays on its node; when that
        node went, on the row that took its place."""
        changed = {n.node_id: n for n in nodes}
        self._busy -= changed.keys()
        gone = {i for i, n in changed.items() if keep_status and n.status != keep_status}
        rows = [changed.get(r.node_id, r) for r in self._rows if r.node_id not in gone]
        self._replace_rows(rows, gone)

    def set_busy(self, node_ids: Collection[str], busy: bool = True) -> None:
        """Flag rows while a decision on them is being written (drawn dimmed)."""
        if busy:
            self._busy |= set(node_ids)
        else:
            self._busy -= set(node_ids)
        self.refresh()

    def next_pending(self, statuses: Collection[str] = ("pending",)) -> int | None:
        """The first row after the cursor that waits for a decision (its status is one of
        `statuses`) and is not busy, else the last such row before it."""
        cursor: int = self.cursor
        after = range(cursor + 1, len(self._rows))
        before = range(min(cursor, len(self._rows)) - 1, -1, -1)
        for index in chain(after, before):
            node = self._rows[index]
            if node.status in statuses and node.node_id not in self._busy:
                return index
        return None

    def move_to_next_pending(self, statuses: Collection[str] = ("pending",)) -> bool:
        index = self.next_pending(statuses)
        if index is not None:
            self.cursor = index
        return index is not None

    def clear_marks(self) -> None:
        if self._marked:
            self._marked.clear()
            self._marks_changed()

    # -- actions -------------------------------------------------------------------

    def action_toggle_mark(self) -> None:
        node = self.current
        if node is None:
            return
        self._marked ^= {node.node_id}
        self._marks_changed()
        self.cursor = self._clamp(self.cursor + 1)

    def action_mark_all(self) -> None:
        everything = self._index.keys()
        self._marked = set() if self._marked >= everything else set(everything)
        self._marks_changed()

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    def _rows_replaced(self) -> None:
        # Marks on nodes that are gone are dropped.
        self._reindex()
        self._marked &= self._index.keys()

    # -- helpers -------------------------------------------------------------------

    def _replace_rows(self, rows: list[Node], gone: Collection[str]) -> None:
        keep = self.current.node_id if self.current else None
        gone_rows = {i for i in map(self._index.get, gone) if i is not None}
        position = self.cursor - sum(1 for i in gone_rows if i < self.cursor)
        top = int(self.scroll_offset.y)
        anchor = self._anchor(top, gone_rows)
        self._rows = rows
        self._find_shared_folders()
        self._reindex()
        self._marked -= set(gone)
        self._resize()
        if anchor is not None:  # the rows on screen stay where they were
            node_id, offset = anchor
            index = self._index.get(node_id)
            new_top = max(self._line_of(index) - offset, 0) if index is not None else top
            if new_top != top:
                self.scroll_to(y=new_top, animate=False, immediate=True)
        found = self._index.get(keep) if keep else None
        self.cursor = self._clamp(position if found is None else found)
        self.refresh()

    def _anchor(self, top: int, gone_rows: set[int]) -> tuple[str, int] | None:
        """(the first row from the top line down that stays, its distance from the top line
        not counting the rows that go); None when no row below the top stays."""
        line = top
        skipped = 0
        while line < self._line_count():
            index = self._row_at(line)
            if index is not None:
                if index not in gone_rows:
                    return self._rows[index].node_id, line - top - skipped
                skipped += 1
            line += 1
        return None

    def _reindex(self) -> None:
        self._index = {node.node_id: i for i, node in enumerate(self._rows)}
        self._layout()

    def _layout(self) -> None:
        """Where each row and each session header is drawn (grouped only)."""
        self._lines, self._line_rows, self._heads = [], [], {}
        if self._starts is None:
            return
        head = -1
        session: str | None = None
        for index, node in enumerate(self._rows):
            if node.session_id != session:
                session = node.session_id
                head = len(self._line_rows)
                self._heads[head] = (index, 0)
                self._line_rows.append(-1)
            first, count = self._heads[head]
            self._heads[head] = (first, count + 1)
            self._lines.append(len(self._line_rows))
            self._line_rows.append(index)

    # -- lines: rows and session headers -------------------------------------------

    def _line_count(self) -> int:
        return len(self._line_rows) if self._starts is not None else len(self._rows)

    def _line_of(self, index: int) -> int:
        if self._starts is None or not 0 <= index < len(self._lines):
            return index
        return self._lines[index]

    def _row_at(self, line: int) -> int | None:
        if self._starts is None:
            return line if 0 <= line < len(self._rows) else None
        if not 0 <= line < len(self._line_rows):
            return None
        index = self._line_rows[line]
        return index if index >= 0 else None

    def _top_line_of(self, index: int) -> int:
        line = self._line_of(index)
        return line - 1 if line - 1 in self._heads else line

    def _marks_changed(self) -> None:
        self.refresh()
        self.post_message(self.MarksChanged(self, len(self._marked)))

    # -- rendering -----------------------------------------------------------------

    def render_between(self, line: int, width: int) -> Strip:
        head = self._heads.get(line)
        if head is None or self._starts is None:
            return Strip.blank(width, self.rich_style)
        first, count = head
        node = self._rows[first]
        text = group_title(node, self._starts.get(node.session_id, ""), count)
        style = self.rich_style + self.get_component_rich_style("node-table--group")
        return Strip([Segment(pad(text, width), style)])

    def cell_text(self, column: Column[Any], row: Node) -> str:
        if column.text is not None:
            return column.text(row)
        if column.title == "age":  # since the session's start (else: since the node was made)
            return age(self._session_times.get(row.session_id) or row.created_at, self._now)
        busy = BUSY_GLYPH if row.node_id in self._busy else STATUS_GLYPHS.get(row.status, "?")
        return (MARK_GLYPH if row.node_id in self._marked else " ") + busy

    def cells(self, row: Node, width: int) -> list[tuple[str, str]]:
        """The columns' cells; a suppressed node's reason follows its summary."""
        cells: list[tuple[str, str]] = []
        for column, w in zip(self.COLUMNS, self.column_widths(width), strict=True):
            if not w:
                continue
            text = self.shown_text(column, row)
            if column.title == "summary" and row.status == "suppressed" and row.suppressed_reason:
                cells += _summary_cells(text, one_line(row.suppressed_reason, 200), w)
            else:
                cells.append((column.title, fit_cell(column, text, w) + " "))
        return cells

    def row_base(self, row: Node) -> Style:
        if row.node_id in self._marked:
            return self.get_component_rich_style("node-table--marked")
        return Style()

    def row_style(self, row: Node) -> Style | None:
        """Busy rows are dimmed whole."""
        if row.node_id in self._busy:
            return self.get_component_rich_style("node-table--busy")
        return None

    def cell_style(self, key: str, node: Node) -> Style:
        if key == "type":
            return self.get_component_rich_style(TYPE_CLASSES.get(node.type, "node-table--dim"))
        if key == "reason":
            return self.get_component_rich_style("node-table--reason")
        if (
            key in ("project", "session", "age")
            or (key == "conf" and node.confidence < LOW_CONFIDENCE)
            or (key == "info" and node.informativeness < LOW_INFORMATIVENESS)
        ):
            return self.get_component_rich_style("node-table--dim")
        return Style()


def _summary_cells(summary: str, reason: str, width: int) -> list[tuple[str, str]]:
    """The summary, then why the node was kept out of the queue (at most `REASON_SHARE` of
    the column, so the summary stays readable)."""
    note = f" — {reason}"
    room = min(len(note), int(width * REASON_SHARE))
    return [("summary", fit(summary, width - room)), ("reason", fit(note, room) + " ")]


def group_title(node: Node, started: str, count: int) -> str:
    """A session header: `▾ session 4ca67353 · /work/payments-api · 2026-10-21 08:05 · 7 nodes`."""
    parts = [f"▾ session {one_line(node.session_id, 40)[:8]}", one_line(node.project, 300)]
    when = _when(started)
    if when:
        parts.append(when)
    parts.append(f"{count:,} node{'s' if count != 1 else ''}")
    return " · ".join(parts)


def _when(stamp: str) -> str:
    """`2026-10-21 08:05` from an ISO timestamp ("" when it is not one)."""
    moment = _parse_time(stamp)
    return moment.strftime("%Y-%m-%d %H:%M") if moment else ""


def _parse_time(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def age(stamp: str, now: datetime | None) -> str:
    """How long ago `stamp` was, in one short unit: `42s`, `5m`, `3h`, `12d`, `8w`, `2y`."""
    then = _parse_time(stamp)
    if then is None or now is None:
        return "?"
    seconds = max(int((now - then).total_seconds()), 0)
    for unit, size in (("y", 365 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600)):
        if seconds >= size * (2 if unit in "yw" else 1):
            return f"{seconds // size}{unit}"
    return f"{seconds // 60}m" if seconds >= 60 else f"{seconds}s"
