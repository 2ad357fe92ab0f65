"""DagView in a tiny harness app: keys move the cursor along rows and edges, messages carry the
right node ids, untrusted summaries are drawn literally."""

from __future__ import annotations

import time
from dataclasses import replace

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import NODE_TYPES, Edge, Node
from widgets.dag_view import DagView

#: (type, summary, status) in message order; ids are n00, n01, ...
SESSION: list[tuple[str, str, str]] = [
    ("CONTEXT_LOAD", "read CONTRIBUTING.md and the failing CI log", "approved"),
    ("HYPOTHESIS", "test_export fails because of the timezone", "approved"),
    ("INVESTIGATION", "ran the test with TZ=UTC", "pending"),
    ("DEAD_END", "TZ=UTC still fails: not the timezone", "approved"),
    ("PIVOT", "compare the fixture files instead", "pending"),
    ("INVESTIGATION", "diffed fixtures/export.csv against main", "pending"),
    ("DISCOVERY", "the fixture has CRLF line endings", "approved"),
    ("SOLUTION", "normalise line endings in the fixture loader", "approved"),
    ("HYPOTHESIS", "the cache key ignores the locale", "rejected"),
    ("INVESTIGATION", "logged cache keys during the run", "pending"),
    ("DEAD_END", "keys differ only by locale: a red herring", "pending"),
    ("HYPOTHESIS", "the slow test is the network call", "pending"),
    ("INVESTIGATION", "profiled test_sync", "pending"),
    ("DISCOVERY", "90% of the time is DNS lookups", "pending"),
    ("SOLUTION", "stub the resolver in conftest", "pending"),
    ("CONTEXT_LOAD", "read the resolver docs", "pending"),
    ("PIVOT", "drop the cache idea, check CI runners", "pending"),
    ("INVESTIGATION", "CI runners use a different locale", "pending"),
    ("SOLUTION", "set LC_ALL in the CI config", "pending"),
    ("DISCOVERY", "the export test passes everywhere now", "approved"),
]
EDGES: list[tuple[int, int, str]] = [
    (1, 2, "informed"),
    (2, 3, "informed"),
    (3, 4, "triggered_pivot"),
    (4, 5, "informed"),
    (5, 6, "informed"),
    (6, 7, "informed"),
    (3, 7, "resolved"),
    (8, 9, "informed"),
    (9, 10, "informed"),
    (10, 16, "triggered_pivot"),
    (10, 18, "resolved"),
    (11, 12, "informed"),
    (12, 13, "informed"),
    (13, 14, "informed"),
    (16, 17, "informed"),
    (17, 18, "informed"),
    (7, 19, "informed"),
    (18, 19, "informed"),
]


def make_node(i: int, type: str, summary: str, status: str = "pending") -> Node:
    return Node(
        node_id=f"n{i:02d}",
        session_id="s1",
        project="/p",
        type=type,
        summary=summary,
        evidence="",
        file="s1.jsonl",
        line_start=10 * i,
        line_end=10 * i + 5,
        confidence=0.6,
        scope="PROJECT",
        tier="warm",
        status=status,
        developer="dev",
        created_at="2026-01-01T00:00:00+00:00",
    )


def session() -> tuple[list[Node], list[Edge]]:
    nodes = [make_node(i, *row) for i, row in enumerate(SESSION)]
    edges = [Edge(f"n{s:02d}", f"n{t:02d}", kind) for s, t, kind in EDGES]
    return nodes, edges


class DagApp(App[None]):
    """Mounts one focused DagView and records what it posts."""

    def __init__(self, nodes: list[Node] | None = None, edges: list[Edge] | None = None) -> None:
        super().__init__()
        self.graph = (nodes, edges) if nodes is not None else session()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield DagView()

    def on_mount(self) -> None:
        view = self.query_one(DagView)
        view.set_graph(self.graph[0] or [], self.graph[1] or [])
        view.focus()

    def on_dag_view_highlighted(self, message: DagView.Highlighted) -> None:
        self.messages.append(message)

    def on_dag_view_selected(self, message: DagView.Selected) -> None:
        self.messages.append(message)

    def highlighted(self) -> list[str | None]:
        return [m.node_id for m in self.messages if isinstance(m, DagView.Highlighted)]

    def selected(self) -> list[str]:
        return [m.node_id for m in self.messages if isinstance(m, DagView.Selected)]


def screen_lines(view: DagView) -> list[str]:
    return [strip.text for strip in view.render_lines(Region(0, 0, *view.size))]


async def test_cursor_keys_and_edge_jumps_post_node_ids() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.pause()
        assert app.highlighted()[-1] == "n00"

        await pilot.press("down", "j")
        assert app.highlighted()[-1] == "n02"
        await pilot.press("k")
        assert app.highlighted()[-1] == "n01"

        await pilot.press("end")
        assert app.highlighted()[-1] == "n19"
        # n19 has two parents, nearest first: p cycles through them.
        await pilot.press("left")
        assert app.highlighted()[-1] == "n18"
        await pilot.press("left")
        assert app.highlighted()[-1] == "n07"
        await pilot.press("left")
        assert app.highlighted()[-1] == "n18"
        # A node with one parent: p keeps climbing.
        await pilot.press("k", "left")  # n17 -> n16
        assert app.highlighted()[-2:] == ["n17", "n16"]
        await pilot.press("left")
        assert app.highlighted()[-1] == "n10"

        # n10 has two children: c cycles n16 (nearest), n18.
        await pilot.press("right")
        assert app.highlighted()[-1] == "n16"
        await pilot.press("right")
        assert app.highlighted()[-1] == "n18"

        await pilot.press("enter")
        assert app.selected() == ["n18"]
        assert view.current is not None
        assert view.current.node_id == "n18"


async def test_parent_and_child_are_greyed_out_when_there_are_none() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.pause()
        assert view.check_action("parent", ()) is None  # n00 has no edges at all
        assert view.check_action("child", ()) is None
        await pilot.press("left")
        assert app.highlighted() == ["n00"]
        await pilot.press("down")
        assert view.check_action("parent", ()) is None
        assert view.check_action("child", ()) is True


async def test_page_keys() -> None:
    nodes = [make_node(i, NODE_TYPES[i % 7], f"step {i}") for i in range(100)]
    app = DagApp(nodes, [])
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(DagView)
        await pilot.press("pagedown")
        assert view.cursor == view.size.height - 1
        await pilot.press("pagedown", "pageup")
        assert view.cursor == view.size.height - 1
        await pilot.press("home")
        assert app.highlighted()[-1] == "n00"


async def test_filter_types_hides_rows_and_keeps_the_cursor_near() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.press("down", "down", "down", "down")  # n04, a PIVOT
        view.filter_types({"DEAD_END", "PIVOT", "SOLUTION"})
        await pilot.pause()
        lines = [line for line in screen_lines(view) if line.strip()]
        assert len(lines) == 7
        assert not any("INVESTIGATION" in line or "HYPOTHESIS" in line for line in lines)
        assert view.current is not None
        assert view.current.node_id == "n04"

        view.filter_types({"SOLUTION"})  # n04 hidden: the next shown node
        await pilot.pause()
        assert app.highlighted()[-1] == "n07"
        assert len(view.rows) == 3

        view.filter_types(None)
        await pilot.pause()
        assert len(view.rows) == 20
        assert app.highlighted()[-1] == "n07"


async def test_set_graph_keeps_the_cursor_on_the_same_node() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.press("down", "down", "down")
        nodes, edges = session()
        view.set_graph(nodes[2:], edges)  # two rows fewer above
        await pilot.pause()
        assert view.cursor == 1
        assert app.highlighted()[-1] == "n03"

        view.set_graph(nodes[:3] + nodes[4:], edges)  # n03 gone: the next node
        await pilot.pause()
        assert app.highlighted()[-1] == "n04"

        view.set_graph([make_node(99, "PIVOT", "another session")], [])
        await pilot.pause()
        assert app.highlighted()[-1] == "n99"


async def test_rows_show_number_status_lanes_and_label() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.pause()
        lines = screen_lines(view)
        # Row number, "•" for pending, the lanes, glyph and label, back-references last.
        assert lines[0].startswith(" 1           ≡ CONTEXT_LOAD read CONTRIBUTING.md and")
        assert lines[2].startswith(" 3 • ├───────… INVESTIGATION ran the test with TZ=UTC")
        assert lines[3].startswith(" 4   ├─┬─────✗ DEAD_END TZ=UTC still fails")
        # Every row is as wide as the widget (no ragged right edge).
        assert {len(line) for line in lines} == {view.size.width}

        rejected = view.get_component_rich_style("dag-view--rejected").color
        label = next(s for s in view.render_line(8) if "the cache key" in s.text)
        assert label.style is not None
        assert label.style.color == rejected
        pending = view.get_component_rich_style("dag-view--pending").color
        mark = next(s for s in view.render_line(2) if s.text == "•")
        assert mark.style is not None
        assert mark.style.color == pending


async def test_untrusted_summaries_are_drawn_literally() -> None:
    nodes = [
        make_node(0, "DEAD_END", "[bold red]x[/] and [link=http://e]y[/link]"),
        make_node(1, "SOLUTION", "\x1b[31mred\x1b[0m\x1b]0;title\x07 \u202eevil"),
    ]
    app = DagApp(nodes, [Edge("n00", "n01", "resolved")])
    async with app.run_test(size=(100, 10)) as pilot:
        view = app.query_one(DagView)
        await pilot.pause()
        first, second = view.render_line(0).text, view.render_line(1).text
        assert "DEAD_END [bold red]x[/] and [link=http://e]y[/link]" in first
        assert "\\x1b[31mred\\x1b[0m\\x1b]0;title\\x07 <U+202E>evil" in second
        assert "\x1b" not in second
        assert all(not segment.style or not segment.style.link for segment in view.render_line(0))


async def test_highlight_arcs_tints_dead_end_chains() -> None:
    app = DagApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        await pilot.pause()
        assert view.arcs == {"n03", "n04", "n05", "n06", "n07", "n10", "n16", "n17", "n18"}
        arc = view.get_component_rich_style("dag-view--arc").bgcolor

        def background(y: int) -> object:
            return next(iter(view.render_line(y))).style.bgcolor  # type: ignore[union-attr]

        assert background(3) != arc
        view.highlight_arcs = True
        await pilot.pause()
        assert background(3) == arc
        assert background(9) != arc  # n09 is not on an arc
        assert background(0) != arc  # the cursor row keeps the cursor's colours


async def test_empty_graph() -> None:
    app = DagApp([], [])
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.query_one(DagView)
        await pilot.press("down", "left", "right", "enter", "end")
        assert view.render_line(0).text.strip() == "No nodes."
        assert set(app.highlighted()) == {None}
        assert app.selected() == []


async def test_ten_thousand_nodes_mount_and_draw_fast() -> None:
    nodes = [make_node(i, NODE_TYPES[i % 7], f"step {i} of a long session") for i in range(10_000)]
    nodes = [replace(n, node_id=f"n{i:05d}") for i, n in enumerate(nodes)]
    edges = [Edge(f"n{i - 1:05d}", f"n{i:05d}", "informed") for i in range(1, 10_000)]
    edges += [Edge(f"n{i:05d}", f"n{i + 7:05d}", "resolved") for i in range(0, 9_990, 5)]
    app = DagApp([], [])
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DagView)
        started = time.perf_counter()
        view.set_graph(nodes, edges)
        screen_lines(view)
        elapsed = time.perf_counter() - started
        assert elapsed < 2.0, f"10,000 nodes: {elapsed:.3f}s to the first frame"

        await pilot.press("end")
        assert app.highlighted()[-1] == "n09999"
        assert view.scroll_offset.y > 9_900
        assert any("step 9999 " in line for line in screen_lines(view))
        started = time.perf_counter()
        await pilot.press("left", "left", "home")
        assert time.perf_counter() - started < 1.0
        assert app.highlighted()[-3:] == ["n09998", "n09997", "n00000"]
