"""A session's reasoning DAG as rows of text, git-log style. Pure: no Textual, no Rich.

One node per row in message order (file, line_start, node_id), oldest first. Every edge that
points forward is a vertical lane on the left, from its source row down to its target row;
the node's glyph and label follow the lanes. `render_text` prints the rows as plain text
(golden tests compare it; a CLI can print it). The widget (`widgets.dag_view`) only draws
the rows.

Lane notation, one cell per lane plus one spacer cell after it:

| cell | meaning |
| --- | --- |
| `╭` / `┬` | an edge leaves this row's node and runs down the lane |
| `╰` / `┴` | an edge from above joins this row's node |
| `├` / `┼` | both: one edge ends here and the next leaves in the same lane (a chain) |
| `│` | a lane passing by; crossing a `─` it stays unbroken (the lanes go "over") |
| `─` | the connector from the leftmost lane that touches the node to its glyph |

The corner forms (`╭ ╰ ├`) are for the leftmost lane touching the node, the tee forms
(`┬ ┴ ┼`) for lanes the connector passes through. Lanes are allocated greedily, lowest free
lane first (a lane is free again on the row where its edge ends, which is how a chain stays in
one lane); a node's longer edges take the lower lanes. At most `max_lanes` lanes are drawn:
an edge that finds them all busy becomes a back-reference on its target row instead.

Edges not drawn as lanes are written after the label (`DagRow.back_refs`), naming the other
end's 1-based row: on the target row `↑#3` (an edge from row 3, above, that did not fit in the
lanes) or `↓#9` (an edge from row 9, below: it points backwards in message order, e.g. part of
a cycle); on the source row `→#7` (its edge to row 7). Incoming ones come first, each group
sorted by row; `↺` is an edge from the node to itself. Edges naming unknown nodes are ignored;
duplicate (source, target) pairs are drawn once.

Node glyphs (single-cell): HYPOTHESIS `?`, INVESTIGATION `…`, DISCOVERY `!`, PIVOT `↪`,
DEAD_END `✗`, SOLUTION `✓`, CONTEXT_LOAD `≡`, any other type `·`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from store.models import Edge, Node
from store.text import one_line

GLYPHS: dict[str, str] = {
    "HYPOTHESIS": "?",
    "INVESTIGATION": "…",
    "DISCOVERY": "!",
    "PIVOT": "↪",
    "DEAD_END": "✗",
    "SOLUTION": "✓",
    "CONTEXT_LOAD": "≡",
}
UNKNOWN_GLYPH = "·"
#: Where dead-end arcs lead (see `arc_nodes`).
ARC_ENDS = frozenset({"PIVOT", "SOLUTION"})
SUMMARY_LIMIT = 200
TYPE_LIMIT = 24

# (ends here, starts here, the connector passes through from the left) -> cell
_JUNCTIONS: dict[tuple[bool, bool, bool], str] = {
    (True, False, False): "╰",
    (True, False, True): "┴",
    (False, True, False): "╭",
    (False, True, True): "┬",
    (True, True, False): "├",
    (True, True, True): "┼",
}


@dataclass(frozen=True)
class DagRow:
    """One node as drawn: `lanes` (2 cells per lane, the same width on every row of a layout),
    then `glyph`, a space and `label`, then the `back_refs`. `depth` is the longest chain of
    forward edges that leads to the node (0 for a node with no parent above it)."""

    node_id: str
    lanes: str
    glyph: str
    label: str
    back_refs: tuple[str, ...] = ()
    depth: int = 0


@lru_cache(maxsize=64)
def type_word(node_type: str) -> str:
    """The node type as it starts the label (untrusted: neutralised, bounded)."""
    return _one_line(node_type, TYPE_LIMIT) or "?"


def glyph_for(node_type: str) -> str:
    return GLYPHS.get(node_type, UNKNOWN_GLYPH)


def ordered_nodes(nodes: Iterable[Node]) -> list[Node]:
    """Nodes in message order, the first of any repeated node_id kept."""
    unique: dict[str, Node] = {}
    for node in nodes:
        unique.setdefault(node.node_id, node)
    return sorted(unique.values(), key=message_order)


def message_order(node: Node) -> tuple[str, int, str]:
    """The sort key of a node's row: file, first line, then id."""
    return (node.file, node.line_start, node.node_id)


def layout_dag(nodes: Sequence[Node], edges: Sequence[Edge], max_lanes: int = 6) -> list[DagRow]:
    """Rows for `nodes` in message order with `edges` as lanes (see the module docstring)."""
    ordered = ordered_nodes(nodes)
    row_of = {node.node_id: row for row, node in enumerate(ordered)}
    pairs = _row_pairs(edges, row_of)
    forward = sorted((p for p in pairs if p[0] < p[1]), key=lambda p: (p[0], -p[1]))
    undrawn = [pair for pair in pairs if pair[0] >= pair[1]]
    starts, ends, width = _allocate(len(ordered), forward, max(max_lanes, 0), undrawn)
    refs = _refs(len(ordered), undrawn)
    depths = _depths(len(ordered), forward)
    lanes = _draw_lanes(starts, ends, width)
    return [
        DagRow(
            node_id=node.node_id,
            lanes=lanes[row],
            glyph=glyph_for(node.type),
            label=_label(node),
            back_refs=refs[row],
            depth=depths[row],
        )
        for row, node in enumerate(ordered)
    ]


def render_row(row: DagRow) -> str:
    refs = "  " + " ".join(row.back_refs) if row.back_refs else ""
    return f"{row.lanes}{row.glyph} {row.label}{refs}"


def render_text(rows: Sequence[DagRow]) -> str:
    """Plain text, one line per row, no trailing newline."""
    return "\n".join(map(render_row, rows))


def links(
    rows: Sequence[DagRow], edges: Sequence[Edge]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(parents, children) of each laid-out node that has any, nearest row first. Every edge
    between shown nodes counts, whether it is drawn as a lane or as a back-reference."""
    ids = [row.node_id for row in rows]
    row_of = {node_id: index for index, node_id in enumerate(ids)}
    # One sort by distance puts every node's parents (and children) nearest first.
    pairs = sorted(_row_pairs(edges, row_of), key=lambda p: (abs(p[1] - p[0]), p))
    parents: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}
    for source, target in pairs:
        parents.setdefault(ids[target], []).append(ids[source])
        children.setdefault(ids[source], []).append(ids[target])
    return (
        {key: tuple(found) for key, found in parents.items()},
        {key: tuple(found) for key, found in children.items()},
    )


def arc_nodes(nodes: Sequence[Node], edges: Sequence[Edge]) -> frozenset[str]:
    """Ids of nodes on a path from a DEAD_END to a PIVOT or SOLUTION (both ends included)."""
    types = {node.node_id: node.type for node in nodes}
    down: dict[str, list[str]] = {}
    up: dict[str, list[str]] = {}
    for edge in edges:
        if edge.source in types and edge.target in types:
            down.setdefault(edge.source, []).append(edge.target)
            up.setdefault(edge.target, []).append(edge.source)
    after_dead_end = _reachable([i for i, t in types.items() if t == "DEAD_END"], down)
    before_end = _reachable([i for i, t in types.items() if t in ARC_ENDS], up)
    return frozenset(after_dead_end & before_end)


# -- helpers ---------------------------------------------------------------------------------


def _row_pairs(edges: Iterable[Edge], row_of: dict[str, int]) -> set[tuple[int, int]]:
    return {
        (row_of[e.source], row_of[e.target])
        for e in edges
        if e.source in row_of and e.target in row_of
    }


def _allocate(
    count: int,
    forward: Sequence[tuple[int, int]],
    max_lanes: int,
    undrawn: list[tuple[int, int]],
) -> tuple[list[list[tuple[int, int]]], list[list[int]], int]:
    """Lanes for forward edges (sorted by source row): (lane, target row) starting on each
    row, lanes ending on each row, lanes used. Edges that do not fit go to `undrawn`."""
    starts: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    ends: list[list[int]] = [[] for _ in range(count)]
    lane_end: list[int] = []  # the target row of each lane's latest edge
    for source, target in forward:
        lane = next((k for k, end in enumerate(lane_end) if end <= source), None)
        if lane is None and len(lane_end) < max_lanes:
            lane = len(lane_end)
            lane_end.append(target)
        if lane is None:
            undrawn.append((source, target))
            continue
        lane_end[lane] = target
        starts[source].append((lane, target))
        ends[target].append(lane)
    return starts, ends, len(lane_end)


def _draw_lanes(
    starts: list[list[tuple[int, int]]], ends: list[list[int]], width: int
) -> list[str]:
    busy_until = [-1] * width  # the row each lane's current edge ends on
    drawn: list[str] = []
    cache: dict[tuple[tuple[bool, bool, bool], ...], str] = {}
    for row, (starting, ending) in enumerate(zip(starts, ends, strict=True)):
        down = {lane for lane, _ in starting}
        states = tuple(
            (lane in ending, lane in down, busy_until[lane] > row) for lane in range(width)
        )
        line = cache.get(states)
        if line is None:
            line = cache[states] = _lane_cells(states)
        drawn.append(line)
        for lane, target in starting:
            busy_until[lane] = target
    return drawn


def _lane_cells(states: Sequence[tuple[bool, bool, bool]]) -> str:
    """One row's lanes from each lane's (ends here, starts here, passes by)."""
    first = next((k for k, (up, down, _) in enumerate(states) if up or down), len(states))
    cells: list[str] = []
    for lane, (up, down, passing) in enumerate(states):
        if up or down:
            cells.append(_JUNCTIONS[(up, down, lane > first)])
        elif passing:
            cells.append("│")
        else:
            cells.append("─" if lane > first else " ")
        cells.append("─" if lane >= first else " ")
    return "".join(cells)


def _depths(count: int, forward: Sequence[tuple[int, int]]) -> list[int]:
    # `forward` is sorted by source row, and every edge into a row starts above it, so a
    # row's depth is final before its own edges are visited.
    depths = [0] * count
    for source, target in forward:
        depths[target] = max(depths[target], depths[source] + 1)
    return depths


def _label(node: Node) -> str:
    summary = _one_line(node.summary, SUMMARY_LIMIT)
    return f"{type_word(node.type)} {summary}" if summary else type_word(node.type)


def _one_line(text: str, limit: int) -> str:
    # `one_line` checks every character in Python; most summaries are short and printable,
    # and then it would return them folded and unchanged (10,000 labels: 130 ms -> 10 ms).
    folded = " ".join(text.split())
    if len(folded) <= limit and folded.isprintable():
        return folded
    return one_line(folded, limit)


def _refs(count: int, undrawn: Iterable[tuple[int, int]]) -> list[tuple[str, ...]]:
    incoming: dict[int, list[int]] = {}
    outgoing: dict[int, list[int]] = {}
    for source, target in undrawn:
        incoming.setdefault(target, []).append(source)
        if source != target:
            outgoing.setdefault(source, []).append(target)
    refs: list[tuple[str, ...]] = [()] * count
    for row in incoming.keys() | outgoing.keys():
        refs[row] = (
            *(_incoming_ref(source, row) for source in sorted(incoming.get(row, ()))),
            *(f"→#{target + 1}" for target in sorted(outgoing.get(row, ()))),
        )
    return refs


def _incoming_ref(source: int, row: int) -> str:
    if source == row:
        return "↺"
    return f"{'↑' if source < row else '↓'}#{source + 1}"


def _reachable(seeds: Iterable[str], graph: dict[str, list[str]]) -> set[str]:
    seen = set(seeds)
    queue = deque(seen)
    while queue:
        for nxt in graph.get(queue.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen
