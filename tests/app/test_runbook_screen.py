"""The Runbook screen, driven with Pilot over a copy of the demo: start a run, see each
step's plan before it is done, give step 5 and 7 their inputs, leave and come back (the run
resumes), and the quarantine reaches suggest."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Label, OptionList, Select, Static

from app.factory import make_app
from app.screens.runbook import RunbookScreen
from app.screens.runbook_dialogs import (
    AbandonDialog,
    DialogError,
    NewRunPrompt,
    StepConfirm,
    StepInputs,
)
from app.screenshots import settle
from store.library import Library
from store.verify import verify

SKILL = "release-notes"


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        await pilot.press("8")
        await settle(pilot)
        yield pilot


def screen(pilot: Pilot[int]) -> RunbookScreen:
    found = pilot.app.get_screen("runbook")
    assert isinstance(found, RunbookScreen)
    return found


def plain(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def shown(pilot: Pilot[int], selector: str) -> str:
    return plain(screen(pilot).query_one(selector, Static).content)  # type: ignore[arg-type]


def errors(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications if n.severity == "error"]


async def answer(pilot: Pilot[int], text: str) -> None:
    """Type into the dialog's focused field and press enter."""
    await pilot.pause()
    field = pilot.app.screen.focused
    assert isinstance(field, Input)
    field.value = text
    await pilot.press("enter")
    await settle(pilot)


def top(pilot: Pilot[int]) -> Screen[Any]:
    return pilot.app.screen


def said(pilot: Pilot[int]) -> str:
    """Why the open dialog did not close."""
    return top(pilot).query_one(DialogError).said


def denied(library: Library) -> list[str]:
    with library.db.read() as conn:
        return [str(r[0]) for r in conn.execute("SELECT name FROM denylist")]


async def do_step(pilot: Pilot[int], expect: str) -> None:
    """a, read the plan in the confirmation, y."""
    await pilot.press("a")
    await settle(pilot)
    confirm = pilot.app.screen
    assert isinstance(confirm, StepConfirm)
    assert expect in " ".join(confirm.plan.actions)
    await pilot.press("y")
    await settle(pilot)


async def test_a_run_from_start_to_incident(pilot: Pilot[int], demo_library: Library) -> None:
    assert screen(pilot).loaded
    await pilot.press("plus")
    await settle(pilot)
    assert isinstance(top(pilot), NewRunPrompt)
    await answer(pilot, SKILL)
    await answer(pilot, "notes promised a fix that never shipped")
    run = screen(pilot).run
    assert run is not None
    assert run.skill_name == SKILL
    assert run.next_step == 1
    assert "will: mark release-notes retired" in shown(pilot, "#run-detail")

    await do_step(pilot, "mark release-notes retired (it is stable)")
    assert demo_library.get_skill(SKILL).summary.status == "retired"
    assert SKILL not in [h.name for h in demo_library.suggest("write release notes", limit=10)]
    await do_step(pilot, "record the blast radius")
    await do_step(pilot, "deprecate release-checklist (now stable)")
    await do_step(pilot, "record the sessions that used release-notes")
    steps = screen(pilot).query_one(OptionList)
    assert plain(steps.get_option_at_index(3).prompt).startswith(" ✓ 4 Audit recent invocations")

    # step 5: the inputs first; an unknown successor is refused and nothing changes
    await pilot.press("a")
    await settle(pilot)
    inputs = pilot.app.screen
    assert isinstance(inputs, StepInputs)
    inputs.query_one("#input-successor", Input).value = "no-such-skill"
    inputs.query_one("#input-successor", Input).focus()
    await pilot.press("enter")
    await settle(pilot)
    assert any("no skill named 'no-such-skill'" in e for e in errors(pilot))
    assert demo_library.run(run.run_id).step == 4

    await pilot.press("a")
    await settle(pilot)
    inputs = pilot.app.screen
    assert isinstance(inputs, StepInputs)
    inputs.query_one("#input-successor", Input).value = "changelog-writing"
    inputs.query_one("#input-successor", Input).focus()
    await pilot.press("enter")
    await settle(pilot)
    confirm = pilot.app.screen
    assert isinstance(confirm, StepConfirm)
    assert "name changelog-writing the successor" in confirm.plan.actions[0]
    await pilot.press("escape")  # not now: nothing is done
    await settle(pilot)
    assert demo_library.run(run.run_id).step == 4

    # leave the screen and come back: the run is where it stopped
    await pilot.press("3")
    await settle(pilot)
    await pilot.press("8")
    await settle(pilot)
    current = screen(pilot).run
    assert current is not None
    assert current.run_id == run.run_id
    assert current.next_step == 5

    await pilot.press("a")
    await settle(pilot)
    inputs = pilot.app.screen
    assert isinstance(inputs, StepInputs)
    inputs.query_one("#repair-mode", Select).value = "none"
    inputs.query_one("#input-note", Input).value = "the changelog is enough"
    inputs.query_one("#input-note", Input).focus()
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(top(pilot), StepConfirm)
    await pilot.press("y")
    await settle(pilot)
    await do_step(pilot, "nothing to re-promote: no repair or successor")

    await pilot.press("a")
    await settle(pilot)
    inputs = pilot.app.screen
    assert isinstance(inputs, StepInputs)
    assert inputs.query_one("#input-cause", Input).value == (
        "notes promised a fix that never shipped"
    )
    inputs.query_one("#input-regression", Input).value = "notes list only merged changes"
    inputs.query_one("#input-regression", Input).focus()
    await pilot.press("enter")
    await settle(pilot)
    await pilot.press("y")
    await settle(pilot)
    done = screen(pilot).run
    assert done is not None
    assert done.status == "done"
    assert "incident inc-" in shown(pilot, "#run-head")
    assert "regression case: notes list only merged changes" in shown(pilot, "#run-detail")
    [incident] = demo_library.incidents(SKILL)
    assert incident.regression == "notes list only merged changes"
    assert verify(demo_library).ok


async def test_show_skill_reopens_its_run_and_abandon_needs_a_reason(
    pilot: Pilot[int], demo_library: Library
) -> None:
    run = demo_library.start_run(SKILL, "tone")
    demo_library.run_step(run.run_id, 1)
    await pilot.press("3")
    await settle(pilot)
    await pilot.app.open_skill_screen("runbook", SKILL)  # type: ignore[attr-defined]
    await settle(pilot)
    current = screen(pilot).run
    assert current is not None
    assert current.run_id == run.run_id
    assert current.step == 1
    await pilot.press("A")
    await settle(pilot)
    assert isinstance(top(pilot), AbandonDialog)
    await answer(pilot, "")  # enter on an empty reason says why, and the run stays open
    assert "abandoning needs a reason" in said(pilot)
    assert isinstance(top(pilot), AbandonDialog)
    assert demo_library.run(run.run_id).status == "open"
    await answer(pilot, "handled by hand")
    assert demo_library.run(run.run_id).status == "abandoned"
    await pilot.press("S")  # open runs only: none left
    await settle(pilot)
    assert "No runbook runs" in shown(pilot, "#run-head")


async def test_abandon_after_quarantine_puts_the_skill_back_unless_kept(
    pilot: Pilot[int], demo_library: Library
) -> None:
    """Issue 14: `A` after the quarantine left the skill retired and on the denylist."""
    await pilot.press("plus")
    await settle(pilot)
    await answer(pilot, "feature-flags")
    await answer(pilot, "flags leak into prod")
    await do_step(pilot, "mark feature-flags retired")
    assert "feature-flags" in denied(demo_library)

    await pilot.press("A")
    await settle(pilot)
    dialog = pilot.app.screen
    assert isinstance(dialog, AbandonDialog)
    left = plain(dialog.query_one("#abandon-left", Static).render())  # type: ignore[arg-type]
    assert "feature-flags goes back to stable (the run made it retired); it leaves the" in left
    dialog.query_one("#abandon-mode", Select).value = "keep"
    await settle(pilot)
    left = plain(dialog.query_one("#abandon-left", Static).render())  # type: ignore[arg-type]
    assert "feature-flags stays retired (it was stable); it stays on the denylist" in left
    dialog.query_one("#abandon-mode", Select).value = "restore"
    await settle(pilot)
    dialog.query_one("#input-reason", Input).focus()
    await answer(pilot, "false alarm")
    assert demo_library.get_skill("feature-flags").summary.status == "stable"
    assert "feature-flags" not in denied(demo_library)
    assert any("1 status put back" in n.message for n in pilot.app._notifications)
    assert verify(demo_library).ok


async def test_new_run_checks_the_skill_first_and_completes_it(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("plus")
    await settle(pilot)
    prompt = pilot.app.screen
    assert isinstance(prompt, NewRunPrompt)
    await answer(pilot, "")
    assert "type a skill name" in said(pilot)
    await answer(pilot, "kuber")  # checked before any reason is asked
    assert "no skill named 'kuber'" in said(pilot)
    assert "did you mean kubernetes-rollback, kubernetes-rollout" in said(pilot)
    assert not prompt.query_one("#input-reason", Input).display
    field = prompt.query_one("#input-skill", Input)
    field.value = ""
    await pilot.press(*"feature-fl")
    await settle(pilot)
    await pilot.press("right")  # accepts the completion from the catalog
    assert field.value == "feature-flags"
    await pilot.press("enter")
    await settle(pilot)
    assert prompt.query_one("#input-reason", Input).display
    await answer(pilot, "  ")
    assert "a run needs a reason" in said(pilot)
    assert top(pilot) is prompt
    await answer(pilot, "flags leak")
    run = screen(pilot).run
    assert run is not None
    assert (run.skill_name, run.reason) == ("feature-flags", "flags leak")

    await pilot.press("plus")  # a skill with an open run: reopened, no reason asked
    await settle(pilot)
    await answer(pilot, "feature-flags")
    assert not isinstance(top(pilot), NewRunPrompt)
    assert len(demo_library.runs(skill="feature-flags")) == 1


async def test_step_5_shows_the_successor_field_only_for_a_successor(
    pilot: Pilot[int], demo_library: Library
) -> None:
    run = demo_library.start_run(SKILL, "tone")
    for step in (1, 2, 3, 4):
        demo_library.run_step(run.run_id, step)
    await pilot.press("S")
    await pilot.press("S")
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)
    inputs = pilot.app.screen
    assert isinstance(inputs, StepInputs)
    successor = inputs.query_one("#input-successor", Input)
    assert successor.display
    await answer(pilot, "")  # empty: says why instead of closing
    assert "name the successor skill" in said(pilot)
    assert top(pilot) is inputs
    inputs.query_one("#repair-mode", Select).value = "none"
    await settle(pilot)
    assert not successor.display
    assert "nothing replaces it" in str(inputs.query_one("#repair-hint", Label).render())
    inputs.query_one("#input-note", Input).focus()
    await answer(pilot, "")
    confirm = pilot.app.screen
    assert isinstance(confirm, StepConfirm)
    assert confirm.plan.actions == ("retire release-notes without repair or successor",)
