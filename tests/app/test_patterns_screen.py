"""The Patterns screen and the drafts in the review queue, driven with Pilot through the app
factory over a copy of the demo.

Besides the demo's own patterns (one of them with a pending draft), the tests add patterns
through the event log, as consolidation would: one that meets every graduation criterion,
one that decayed, one graduated whose basis decayed (re-validate), and one whose title is
hostile markup. Every write is checked on screen and in the store.
"""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.dialogs.text_prompt import TextPrompt
from app.factory import make_app
from app.screens.patterns import PatternsScreen
from app.screens.review import ReviewScreen
from app.screens.sessions import SessionsScreen
from app.screenshots import paste, settle
from store.library import Library
from store.models import ConsolidationReport, Draft, Node, Pattern
from store.patterns.graduate import approved_text
from widgets.dag_view import DagView
from widgets.draft_detail import DraftDetailView
from widgets.draft_table import DraftTable
from widgets.node_table import NodeTable
from widgets.pattern_detail import PatternDetailView
from widgets.pattern_members import PatternMembers
from widgets.pattern_table import PatternTable

PAYMENTS = "/home/dev/work/payments-api"
READY = "p_test_ready"
FADED = "p_test_faded"
STALE = "p_test_stale"
HOSTILE = "p_test_hostile"
HOSTILE_TITLE = "[bold]x[/] and [link=http://e]y[/link] \x1b[31mred\x1b[0m"


def members_in_sessions(library: Library, count: int) -> list[Node]:
    """Approved payments nodes, one from each of `count` sessions."""
    chosen: dict[str, Node] = {}
    for node in library.nodes(status="approved", project=PAYMENTS):
        chosen.setdefault(node.session_id, node)
    assert len(chosen) >= count, "the demo needs approved nodes in enough sessions"
    return list(chosen.values())[:count]


def add_pattern(
    library: Library, pattern_id: str, title: str, members: Sequence[Node], **changes: Any
) -> None:
    """One pattern, recorded the way consolidation records it."""
    record: dict[str, Any] = {
        "pattern_id": pattern_id,
        "kind": "strategy",
        "polarity": "key",
        "title": title,
        "summary": f"{title} (summary)",
        "trigger": "When the rollout hangs.",
        "steps": [
            {
                "text": f"Step from {n.node_id}",
                "node_id": n.node_id,
                "session_id": n.session_id,
                "file": n.file,
                "line_start": n.line_start,
                "line_end": n.line_end,
            }
            for n in members
        ],
        "resolution": "Roll back, then fix forward.",
        "severity": "",
        "scope": "PROJECT",
        "project": PAYMENTS,
        "classifier": "rules",
        "base_confidence": 0.6,
        "confidence": 0.6,
        "members": [[n.node_id, n.session_id] for n in members],
        "sessions": len({n.session_id for n in members}),
        "developers": 1,
        "first_seen": "2026-01-01T00:00:00+00:00",
        "last_seen": "2026-10-30T00:00:00+00:00",
        "status": "active",
        "fingerprint": pattern_id,
        **changes,
    }
    with library.db.write() as conn:
        library.append_event(
            conn, "pattern.consolidated", "patterns", {"patterns": [record], "dissolved": []}
        )


def retrieve(library: Library, pattern_id: str, times: int) -> None:
    for number in range(times):
        library.log_retrieval(  # an agent's request over MCP: graduation counts it
            "mcp.suggest",
            f"question {number}",
            [("pattern", pattern_id, 1, 0.9)],
            project=PAYMENTS,
        )


@pytest.fixture
def library(demo_library: Library) -> Library:
    members = members_in_sessions(demo_library, 3)
    add_pattern(demo_library, READY, "Roll back the stuck rollout first", members)
    retrieve(demo_library, READY, 3)
    add_pattern(demo_library, FADED, "An old habit", members[:2], status="decayed", confidence=0.2)
    add_pattern(
        demo_library,
        STALE,
        "A graduated pitfall that faded",
        members[:2],
        kind="pitfall",
        severity="high",
        status="graduated",
        confidence=0.2,
    )
    add_pattern(demo_library, HOSTILE, HOSTILE_TITLE, members[:2], kind="insight")
    assert demo_library.graduation_check(READY).eligible
    return demo_library


@pytest.fixture
async def pilot(library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        yield pilot


def screen(pilot: Pilot[int]) -> PatternsScreen:
    current = pilot.app.screen
    assert isinstance(current, PatternsScreen)
    return current


def table(pilot: Pilot[int]) -> PatternTable:
    return pilot.app.get_screen("patterns").query_one(PatternTable)


def ids(pilot: Pilot[int]) -> list[str]:
    return [p.pattern_id for p in table(pilot).rows]


def detail(pilot: Pilot[int]) -> PatternDetailView:
    return pilot.app.get_screen("patterns").query_one(PatternDetailView)


def members(pilot: Pilot[int]) -> PatternMembers:
    return pilot.app.get_screen("patterns").query_one(PatternMembers)


def status(pilot: Pilot[int]) -> str:
    return str(pilot.app.get_screen("patterns").query_one("#patterns-status", Static).content)


def review_status(pilot: Pilot[int]) -> str:
    return str(pilot.app.get_screen("review").query_one("#review-status", Static).content)


def row_text(pilot: Pilot[int], pattern_id: str) -> str:
    index = table(pilot).index_of(pattern_id)
    assert index is not None
    return table(pilot).render_row(table(pilot).rows[index], False, 130).text


def detail_text(pilot: Pilot[int]) -> str:
    """The detail pane as plain text, wide enough that no line wraps."""
    return plain(detail(pilot).renderable())


def plain(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def errors(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications if n.severity == "error"]


def notices(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications]


async def focus_pattern(pilot: Pilot[int], pattern_id: str) -> None:
    screen(pilot).show_pattern(pattern_id)
    await settle(pilot)
    current = table(pilot).current
    assert current is not None
    assert current.pattern_id == pattern_id


async def answer(pilot: Pilot[int], text: str) -> None:
    prompt = pilot.app.screen
    assert isinstance(prompt, TextPrompt)
    prompt.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


def pending_draft(library: Library, pattern_id: str) -> Draft:
    (draft,) = [d for d in library.drafts(status="pending") if d.pattern_id == pattern_id]
    return draft


async def test_lists_patterns_by_kind_with_their_state(pilot: Pilot[int], library: Library) -> None:
    everything = library.patterns()
    assert table(pilot).has_focus
    assert sorted(ids(pilot)) == sorted(p.pattern_id for p in everything)
    kinds = [p.kind for p in table(pilot).rows]
    order = ["pitfall", "strategy", "insight"]
    assert kinds == sorted(kinds, key=order.index)  # grouped: pitfalls, strategies, insights
    assert "eligible" in row_text(pilot, READY)
    assert "4/5" not in row_text(pilot, READY)
    assert "5/5" in row_text(pilot, READY)
    assert "decayed" in row_text(pilot, FADED)
    assert "re-validate" in row_text(pilot, STALE)
    counts = {k: sum(p.kind == k for p in everything) for k in order}
    assert status(pilot).startswith(f"{len(everything)} patterns: {counts['pitfall']} pitfall")
    assert "1 eligible" in status(pilot)
    assert "1 to re-validate" in status(pilot)
    drafts = len(library.drafts(status="pending"))
    assert f"{drafts} draft" in status(pilot)


async def test_decayed_rows_are_dimmed(pilot: Pilot[int]) -> None:
    grid = table(pilot)
    dim = grid.get_component_rich_style("pattern-table--dim")
    index = grid.index_of(FADED)
    assert index is not None
    strip = grid.render_row(grid.rows[index], False, 130)
    assert all(seg.style is not None and seg.style.color == dim.color for seg in strip)


async def test_the_highlighted_pattern_shows_criteria_steps_and_members(
    pilot: Pilot[int], library: Library
) -> None:
    await focus_pattern(pilot, READY)
    check = detail(pilot).check
    assert check is not None
    assert check.pattern.pattern_id == READY
    assert check.eligible
    text = detail_text(pilot)
    for criterion in check.criteria:
        assert criterion.detail in text
    assert "3 distinct sessions" in text
    assert "Eligible: graduate drafts a SKILL.md" in text
    assert "When the rollout hangs." in text
    assert "Roll back, then fix forward." in text
    assert [n.node_id for n in members(pilot).rows] == [
        n.node_id for n in library.pattern_nodes(READY)
    ]

    await focus_pattern(pilot, FADED)  # unmet criteria are marked and named
    text = detail_text(pilot)
    assert "✗" in text
    assert "Not eligible yet:" in text
    assert screen(pilot).check_action("graduate", ()) is None  # greyed out
    await pilot.press("a")
    await settle(pilot)
    assert [d for d in library.drafts() if d.pattern_id == FADED] == []


async def test_kind_and_text_filters(pilot: Pilot[int], library: Library) -> None:
    await pilot.press("f")  # pitfalls only
    await settle(pilot)
    pitfalls = [p.pattern_id for p in library.patterns(kind="pitfall")]
    assert sorted(ids(pilot)) == sorted(pitfalls)
    assert "kind: pitfalls" in status(pilot)
    await pilot.press("f", "f", "f")  # strategies, insights, then every kind
    await settle(pilot)
    assert len(ids(pilot)) == len(library.patterns())

    await pilot.press("slash")
    await paste(pilot, "stuck rollout")
    await settle(pilot)
    assert ids(pilot) == [READY]
    await pilot.press("enter")
    assert table(pilot).has_focus
    await pilot.press("slash")
    await paste(pilot, "no pattern says this")
    await settle(pilot)
    assert ids(pilot) == []
    assert "No pattern matches the filters." in table(pilot).render_line(1).text
    assert detail(pilot).pattern is None


async def test_enter_on_a_member_opens_the_dag_on_that_node(pilot: Pilot[int]) -> None:
    await focus_pattern(pilot, READY)
    await pilot.press("M")
    await settle(pilot)
    assert members(pilot).has_focus
    await pilot.press("down")
    target = members(pilot).current
    assert target is not None
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SessionsScreen)
    dag = pilot.app.screen.query_one(DagView)
    assert dag.has_focus
    assert dag.current is not None
    assert dag.current.node_id == target.node_id

    await pilot.press("6")  # back: the pattern is still highlighted
    await settle(pilot)
    assert table(pilot).current is not None
    assert table(pilot).current.pattern_id == READY


async def test_graduate_drafts_then_the_review_queue_approves(
    pilot: Pilot[int], library: Library
) -> None:
    before = len(library.drafts(status="pending"))
    await focus_pattern(pilot, READY)
    await pilot.press("a")  # eligible: a draft is made
    await settle(pilot)
    draft = pending_draft(library, READY)
    assert f"drafted {draft.name}: it waits in the review queue" in notices(pilot)
    check = detail(pilot).check
    assert check is not None
    assert check.draft == draft
    text = detail_text(pilot)
    assert "Draft SKILL.md" in text
    assert f'name: "{draft.name}"' in text
    assert "Citations" in text
    assert "draft" in row_text(pilot, READY)

    await pilot.press("1")  # the review queue says drafts wait, and D lists them
    await settle(pilot)
    assert f"{before + 1} drafts waiting (D)" in review_status(pilot)
    await pilot.press("D")
    await settle(pilot)
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    assert review.drafts_mode
    drafts = review.query_one(DraftTable)
    assert drafts.has_focus
    assert [d.draft_id for d in drafts.rows] == [
        d.draft_id for d in library.drafts(status="pending")
    ]
    assert drafts.move_to(draft.draft_id)
    await settle(pilot)
    assert review.query_one(DraftDetailView).draft == draft
    assert review.check_action("edit", ()) is False  # node-only keys are hidden
    assert review.check_action("undo", ()) is False
    await pilot.press("a")
    await settle(pilot)
    decided = library.get_draft(draft.draft_id)
    assert decided.status == "approved"
    skill = library.get_skill(draft.name)
    assert skill.summary.status == "proposed"
    written = await asyncio.to_thread(Path(decided.path).read_text, encoding="utf-8")
    assert written == approved_text(draft, library.actor)  # the draft, and who approved it
    assert "librarian-approved-by" in written
    assert draft.draft_id not in [d.draft_id for d in drafts.rows]
    assert f"approved {draft.name}: installed as a proposed skill" in notices(pilot)

    await pilot.press("D")  # back to the nodes, as before
    await settle(pilot)
    assert not review.drafts_mode
    assert review.query_one(NodeTable).has_focus
    await pilot.press("6")
    await settle(pilot)
    assert "graduated" in row_text(pilot, READY)
    assert library.pattern(READY).skill_name == draft.name


async def test_graduate_approves_a_pending_draft_on_the_patterns_screen(
    pilot: Pilot[int], library: Library
) -> None:
    await focus_pattern(pilot, READY)
    await pilot.press("a")
    await settle(pilot)
    draft = pending_draft(library, READY)
    await pilot.press("a")  # the draft is pending: graduate approves it
    await settle(pilot)
    assert library.get_draft(draft.draft_id).status == "approved"
    assert library.get_skill(draft.name).summary.status == "proposed"
    assert library.pattern(READY).status == "graduated"
    assert screen(pilot).check_action("graduate", ()) is None


async def test_reject_a_draft_needs_a_reason(pilot: Pilot[int], library: Library) -> None:
    await focus_pattern(pilot, READY)
    assert screen(pilot).check_action("reject_draft", ()) is None  # no draft yet
    await pilot.press("a")
    await settle(pilot)
    draft = pending_draft(library, READY)
    await pilot.press("x")
    await settle(pilot)
    assert isinstance(pilot.app.screen, TextPrompt)
    await pilot.press("escape")  # cancel: nothing happens
    await settle(pilot)
    assert library.get_draft(draft.draft_id).status == "pending"

    await pilot.press("x")
    await settle(pilot)
    await answer(pilot, "  ")  # the store wants a reason
    assert errors(pilot) == ["reject failed: a rejection needs a reason"]
    assert library.get_draft(draft.draft_id).status == "pending"

    await pilot.press("x")
    await settle(pilot)
    await answer(pilot, "too specific to one file")
    rejected = library.get_draft(draft.draft_id)
    assert (rejected.status, rejected.reason) == ("rejected", "too specific to one file")
    assert "eligible" in row_text(pilot, READY)  # it can be drafted again
    assert screen(pilot).check_action("graduate", ()) is True


async def test_the_review_queue_rejects_a_draft_with_a_reason(
    pilot: Pilot[int], library: Library
) -> None:
    await focus_pattern(pilot, READY)
    await pilot.press("a")
    await settle(pilot)
    draft = pending_draft(library, READY)
    await pilot.press("1", "D")
    await settle(pilot)
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    assert review.query_one(DraftTable).move_to(draft.draft_id)
    await pilot.press("x")
    await settle(pilot)
    await answer(pilot, "duplicates kubernetes-rollback")
    rejected = library.get_draft(draft.draft_id)
    assert (rejected.status, rejected.reason) == ("rejected", "duplicates kubernetes-rollback")
    assert draft.draft_id not in [d.draft_id for d in review.query_one(DraftTable).rows]


async def test_untrusted_titles_are_shown_literally(pilot: Pilot[int]) -> None:
    row = row_text(pilot, HOSTILE)
    assert "[bold]x[/] and [link=http://e]y[/link]" in row
    assert "\x1b" not in row
    assert "\\x1b[31mred" in row
    await focus_pattern(pilot, HOSTILE)
    text = detail_text(pilot)
    assert "[bold]x[/] and [link=http://e]y[/link] \\x1b[31mred\\x1b[0m" in text
    assert "\x1b" not in text


async def test_consolidate_runs_in_the_background_and_reloads(
    pilot: Pilot[int], library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    consolidate = library.consolidate

    def slow_consolidate(**options: Any) -> ConsolidationReport:
        assert release.wait(10)
        return consolidate(**options)

    monkeypatch.setattr(library, "consolidate", slow_consolidate)
    await pilot.press("c")
    assert "consolidating…" in status(pilot)  # the screen still answers meanwhile
    assert screen(pilot).check_action("consolidate", ()) is None  # once at a time
    await pilot.press("down", "up")
    assert table(pilot).cursor == 0
    release.set()
    await settle(pilot)
    assert any(n.startswith("consolidated ") for n in notices(pilot))
    assert "consolidating…" not in status(pilot)
    assert screen(pilot).check_action("consolidate", ()) is True
    assert sorted(ids(pilot)) == sorted(p.pattern_id for p in library.patterns())


async def test_palette_graduates_and_shows_patterns(pilot: Pilot[int], library: Library) -> None:
    await focus_pattern(pilot, READY)
    titles = await palette_titles(pilot, "pattern: graduate")
    assert titles[0].startswith("pattern: graduate")
    await pilot.press("enter")
    await settle(pilot)
    assert pending_draft(library, READY).pattern_id == READY

    await pilot.press("1")  # from another screen, a pattern by its title
    await settle(pilot)
    await palette_titles(pilot, "pattern: show an old habit")
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, PatternsScreen)
    assert table(pilot).current is not None
    assert table(pilot).current.pattern_id == FADED


async def palette_titles(pilot: Pilot[int], query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await settle(pilot)
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await paste(pilot, query)
    await settle(pilot)
    options = palette.query_one(CommandList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


def test_matching_is_grouped_by_kind(library: Library) -> None:
    from widgets.pattern_table import matching

    found: list[Pattern] = matching(library.patterns(), None, "")
    assert [p.kind for p in found] == sorted(
        (p.kind for p in found), key=["pitfall", "strategy", "insight"].index
    )
    assert [p.pattern_id for p in matching(found, "strategy", "STUCK rollout")] == [READY]


async def test_keys_follow_the_users_keymap(pilot: Pilot[int], library: Library) -> None:
    pilot.app.set_keymap({"patterns.graduate": "G", "review.drafts": "ctrl+d"})
    await focus_pattern(pilot, READY)
    await pilot.press("a")  # no longer bound
    await settle(pilot)
    assert [d for d in library.drafts() if d.pattern_id == READY] == []
    await pilot.press("G")
    await settle(pilot)
    assert pending_draft(library, READY).pattern_id == READY

    await pilot.press("1")
    await settle(pilot)
    assert "drafts waiting (^d)" in review_status(pilot)  # the hint names the user's key
    await pilot.press("ctrl+d")
    await settle(pilot)
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    assert review.drafts_mode
