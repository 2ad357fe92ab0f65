"""Live data (issue 14): the open screen follows changes made elsewhere — the CLI, the
library itself as another screen or the hook worker would write it — without a restart,
and does nothing while nothing changes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from app import live
from app.factory import make_app
from app.screens.runbook import RunbookScreen
from app.screenshots import settle
from store.library import Library
from tests.app.test_cli import run
from widgets.suggestion_list import SuggestionList

TASK = "roll out a new version to kubernetes"


@pytest.fixture
async def pilot(
    demo_library: Library, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Pilot[int]]:
    monkeypatch.setattr(live, "POLL_SECONDS", 0.05)
    app = make_app(demo_library, watch=True, warm=False, show_timings=False)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        yield pilot


async def until(pilot: Pilot[int], check: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait (the app running) until `check()` holds; fail after `seconds`."""
    for _ in range(int(seconds / 0.05)):
        if check():
            return
        await pilot.pause(0.05)
    await settle(pilot)
    assert check()


def runbook(pilot: Pilot[int]) -> RunbookScreen:
    found = pilot.app.get_screen("runbook")
    assert isinstance(found, RunbookScreen)
    return found


async def test_a_run_started_from_the_cli_appears_on_the_open_runbook_screen(
    pilot: Pilot[int], demo_library: Library, demo_library_dir: Path
) -> None:
    await pilot.press("8")
    await settle(pilot)
    before = [r.run_id for r in runbook(pilot).runs]
    selected = runbook(pilot).run
    assert selected is not None
    started = run(
        demo_library_dir, "retire", "feature-flags", "--yes", "--reason", "leaks", "--steps", "1"
    )
    assert started.returncode == 0, started.stderr
    await until(pilot, lambda: len(runbook(pilot).runs) == len(before) + 1)
    await settle(pilot)
    shown = runbook(pilot).runs[0]
    assert (shown.skill_name, shown.step) == ("feature-flags", 1)
    still = runbook(pilot).run
    assert still is not None
    assert still.run_id == selected.run_id  # the reload keeps the run the user was reading


async def test_nothing_is_reloaded_while_nothing_changes(
    pilot: Pilot[int], demo_library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    await pilot.press("8")
    await settle(pilot)
    calls: list[str] = []
    real = demo_library.runs
    monkeypatch.setattr(demo_library, "runs", lambda **kw: calls.append("runs") or real(**kw))
    await pilot.pause(0.5)  # ten looks at the log
    assert calls == []
    demo_library.start_run("release-notes", "tone")  # as another screen would
    await until(pilot, lambda: calls != [])


async def test_suggestions_mark_drifting_and_drop_a_skill_retired_elsewhere(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("3")
    await settle(pilot)
    screen = pilot.app.screen
    screen.query_one("#task", Input).value = TASK
    await settle(pilot)
    hits = screen.query_one(SuggestionList)

    def shown() -> dict[str, str]:
        return {s.name: s.health for s in hits.suggestions}

    assert shown().get("kubernetes-rollout") == ""
    for _ in range(10):  # v1 is the version served (v2, a candidate, was set aside)
        demo_library.record_outcome("kubernetes-rollout", False, version=1, detail="stalled")
    await until(pilot, lambda: shown().get("kubernetes-rollout") == "DRIFTING")

    run = demo_library.start_run("kubernetes-rollout", "stalls every rollout")
    demo_library.run_step(run.run_id, 1)  # as the Runbook screen (or the CLI) would
    await until(pilot, lambda: "kubernetes-rollout" not in shown())
    assert screen.query_one("#task", Input).value == TASK  # not retyped
