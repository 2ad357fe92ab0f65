"""The Health screen, driven with Pilot through the app factory over a small real library
whose outcomes make every verdict: `deploy` drifts (3 of 4 runs failed), `flaky` degrades
(3 of 10), `fresh` is a proposed skill with 5 clean runs (proven), `steady` is healthy and
`quiet` idle. Run details are hostile markup, shown literally."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.dialogs.confirm_changes import ConfirmChanges
from app.factory import make_app
from app.screens.graph import GraphScreen
from app.screens.health import HealthScreen
from app.screenshots import settle
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.conftest import TEST_NOW
from tests.store.conftest import write_skill
from widgets.health_detail import HealthDetail
from widgets.health_table import HealthTable

HOSTILE = "[bold]boom[/bold] \x1b[31mred"


@pytest.fixture
def library(tmp_path: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    root = tmp_path / "skills"
    for name in ("deploy", "flaky", "fresh", "steady", "quiet"):
        write_skill(root, name, f"The {name} skill.")
    write_skill(root, "caller", "Calls deploy.", extra="metadata:\n  requires: [deploy]\n")
    lib = Library(tmp_path / "lib", embedder=_embedder, clock=stepping_clock(TEST_NOW, 0))
    lib.scan([root], embed=False)
    lib.change_status("fresh", "skill.proposed", "new version")
    for ok in (False, False, True, False):
        lib.record_outcome("deploy", ok, detail="" if ok else HOSTILE)
    for number in range(10):
        lib.record_outcome("flaky", number >= 3)
    for _ in range(5):
        lib.record_outcome("fresh", True)
        lib.record_outcome("steady", True)
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
async def pilot(library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(160, 44)) as pilot:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        yield pilot


def screen(pilot: Pilot[int]) -> HealthScreen:
    found = pilot.app.get_screen("health")
    assert isinstance(found, HealthScreen)
    return found


def table(pilot: Pilot[int]) -> HealthTable:
    return screen(pilot).query_one(HealthTable)


def names(pilot: Pilot[int]) -> list[str]:
    return [h.name for h in table(pilot).rows]


def text_of(pilot: Pilot[int], selector: str) -> str:
    return str(screen(pilot).query_one(selector, Static).content)


def detail_text(pilot: Pilot[int]) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(screen(pilot).query_one(HealthDetail).renderable())
    return captured.get()


def notices(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications]


async def test_worst_first_with_counts_trends_and_detail(pilot: Pilot[int]) -> None:
    assert screen(pilot).loaded
    rows = table(pilot).rows
    assert [(h.name, h.verdict) for h in rows[:2]] == [
        ("deploy", "DRIFTING"),
        ("flaky", "DEGRADING"),
    ]
    assert {h.name for h in rows if h.verdict == "IDLE"} == {"quiet", "caller"}
    assert all(len(table(pilot).trend_of(h)) == 8 for h in rows)  # the second half came in
    counts = text_of(pilot, "#health-counts")
    assert "6 skills" in counts
    assert "1 DRIFTING" in counts
    assert "1 DEGRADING" in counts
    assert "2 IDLE" in counts
    line = table(pilot).render_row(rows[0], False, 150).text
    assert "DRIFTING" in line
    assert "75%" in line
    assert "·······▆" in line  # seven weeks without runs, then 75% failed
    detail = detail_text(pilot)
    assert "3 of 4 runs failed in the last 30 days (75%), above the fail threshold 50%" in detail
    assert "v1 (served)" in detail
    assert "Recorded runs, every version, any age: the last 4 runs (3 failed)" in detail
    assert HOSTILE.replace("\x1b", "\\x1b") in detail  # literally, escapes made visible
    assert "window 30 days" in detail


async def test_filter_and_verdict_cycle(pilot: Pilot[int]) -> None:
    await pilot.press("slash", *"fla")
    await settle(pilot)
    assert names(pilot) == ["flaky"]
    assert "showing 1" in text_of(pilot, "#health-status")
    await pilot.press("escape")
    await settle(pilot)
    assert len(names(pilot)) == 6
    await pilot.press("escape")  # back to the table
    await pilot.press("f")
    await settle(pilot)
    assert names(pilot) == ["deploy"]
    await pilot.press("f")
    await settle(pilot)
    assert names(pilot) == ["flaky"]
    await pilot.press("f", "f", "f")  # HEALTHY, IDLE, any
    await settle(pilot)
    assert len(names(pilot)) == 6


async def test_apply_asks_first_and_changes_only_when_confirmed(
    pilot: Pilot[int], library: Library
) -> None:
    await pilot.press("a")
    await settle(pilot)
    modal = pilot.app.screen
    assert isinstance(modal, ConfirmChanges)
    listed = str(modal.query_one("#confirm-list Static", Static).content)
    assert "deploy" in listed
    assert "stable → deprecated" in listed
    assert "fresh" in listed
    assert "proposed → stable" in listed
    await pilot.press("escape")
    await settle(pilot)
    assert library.get_skill("deploy").summary.status == "stable"
    assert library.get_skill("fresh").summary.status == "proposed"
    await pilot.press("a")
    await settle(pilot)
    await pilot.press("y")
    await settle(pilot)
    assert library.get_skill("deploy").summary.status == "deprecated"
    assert library.get_skill("fresh").summary.status == "stable"
    assert any(n.startswith("applied 2 changes") for n in notices(pilot))
    deploy = next(h for h in table(pilot).rows if h.name == "deploy")
    assert deploy.status == "deprecated"
    await pilot.press("a")  # nothing left to do
    await settle(pilot)
    assert any(n.startswith("nothing to apply") for n in notices(pilot))


async def test_graph_and_back_on_the_same_skill(pilot: Pilot[int]) -> None:
    assert table(pilot).current is not None
    await pilot.press("g")
    await settle(pilot)
    graph = pilot.app.screen
    assert isinstance(graph, GraphScreen)
    focus = graph.focus_shown
    assert focus is not None
    assert focus.name == "deploy"
    assert [d.name for d in focus.radius.dependents] == ["caller"]
    await screen(pilot).show_skill("steady")  # as the app does for SkillScreenRequested
    await pilot.press("5")
    await settle(pilot)
    current = table(pilot).current
    assert current is not None
    assert current.name == "steady"


async def test_show_skill_clears_a_filter_that_hides_it(pilot: Pilot[int]) -> None:
    await pilot.press("slash", *"deploy", "enter")
    await settle(pilot)
    assert names(pilot) == ["deploy", "caller"]  # caller's flag: at risk, requires deploy
    await screen(pilot).show_skill("quiet")
    await settle(pilot)
    current = table(pilot).current
    assert current is not None
    assert current.name == "quiet"
    assert screen(pilot).query_one("#health-filter", Input).value == ""


async def test_an_empty_library_says_so(tmp_path: Path) -> None:
    with Library(tmp_path / "empty") as empty:
        app = make_app(empty, watch=False, warm=False, show_timings=False)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await pilot.press("5")
            await settle(pilot)
            assert screen(pilot).loaded
            assert table(pilot).rows == []
            assert "0 skills" in text_of(pilot, "#health-counts")
            await pilot.press("a", "g")
            await settle(pilot)
            assert pilot.app.screen.name == "health"
            assert any(n.startswith("nothing to apply") for n in notices(pilot))
