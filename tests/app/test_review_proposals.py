"""Relation proposals in the review queue (C), driven with Pilot through the app factory over
a copy of the demo into which sessions that use two pairs of skills together were ingested;
and `librarian proposals` on the same library."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.cli.main import main
from app.dialogs.text_prompt import TextPrompt
from app.factory import make_app
from app.screens.review import ReviewScreen
from app.screenshots import paste, settle
from store.library import Library
from tests.store.test_inferred_outcomes import Session
from widgets.node_table import NodeTable
from widgets.proposal_detail import ProposalDetailView
from widgets.proposal_table import ProposalTable

PROFILING = ("flaky-test-debugging", "py-spy-profiling")
INFRA = ("secrets-rotation", "terraform-plan-review")


def use_together(folder: Path, pairs: list[tuple[str, str]], times: int = 3) -> None:
    count = 0
    for pair in pairs:
        for _ in range(times):
            count += 1
            s = Session(folder / f"co-{count}.jsonl", f"co-usage-{count}")
            s.prompt(f"Slow checkout page, attempt {count}: where does the time go?")
            for skill in pair:
                s.skill(skill)
                s.bash("make profile")


@pytest.fixture
def library(demo_library: Library, tmp_path: Path) -> Library:
    for p in demo_library.relation_proposals():  # whatever the demo proposes: out of the way
        demo_library.reject_relation(p.source_name, p.target_name, "not under test")
    use_together(tmp_path / "co", [PROFILING, INFRA])
    report = demo_library.ingest([tmp_path / "co"])
    assert report.relations_proposed == 2
    return demo_library


@pytest.fixture
async def pilot(library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        yield pilot


def review(pilot: Pilot[int]) -> ReviewScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


def status(pilot: Pilot[int]) -> str:
    return str(review(pilot).query_one("#review-status", Static).content)


def notices(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications]


def detail_text(pilot: Pilot[int]) -> str:
    """The detail pane as plain text, wide enough that no line wraps."""
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(review(pilot).query_one(ProposalDetailView).renderable())
    return captured.get()


async def answer(pilot: Pilot[int], text: str) -> None:
    prompt = pilot.app.screen
    assert isinstance(prompt, TextPrompt)
    prompt.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


def computed(library: Library) -> list[tuple[str, str, str]]:
    rows = library.db.conn.execute(
        "SELECT s.name, r.type, r.target_name FROM relations r"
        " JOIN skills s ON s.skill_id = r.source_id WHERE r.origin='computed'"
    ).fetchall()
    return [tuple(r) for r in rows]


async def test_proposals_are_listed_accepted_and_rejected(
    pilot: Pilot[int], library: Library
) -> None:
    assert "2 relations proposed (C)" in status(pilot)
    await pilot.press("C")
    await settle(pilot)
    screen = review(pilot)
    assert screen.relations_mode
    assert screen.sub_title == "Review queue · relations"
    table = screen.query_one(ProposalTable)
    assert table.has_focus
    assert [table.row_key(p) for p in table.rows] == [PROFILING, INFRA]
    assert "back to the" in status(pilot)
    assert screen.check_action("edit", ()) is False  # node-only keys are hidden

    shown = screen.query_one(ProposalDetailView)
    assert shown.proposal is not None
    assert (shown.proposal.source_name, shown.proposal.target_name) == PROFILING
    assert shown.sessions is not None
    assert len(shown.sessions) == 3
    text = detail_text(pilot)
    assert "flaky-test-debugging often_used_with py-spy-profiling" in text
    assert "Used together in 3 sessions" in text
    assert "Slow checkout page, attempt 2" in text  # the sessions' first prompts

    await pilot.press("a")
    await settle(pilot)
    assert computed(library) == [(PROFILING[0], "often_used_with", PROFILING[1])]
    assert library.blast(PROFILING[1]).related[0].name == PROFILING[0]
    assert [table.row_key(p) for p in table.rows] == [INFRA]
    assert "accepted: flaky-test-debugging often_used_with py-spy-profiling (computed)" in notices(
        pilot
    )
    assert shown.proposal is not None
    assert (shown.proposal.source_name, shown.proposal.target_name) == INFRA
    assert "attempt 5" in detail_text(pilot)

    await pilot.press("x")  # reject: a reason is required
    await answer(pilot, "  ")
    assert "a rejection needs a reason: nothing was changed" in notices(pilot)
    assert len(library.relation_proposals()) == 1
    await pilot.press("x")
    await answer(pilot, "both run on release day: coincidence")
    [rejected] = library.relation_proposals("rejected")
    assert (rejected.source_name, rejected.target_name) == INFRA
    assert rejected.reason == "both run on release day: coincidence"
    assert "rejected the proposal secrets-rotation ↔ terraform-plan-review" in notices(pilot)
    assert table.rows == []
    assert "No relation proposals waiting" in table.empty_text
    assert screen.check_action("approve", ()) is None  # nothing left to decide on

    await pilot.press("D")  # to the drafts, then back to the nodes
    await settle(pilot)
    assert screen.drafts_mode
    await pilot.press("C", "C")
    await settle(pilot)
    assert screen.mode == "nodes"
    assert screen.query_one(NodeTable).has_focus
    assert "relations proposed" not in status(pilot)


async def test_a_refused_decision_is_reported_and_leaves_the_row(
    pilot: Pilot[int], library: Library
) -> None:
    await pilot.press("C")
    await settle(pilot)
    library.reject_relation(*PROFILING, "decided elsewhere meanwhile")
    await pilot.press("a")
    await settle(pilot)
    errors = [n.message for n in pilot.app._notifications if n.severity == "error"]
    assert any("already rejected" in e for e in errors)
    table = review(pilot).query_one(ProposalTable)
    assert table.busy == frozenset()
    assert computed(library) == []


async def test_the_palette_follows_the_relations_list(pilot: Pilot[int], library: Library) -> None:
    await pilot.press("ctrl+p")
    await settle(pilot)
    await paste(pilot, "review: show the relation")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert review(pilot).relations_mode
    await pilot.press("ctrl+p")
    await settle(pilot)
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await paste(pilot, "relation: accept")
    await settle(pilot)
    options = palette.query_one(CommandList)
    titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    assert any(t.startswith("relation: accept flaky-test-debugging ↔") for t in titles)
    await pilot.press("enter")
    await settle(pilot)
    assert computed(library) == [(PROFILING[0], "often_used_with", PROFILING[1])]


def test_the_proposals_command(
    library: Library, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = str(library.paths.root)
    library.close()
    assert main(["--library", folder, "proposals", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(p["source_name"], p["target_name"], p["shared"]) for p in listed] == [
        (*PROFILING, 3),
        (*INFRA, 3),
    ]
    assert main(["--library", folder, "proposals", "reject", *INFRA]) == 2
    assert "needs a reason" in capsys.readouterr().err
    assert main(["--library", folder, "proposals", "reject", *INFRA, "--reason", "no"]) == 0
    assert main(["--library", folder, "proposals", "accept", *reversed(PROFILING)]) == 0
    assert "accepted" in capsys.readouterr().out
    assert main(["--library", folder, "proposals", "accept", *PROFILING]) == 2
    assert "already accepted" in capsys.readouterr().err
    assert main(["--library", folder, "proposals", "compute"]) == 0
    assert capsys.readouterr().out.strip() == "no new relation proposals"
    assert main(["--library", folder, "proposals", "--status", "all"]) == 0
    out = capsys.readouterr().out
    assert "rejected  secrets-rotation often_used_with terraform-plan-review" in out
    assert "accepted  flaky-test-debugging often_used_with py-spy-profiling" in out
