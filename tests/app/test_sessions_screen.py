"""The Sessions screen through the app factory over a copy of the demo, and its session list
in a tiny harness app (10,000 rows, untrusted text)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandList, CommandPalette
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static

from app.factory import make_app
from app.screens.review import ReviewScreen
from app.screens.sessions import SessionsScreen
from app.screenshots import paste, settle
from store.library import Library
from store.models import NODE_TYPES, SessionSummary
from widgets.dag_view import DagView
from widgets.node_detail import NodeDetailView
from widgets.node_table import NodeTable
from widgets.session_list import SessionList


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        yield pilot


def sessions(pilot: Pilot[int]) -> SessionList:
    return pilot.app.screen.query_one(SessionList)


def dag(pilot: Pilot[int]) -> DagView:
    return pilot.app.screen.query_one(DagView)


def status(pilot: Pilot[int]) -> str:
    return str(pilot.app.screen.query_one("#sessions-status", Static).content)


def graph_ids(pilot: Pilot[int]) -> list[str]:
    return [row.node_id for row in dag(pilot).rows]


async def test_lists_the_sessions_and_shows_the_selected_dag(
    pilot: Pilot[int], demo_library: Library
) -> None:
    assert isinstance(pilot.app.screen, SessionsScreen)
    expected = demo_library.sessions()
    assert len(expected) >= 3
    assert [s.session_id for s in sessions(pilot).rows] == [s.session_id for s in expected]
    assert status(pilot).startswith(f"{len(expected)} sessions")
    nodes, _ = demo_library.session_graph(expected[0].session_id)
    assert sorted(graph_ids(pilot)) == sorted(n.node_id for n in nodes)
    detail = pilot.app.screen.query_one(NodeDetailView)
    assert detail.node == dag(pilot).current
    assert detail.transcript is not None

    await pilot.press("down")  # the next session
    await settle(pilot)
    nodes, edges = demo_library.session_graph(expected[1].session_id)
    assert sorted(graph_ids(pilot)) == sorted(n.node_id for n in nodes)
    assert edges  # the demo's sessions have dead ends that were resolved
    await pilot.press("enter", "down")  # into the graph, one node down
    await settle(pilot)
    assert dag(pilot).has_focus
    assert dag(pilot).cursor == 1
    assert detail.node == dag(pilot).current


async def test_type_filter_and_arcs(pilot: Pilot[int]) -> None:
    graph = dag(pilot)
    everything = len(graph.rows)
    present = [t for t in NODE_TYPES if t in {n.type for n in graph._by_id.values()}]
    assert len(present) > 2
    await pilot.press("f")  # the first type present
    await settle(pilot)
    assert {graph._by_id[r.node_id].type for r in graph.rows} == {present[0]}
    assert f"types: {present[0]}" in status(pilot)
    await pilot.press("f")  # the next one
    await settle(pilot)
    assert {graph._by_id[r.node_id].type for r in graph.rows} == {present[1]}
    assert 0 < len(graph.rows) < everything

    assert not graph.highlight_arcs
    await pilot.press("H")
    await settle(pilot)
    assert graph.highlight_arcs
    assert "dead end → solution paths" in status(pilot)


async def test_enter_opens_the_node_in_the_review_queue(
    pilot: Pilot[int], demo_library: Library
) -> None:
    app = pilot.app
    await pilot.press("enter")
    graph = dag(pilot)
    assert graph.has_focus
    pending = [r.node_id for r in graph.rows if graph._by_id[r.node_id].status == "pending"]
    target = pending[-1]
    graph.move_to(target)
    await settle(pilot)
    assert "enter opens this pending node in the review queue" in status(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, ReviewScreen)
    table = app.screen.query_one(NodeTable)
    assert table.has_focus
    assert table.current is not None
    assert table.current.node_id == target
    assert app.screen.query_one(NodeDetailView).node == demo_library.node(target)

    # A decided node opens among the nodes of its status.
    (decided,) = demo_library.nodes(status="rejected")[:1]
    await pilot.press("2")
    await settle(pilot)
    assert isinstance(app.screen, SessionsScreen)
    app.screen.open_session(decided.session_id)
    await settle(pilot)
    assert dag(pilot).move_to(decided.node_id)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, ReviewScreen)
    assert table.current is not None
    assert table.current.node_id == decided.node_id
    assert {n.status for n in table.rows} == {"rejected"}


async def test_palette_opens_a_session(pilot: Pilot[int], demo_library: Library) -> None:
    last = demo_library.sessions()[-1]
    await pilot.press("1")  # from another screen
    await settle(pilot)
    await pilot.press("ctrl+p")
    await settle(pilot)
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await paste(pilot, f"session: open {last.branch}")
    await settle(pilot)
    options = palette.query_one(CommandList)
    titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    assert titles[0].startswith("session: open /home/dev/work/")
    assert last.branch in titles[0]
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SessionsScreen)
    current = sessions(pilot).current
    assert current is not None
    assert current.session_id == last.session_id
    assert dag(pilot).has_focus


# -- the session list on its own -------------------------------------------------------------


def summary(number: int, **changes: object) -> SessionSummary:
    row = SessionSummary(
        session_id=f"s-{number:05d}",
        project="/home/dev/work/payments-api",
        branch="main",
        client_version="2.1.39",
        started_at="2026-10-29T19:12:00.000Z",
        ended_at="2026-10-29T20:00:00.000Z",
        turns=2,
        tool_calls=18,
        errors=3,
        skills_used=(),
        skipped={},
        node_count=23,
        pending_count=19,
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class ListApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield SessionList()

    def on_mount(self) -> None:
        self.query_one(SessionList).focus()

    def on_session_list_highlighted(self, message: SessionList.Highlighted) -> None:
        self.highlighted.append(message.session_id)


def lines(widget: SessionList) -> list[str]:
    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.size))]


async def test_session_list_ten_thousand_rows() -> None:
    app = ListApp()
    async with app.run_test(size=(120, 20)) as pilot:
        widget = app.query_one(SessionList)
        widget.set_rows([summary(i) for i in range(10_000)])
        await pilot.press("end")
        assert app.highlighted[-1] == "s-09999"
        await pilot.press("home", "down")
        assert app.highlighted[-1] == "s-00001"
        header, first, *_ = lines(widget)
        assert header.split() == [
            "started",
            "project",
            "branch",
            "turns",
            "tools",
            "errors",
            "nodes",
            "pending",
        ]
        assert first.split() == [
            "2026-10-29",
            "19:12",
            "…/payments-api",  # the folder every row shares is left out
            "main",
            "2",
            "18",
            "3",
            "23",
            "19",
        ]
        assert header.index("pending") + len("pending") == first.rindex("19") + 2


async def test_session_list_shows_untrusted_text_literally() -> None:
    app = ListApp()
    async with app.run_test(size=(140, 8)) as pilot:
        widget = app.query_one(SessionList)
        widget.set_rows([summary(1, project="[bold red]x[/] \x1b[31mred", branch="\u202eevil\x07")])
        await pilot.pause()
        text = "\n".join(lines(widget))
        assert "[bold red]x[/] \\x1b[31mred" in text
        assert "<U+202E>evil\\x07" in text
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in text
