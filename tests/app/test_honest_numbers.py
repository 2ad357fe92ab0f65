"""Honest numbers, driven with Pilot over a copy of the demo: Review's `age` is the session's,
Health counts a retired skill apart from the verdicts, each run window names itself, a new
run highlights its first step, counts agree in number ("1 run"), and suggestions show an
absolute fit and say when no skill fits well."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import datetime

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from app.factory import make_app
from app.screens.health import HealthScreen
from app.screens.runbook import RunbookScreen
from app.screenshots import TASK, settle
from store.library import Library
from tests.conftest import TEST_NOW
from widgets.health_detail import HealthDetail
from widgets.health_table import HealthTable
from widgets.node_table import NodeTable, age
from widgets.suggestion_list import SuggestionList

OFF_TOPIC = "bake sourdough bread"


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(160, 44)) as pilot:
        await settle(pilot)
        yield pilot


async def go(pilot: Pilot[int], name: str) -> None:
    await pilot.app.switch_screen(name)
    await settle(pilot)


def plain(renderable: object) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


async def test_review_age_is_the_sessions_not_the_ingest(
    pilot: Pilot[int], demo_library: Library
) -> None:
    table = pilot.app.screen.query_one(NodeTable)
    starts = demo_library.session_starts()
    now = datetime.fromisoformat(TEST_NOW)
    node = table.rows[0]
    assert node.created_at[:10] == "2026-11-02"  # ingested the day before: "1d" by that
    expected = age(starts[node.session_id], now)
    assert expected.endswith(("d", "w"))
    assert expected != age(node.created_at, now)
    line = table.render_line(1).text  # the first row under the header
    assert line.rstrip().endswith(f" {expected}")


async def test_health_counts_a_retired_skill_apart(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await go(pilot, "health")
    screen = pilot.app.screen
    assert isinstance(screen, HealthScreen)
    counts = str(screen.query_one("#health-counts", Static).content)
    whole, _ = demo_library.health(trend=False)
    retired = [h for h in whole if h.status == "retired"]
    assert [h.name for h in retired] == ["k8s-rollback-v1"]
    assert retired[0].verdict == "DRIFTING"  # it failed: but it is no longer served
    drifting = sum(1 for h in whole if h.verdict == "DRIFTING" and h.status != "retired")
    assert f"{drifting} DRIFTING" in counts
    assert "1 retired" in counts
    assert f"{len(whole)} skills" in counts


async def test_health_names_each_run_window(pilot: Pilot[int]) -> None:
    await go(pilot, "health")
    screen = pilot.app.screen
    table = screen.query_one(HealthTable)
    index = next(i for i, h in enumerate(table.rows) if h.name == "kubernetes-rollout")
    table.focus()
    await pilot.press("home", *["down"] * index)
    await settle(pilot)
    text = plain(screen.query_one(HealthDetail).renderable())
    assert "1 of 7 runs failed in the last 30 days" in text  # the verdict's window
    assert "Runs by version in the last 30 days" in text  # the table's
    assert "Recorded runs, every version, any age: the last 17 runs (6 failed)" in text
    assert "v2 set aside" in text  # a candidate's own count names its window when shown


async def test_a_new_run_highlights_its_first_step(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await go(pilot, "runbook")
    screen = pilot.app.screen
    assert isinstance(screen, RunbookScreen)
    run = demo_library.start_run("release-notes", "notes promised a fix that never shipped")
    screen.load_runs(run.run_id)  # as the screen does once a run is started
    await settle(pilot)
    assert screen.run is not None
    assert screen.run.run_id == run.run_id
    assert screen.query_one("#run-steps", OptionList).highlighted == 0
    assert "Step 1/7" in plain(screen.query_one("#run-detail", Static).content)
    steps = screen.query_one("#run-steps", OptionList)
    last = steps.get_option_at_index(6)
    steps.post_message(OptionList.OptionHighlighted(steps, last, 6))  # late, from a run before
    await settle(pilot)
    assert steps.highlighted == 0
    assert "Step 1/7" in plain(screen.query_one("#run-detail", Static).content)
    status = str(screen.query_one("#runbook-status", Static).content)
    open_runs = sum(1 for r in screen.runs if r.status == "open")
    assert status.startswith(f"{len(screen.runs)} run{'s' if len(screen.runs) != 1 else ''},")
    assert f"{open_runs} open" in status


@pytest.mark.model
async def test_suggestions_show_an_absolute_fit_and_say_when_none_fits(
    pilot: Pilot[int],
) -> None:
    await go(pilot, "skills")
    await pilot.press("t")
    task = pilot.app.screen.query_one("#task", Input)
    task.value = OFF_TOPIC
    await settle(pilot)
    options = pilot.app.screen.query_one(SuggestionList)
    ranked = options.suggestions
    assert ranked  # the closest are still listed…
    assert max(s.relevance for s in ranked) < 0.25  # …but nothing fits bread
    first = str(options.get_option_at_index(0).prompt)
    assert first.startswith("no skill fits well (best fit 0.1")
    assert "fit 0." in str(options.get_option_at_index(1).prompt)

    task.value = TASK
    await settle(pilot)
    ranked = options.suggestions
    assert ranked[0].relevance >= 0.25
    assert not str(options.get_option_at_index(0).prompt).startswith("no skill fits well")
    assert ranked[-1].score < ranked[0].score  # the rank stays relative; the fit is absolute
