"""The app in team mode, with Pilot over real libraries and the real hub: the Team screen (9)
pushes and pulls in a worker and shows where the library stands; the review queue's source
switch (T) lists the hub's staged items and decides them there."""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from app.factory import make_app
from app.screens.review import ReviewScreen
from app.screens.team import TeamScreen
from app.screenshots import settle
from store.library import Library
from store.team.push import push
from store.team.review import TeamQueue
from tests.team.conftest import Hub
from tests.team.helpers import developer
from widgets.node_table import NodeTable
from widgets.team_status import TeamStatusView, status_renderable

DEAD = "Dead end: raising pool_size to 50 did not stop QueuePool timeouts in the api"
FIX = "Solution: connections idle in transaction held the pool; short transactions fixed it"


def team_text(pilot: Pilot[int]) -> str:
    view = pilot.app.screen.query_one(TeamStatusView)
    assert view.status is not None
    console = Console(file=io.StringIO(), width=200, color_system=None)
    with console.capture() as captured:
        console.print(status_renderable(view.status, view.last))
    return captured.get()


async def test_the_team_screen_pushes_and_shows_the_queue_and_the_hub(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD, FIX])
    app = make_app(alice, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("9")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TeamScreen)
        text = team_text(pilot)
        assert "reachable" in text
        assert "contributor" in text
        assert "2 events" in text  # the two approvals wait in the push queue
        await pilot.press("greater_than_sign")
        await settle(pilot)
        text = team_text(pilot)
        assert "pushed 2 changes in 1 batch" in text
        assert "0 events" in text
        assert "2 staged" in text
        assert not [n for n in pilot.app._notifications if n.severity == "error"]


async def test_the_review_queue_switches_to_the_team_and_decides_there(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = team_library("alice", "alice")
    ids = developer(alice, "a", "/w/api", [DEAD, FIX])
    push(alice)
    rita = team_library("rita", "rita")
    app = make_app(rita, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ReviewScreen)
        assert pilot.app.screen.query_one(NodeTable).rows == []  # her own library is empty
        await pilot.press("T")
        await settle(pilot)
        table = pilot.app.screen.query_one(NodeTable)
        assert sorted(n.node_id for n in table.rows) == sorted(ids)
        status = str(pilot.app.screen.query_one("#review-status", Static).content)
        assert "team" in status
        assert "2 waiting for you" in status
        assert table.current is not None
        first = table.current.node_id
        await pilot.press("a")
        await settle(pilot)
        assert not [n for n in pilot.app._notifications if n.severity == "error"]
        assert (
            pilot.app.screen.check_action("undo", ()) is False
        )  # hub decisions are history: hidden
        await pilot.press("T")  # back to her own library
        await settle(pilot)
        assert pilot.app.screen.query_one(NodeTable).rows == []
    queue = TeamQueue(hub.url("rex"))
    try:
        assert queue.node(first).status == "approved"
        assert queue.node(first).decided_by == "team:rita"
    finally:
        queue.close()
