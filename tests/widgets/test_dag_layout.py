"""`layout_dag` / `render_text`: golden text for the shapes a session DAG takes.

The expected output is written out literally, one string per line, so a change in the notation
shows up here as a readable diff.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

from store.models import NODE_TYPES, Edge, Node
from widgets.dag_layout import DagRow, arc_nodes, layout_dag, links, render_text


def node(i: int, type: str, summary: str = "", **changes: object) -> Node:
    made = Node(
        node_id=f"n{i:02d}",
        session_id="s1",
        project="/p",
        type=type,
        summary=summary or f"node {i}",
        evidence="",
        file="s1.jsonl",
        line_start=10 * i,
        line_end=10 * i + 5,
        confidence=0.6,
        scope="PROJECT",
        tier="warm",
        status="pending",
        developer="dev",
        created_at="2026-01-01T00:00:00+00:00",
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def edge(source: int, target: int, type: str = "informed") -> Edge:
    return Edge(f"n{source:02d}", f"n{target:02d}", type)


def text(nodes: list[Node], edges: list[Edge], max_lanes: int = 6) -> list[str]:
    return render_text(layout_dag(nodes, edges, max_lanes)).split("\n")


def test_empty() -> None:
    assert layout_dag([], []) == []
    assert render_text([]) == ""
    assert layout_dag([], [edge(0, 1)]) == []


def test_single_node() -> None:
    rows = layout_dag([node(0, "HYPOTHESIS", "the cache is stale")], [])
    assert rows == [DagRow("n00", "", "?", "HYPOTHESIS the cache is stale", (), 0)]
    assert render_text(rows) == "? HYPOTHESIS the cache is stale"


def test_chain_stays_in_one_lane() -> None:
    nodes = [
        node(0, "HYPOTHESIS", "the cache is stale"),
        node(1, "INVESTIGATION", "read cache.py"),
        node(2, "DEAD_END", "clearing the cache did not help"),
        node(3, "PIVOT", "look at the clock instead"),
        node(4, "SOLUTION", "freeze time in the test"),
    ]
    edges = [edge(0, 1), edge(1, 2), edge(2, 3, "triggered_pivot"), edge(3, 4)]
    assert text(nodes, edges) == [
        "╭─? HYPOTHESIS the cache is stale",
        "├─… INVESTIGATION read cache.py",
        "├─✗ DEAD_END clearing the cache did not help",
        "├─↪ PIVOT look at the clock instead",
        "╰─✓ SOLUTION freeze time in the test",
    ]
    assert [row.depth for row in layout_dag(nodes, edges)] == [0, 1, 2, 3, 4]


def test_diamond() -> None:
    nodes = [node(0, "HYPOTHESIS"), node(1, "INVESTIGATION"), node(2, "INVESTIGATION")]
    nodes.append(node(3, "DISCOVERY"))
    edges = [edge(0, 1), edge(0, 2), edge(1, 3), edge(2, 3)]
    assert text(nodes, edges) == [
        "╭─┬─? HYPOTHESIS node 0",
        "│ ├─… INVESTIGATION node 1",
        "├─│─… INVESTIGATION node 2",
        "╰─┴─! DISCOVERY node 3",
    ]
    assert [row.depth for row in layout_dag(nodes, edges)] == [0, 1, 1, 2]


def test_fan_out_longest_edge_leftmost() -> None:
    nodes = [node(0, "CONTEXT_LOAD", "read the runbook")]
    nodes += [node(i, "HYPOTHESIS", f"idea {i}") for i in range(1, 5)]
    edges = [edge(0, i) for i in range(1, 5)]
    assert text(nodes, edges) == [
        "╭─┬─┬─┬─≡ CONTEXT_LOAD read the runbook",
        "│ │ │ ╰─? HYPOTHESIS idea 1",
        "│ │ ╰───? HYPOTHESIS idea 2",
        "│ ╰─────? HYPOTHESIS idea 3",
        "╰───────? HYPOTHESIS idea 4",
    ]


def test_interleaved_dead_end_arcs() -> None:
    """Two dead ends whose resolutions overlap: each arc keeps its own lane to the end."""
    nodes = [
        node(0, "HYPOTHESIS", "flaky because of ordering"),
        node(1, "INVESTIGATION", "run the suite shuffled"),
        node(2, "DEAD_END", "pytest -p no:randomly still fails"),
        node(3, "DEAD_END", "pinning the seed did not help"),
        node(4, "PIVOT", "suspect the shared tmp dir"),
        node(5, "SOLUTION", "use tmp_path per test"),
        node(6, "SOLUTION", "seed from the test id"),
    ]
    edges = [
        edge(0, 1),
        edge(2, 4, "triggered_pivot"),
        edge(2, 5, "resolved"),
        edge(3, 6, "resolved"),
    ]
    assert text(nodes, edges) == [
        "╭─────? HYPOTHESIS flaky because of ordering",
        "╰─────… INVESTIGATION run the suite shuffled",
        "╭─┬───✗ DEAD_END pytest -p no:randomly still fails",
        "│ │ ╭─✗ DEAD_END pinning the seed did not help",
        "│ ╰─│─↪ PIVOT suspect the shared tmp dir",
        "╰───│─✓ SOLUTION use tmp_path per test",
        "    ╰─✓ SOLUTION seed from the test id",
    ]


def test_lane_cap_overflow_becomes_back_references() -> None:
    nodes = [node(i, "DEAD_END", f"{name} fails") for i, name in enumerate("abc")]
    nodes += [node(i + 3, "SOLUTION", f"fix {name}") for i, name in enumerate("abc")]
    edges = [edge(0, 3, "resolved"), edge(1, 4, "resolved"), edge(2, 5, "resolved")]
    edges.append(edge(0, 5))
    assert text(nodes, edges, max_lanes=2) == [
        "╭─┬─✗ DEAD_END a fails",
        "│ │ ✗ DEAD_END b fails  →#5",
        "│ │ ✗ DEAD_END c fails  →#6",
        "│ ╰─✓ SOLUTION fix a",
        "│   ✓ SOLUTION fix b  ↑#2",
        "╰───✓ SOLUTION fix c  ↑#3",
    ]
    # With room, the same graph is all lanes.
    assert text(nodes, edges) == [
        "╭─┬─────✗ DEAD_END a fails",
        "│ │ ╭───✗ DEAD_END b fails",
        "│ │ │ ╭─✗ DEAD_END c fails",
        "│ ╰─│─│─✓ SOLUTION fix a",
        "│   ╰─│─✓ SOLUTION fix b",
        "╰─────┴─✓ SOLUTION fix c",
    ]


def test_no_lanes_at_all() -> None:
    nodes = [node(0, "DEAD_END"), node(1, "SOLUTION")]
    assert text(nodes, [edge(0, 1)], max_lanes=0) == [
        "✗ DEAD_END node 0  →#2",
        "✓ SOLUTION node 1  ↑#1",
    ]


def test_backward_edges_and_self_loops_are_references() -> None:
    nodes = [node(0, "HYPOTHESIS", "h"), node(1, "INVESTIGATION", "i"), node(2, "DISCOVERY", "d")]
    edges = [edge(0, 1), edge(1, 2), edge(2, 0), edge(1, 1)]
    assert text(nodes, edges) == [
        "╭─? HYPOTHESIS h  ↓#3",
        "├─… INVESTIGATION i  ↺",
        "╰─! DISCOVERY d  →#1",
    ]
    assert [row.depth for row in layout_dag(nodes, edges)] == [0, 1, 2]


def test_disconnected_nodes_and_unknown_edges() -> None:
    nodes = [
        node(0, "CONTEXT_LOAD", "read README"),
        node(1, "HYPOTHESIS", "h1"),
        node(2, "HYPOTHESIS", "lonely"),
        node(3, "INVESTIGATION", "i1"),
        node(4, "MYSTERY", "an unknown type"),
    ]
    edges = [edge(1, 3), edge(1, 3, "resolved"), edge(0, 99), Edge("ghost", "n02", "informed")]
    assert text(nodes, edges) == [
        "  ≡ CONTEXT_LOAD read README",
        "╭─? HYPOTHESIS h1",
        "│ ? HYPOTHESIS lonely",
        "╰─… INVESTIGATION i1",
        "  · MYSTERY an unknown type",
    ]


def test_message_order_is_file_then_line_then_id() -> None:
    nodes = [
        node(0, "SOLUTION", "main, line 50", line_start=50),
        node(1, "HYPOTHESIS", "main, line 5", line_start=5),
        node(2, "DISCOVERY", "subagent, line 1", file="s1/subagents/agent-a.jsonl", line_start=1),
        node(3, "PIVOT", "main, line 5 again", line_start=5),
    ]
    assert [row.node_id for row in layout_dag(nodes, [])] == ["n01", "n03", "n00", "n02"]


def test_untrusted_text_is_one_neutralised_line() -> None:
    nodes = [node(0, "DEAD_END", "[bold red]x[/]\x1b[31m red\nnext\tline \u202eevil")]
    nodes.append(node(1, "x\x1b]0;t\x07", "y" * 500))
    rows = layout_dag(nodes, [])
    assert rows[0].label == "DEAD_END [bold red]x[/]\\x1b[31m red next line <U+202E>evil"
    assert rows[1].label.startswith("x\\x1b]0;t\\x07 yyy")
    assert rows[1].label.endswith("y…")
    assert all(ch.isprintable() for row in rows for ch in render_text([row]))


def test_deterministic_whatever_the_input_order() -> None:
    nodes, edges = _random_graph(300, seed=3)
    expected = render_text(layout_dag(nodes, edges))
    shuffled_nodes, shuffled_edges = list(nodes), list(edges)
    rng = random.Random(5)
    for _ in range(3):
        rng.shuffle(shuffled_nodes)
        rng.shuffle(shuffled_edges)
        assert render_text(layout_dag(shuffled_nodes, shuffled_edges)) == expected


def test_every_row_has_the_same_lane_width() -> None:
    nodes, edges = _random_graph(500, seed=11)
    rows = layout_dag(nodes, edges, max_lanes=4)
    assert {len(row.lanes) for row in rows} == {8}
    # Every forward edge is either a lane or written on both rows.
    drawn = sum(row.lanes.count("╭") + row.lanes.count("┬") for row in rows)
    drawn += sum(row.lanes.count("├") + row.lanes.count("┼") for row in rows)
    written = sum(ref.startswith("→") for row in rows for ref in row.back_refs)
    assert drawn + written == len({(e.source, e.target) for e in edges if e.source != e.target})


def test_links_nearest_first_and_arcs() -> None:
    nodes = [
        node(0, "HYPOTHESIS"),
        node(1, "DEAD_END"),
        node(2, "INVESTIGATION"),
        node(3, "PIVOT"),
        node(4, "SOLUTION"),
        node(5, "DISCOVERY"),
    ]
    edges = [edge(0, 1), edge(1, 2), edge(2, 3), edge(1, 4, "resolved"), edge(0, 4)]
    edges.append(edge(4, 5))
    parents, children = links(layout_dag(nodes, edges), edges)
    assert parents["n04"] == ("n01", "n00")
    assert children["n01"] == ("n02", "n04")
    assert "n00" not in parents
    assert arc_nodes(nodes, edges) == {"n01", "n02", "n03", "n04"}


def test_ten_thousand_nodes_are_fast() -> None:
    nodes, edges = _random_graph(10_000, seed=1)
    started = time.perf_counter()
    rows = layout_dag(nodes, edges)
    elapsed = time.perf_counter() - started
    assert len(rows) == 10_000
    assert elapsed < 2.0, f"layout of 10,000 nodes took {elapsed:.3f}s"


def _random_graph(count: int, seed: int) -> tuple[list[Node], list[Edge]]:
    """A long session: a chain of steps, dead ends resolved a few rows later, some far and
    backward edges."""
    rng = random.Random(seed)
    nodes = [
        node(i, NODE_TYPES[i % len(NODE_TYPES)], f"step {i} of a long session", node_id=f"n{i:05d}")
        for i in range(count)
    ]
    edges = []
    for i in range(1, count):
        edges.append(Edge(f"n{i - 1:05d}", f"n{i:05d}", "informed"))
        if i % 3 == 0:
            target = min(i + rng.randint(2, 40), count - 1)
            edges.append(Edge(f"n{i:05d}", f"n{target:05d}", "resolved"))
        if i % 50 == 0:
            edges.append(Edge(f"n{i:05d}", f"n{rng.randrange(count):05d}", "informed"))
    return nodes, edges
