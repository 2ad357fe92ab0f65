"""Governance in the app (issue 16), driven with Pilot through the app factory over a copy of
the demo: the review queue's enrichment proposals (E: read the diff, approve writes the
SKILL.md back) and a draft's write gate (parameters, the diff, regression cases; L keeps a
literal); the Health screen's served and candidate versions; the Lineage screen's candidate
fates; the Patterns screen's counted retrievals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from app.factory import make_app
from app.screens.health import HealthScreen
from app.screens.lineage import LineageScreen
from app.screens.review import ReviewScreen
from app.screenshots import paste, settle
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.conftest import TEST_NOW
from tests.store.test_patterns import add_node, add_session
from tests.store.test_write_gate import DEAD, FIX, PROJECT
from widgets.draft_detail import DraftDetailView
from widgets.draft_table import DraftTable
from widgets.enrichment_detail import EnrichmentDetailView
from widgets.enrichment_table import EnrichmentTable
from widgets.health_detail import HealthDetail
from widgets.health_table import HealthTable
from widgets.lineage_versions import LineageVersions

THIN = "py-spy-profiling"


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        yield pilot


def review(pilot: Pilot[int]) -> ReviewScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


def plain(widget: object) -> str:
    from rich.console import Console

    console = Console(width=160, record=True, color_system=None)
    console.print(widget.renderable())  # type: ignore[attr-defined]
    return console.export_text()


async def test_enrichment_proposals_are_read_and_approved_in_the_review_queue(
    pilot: Pilot[int], demo_library: Library
) -> None:
    screen = review(pilot)
    assert "1 enrichment proposed" in str(screen.query_one("#review-status", Static).content)
    await pilot.press("E")
    await settle(pilot)
    assert screen.mode == "enrichments"
    table = screen.query_one(EnrichmentTable)
    (proposal,) = table.rows
    assert proposal.skill_name == THIN
    shown = plain(screen.query_one(EnrichmentDetailView))
    assert "the description is 37 characters (under 80)" in shown
    assert "+  when_to_use:" in shown
    assert "comments, key order and the body are kept" in shown
    assert screen.check_action("edit", ()) is False  # node-only keys are hidden
    path = Path(demo_library.get_skill(THIN).summary.fs_path)
    await pilot.press("a")
    await settle(pilot)
    assert demo_library.enrichment(proposal.proposal_id).status == "approved"
    written = await asyncio.to_thread(path.read_text, encoding="utf-8")
    assert written == proposal.after
    assert "# Quick notes from the platform team" in written
    assert table.rows == []
    skill = demo_library.get_skill(THIN)
    assert skill.served_version == skill.summary.version_no == 2
    await pilot.press("E")
    await settle(pilot)
    assert screen.mode == "nodes"


async def test_the_pending_drafts_regression_case_is_shown(pilot: Pilot[int]) -> None:
    screen = review(pilot)
    await pilot.press("D")
    await settle(pilot)
    assert len(screen.query_one(DraftTable).rows) == 1
    shown = plain(screen.query_one(DraftDetailView))
    assert "Regression cases (1)" in shown
    assert "wrong move: Raising the pool to 30+15 didn't help" in shown
    assert "nothing transient found" in shown  # the pitfall's draft names nothing transient
    assert screen.check_action("keep_literal", ()) is None  # greyed out: nothing to keep


async def test_a_reviewer_keeps_a_literal_with_l(
    tmp_path: Path,
    _embedder: FastEmbedder,  # noqa: PT019 - the shared model, used below
) -> None:
    library = Library(tmp_path / "lib", embedder=_embedder, clock=stepping_clock(TEST_NOW, 0))
    try:
        for i in range(3):
            sid = f"s{i}"
            add_session(library, sid, PROJECT, f"2026-10-{10 + i:02d}T09:00:00+00:00")
            add_node(library, f"n_dead{i}", sid, PROJECT, DEAD[i], line=10)
            add_node(
                library,
                f"n_fix{i}",
                sid,
                PROJECT,
                FIX[i],
                line=20,
                edges_in=[{"source": f"n_dead{i}", "type": "resolved"}],
            )
            library.review("approve", [f"n_dead{i}", f"n_fix{i}"])
        library.consolidate()
        library.retrieval_log.channel = "mcp"
        library.diagnose("requests time out waiting for a pooled database connection")
        (draft,) = library.graduate()[1]
        app = make_app(library, watch=False, warm=False, show_timings=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            await pilot.press("D")
            await settle(pilot)
            screen = review(pilot)
            shown = plain(screen.query_one(DraftDetailView))
            assert "Parameters (2)" in shown
            assert (
                "+# Increasing pool_size did not stop QueuePool limit timeouts in the API at"
                in (shown)
            )
            assert screen.check_action("keep_literal", ()) is True
            await pilot.press("K")
            await settle(pilot)
            await paste(pilot, "{host}")
            await pilot.press("enter")
            await settle(pilot)
            kept = library.get_draft(draft.draft_id)
            assert [r.kept for r in kept.parameters if r.parameter == "{host}"] == [True]
            assert "pg-main.payments.internal" in kept.content
            assert screen.query_one(DraftTable).busy == frozenset()
            shown = plain(screen.query_one(DraftDetailView))
            assert "kept" in shown
    finally:
        library.close()


async def test_the_approved_drafts_gate_is_kept_and_shown(demo_library: Library) -> None:
    approved = demo_library.drafts("approved")[0]
    assert [(r.parameter, r.kind) for r in approved.parameters] == [("{host}", "host")]
    assert approved.parameters[0].literal.endswith(".internal")  # an internal host name
    assert approved.regressions
    folder = Path(approved.path).parent
    assert (folder / "references" / "regression-cases.md").is_file()


async def test_health_shows_the_served_and_the_candidate_version(pilot: Pilot[int]) -> None:
    await pilot.press("5")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, HealthScreen)
    table = screen.query_one(HealthTable)
    row = next(h for h in table.rows if h.name == "sql-tuning")
    assert row.candidate is not None
    assert row.candidate.open
    assert table.move_to(row.skill_id)
    await settle(pilot)
    shown = plain(screen.query_one(HealthDetail))
    assert "Served and candidate versions" in shown
    assert "serving v1: suggested, served to agents and judged above" in shown
    assert "candidate v2 (serving v1): 0 of 5 clean runs in a row" in shown
    rollout = next(h for h in table.rows if h.name == "kubernetes-rollout")
    assert table.move_to(rollout.skill_id)
    await settle(pilot)
    shown = plain(screen.query_one(HealthDetail))
    assert "v2 set aside: drifting" in shown
    assert "alert: candidate v2 drifting, set aside" in shown


async def test_lineage_shows_each_versions_fate(pilot: Pilot[int]) -> None:
    await pilot.press("7")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LineageScreen)
    await screen.show_skill("kubernetes-rollout")
    await settle(pilot)
    versions = screen.query_one(LineageVersions)
    fates = {v.version_no: (v.fate, v.served) for v in versions.rows}
    assert fates == {2: ("candidate, set aside", False), 1: ("", True)}
    title = str(screen.query_one("#lineage-title", Static).content)
    assert "serving v1: v2 set aside: drifting" in title
