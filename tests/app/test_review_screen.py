"""The review queue, driven with Pilot through the app factory over a copy of the demo.

Every decision is checked three ways: what the screen shows, what the store says, and the
audit entry it left (one per decided node, with before and after). The demo holds nodes the
knowledge bar kept out of the queue (`suppressed`), so promoting them is tested on real ones.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from itertools import groupby

import pytest
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static
from textual.widgets._footer import FooterKey

from app.dialogs.text_prompt import TextPrompt
from app.factory import make_app
from app.librarian_app import LibrarianApp
from app.screens.review import ReviewScreen
from app.screenshots import paste, settle
from store.library import Library
from store.models import Node
from store.sessions.review import ReviewError
from widgets.node_detail import NodeDetailView
from widgets.node_table import NodeTable


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        yield pilot


def table(pilot: Pilot[int]) -> NodeTable:
    return pilot.app.screen.query_one(NodeTable)


def ids(pilot: Pilot[int]) -> list[str]:
    return [n.node_id for n in table(pilot).rows]


def current(pilot: Pilot[int]) -> Node:
    node = table(pilot).current
    assert node is not None
    return node


def shown(pilot: Pilot[int]) -> Node | None:
    """The node in the detail pane."""
    return pilot.app.screen.query_one(NodeDetailView).node


def status(pilot: Pilot[int]) -> str:
    return str(pilot.app.screen.query_one("#review-status", Static).content)


def pending_ids(library: Library) -> list[str]:
    """The pending nodes in the queue's order: best first."""
    return [n.node_id for n in library.nodes(status="pending", order="best")]


def suppressed_ids(library: Library) -> list[str]:
    return [n.node_id for n in library.nodes(status="suppressed", order="best")]


def footer_key(pilot: Pilot[int], action: str) -> FooterKey | None:
    keys = [k for k in pilot.app.screen.query(FooterKey) if k.action == action]
    return keys[0] if keys else None


def errors(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications if n.severity == "error"]


async def answer(pilot: Pilot[int], text: str) -> None:
    """Type into the open prompt (replacing what it holds) and press Enter."""
    prompt = pilot.app.screen
    assert isinstance(prompt, TextPrompt)
    prompt.query_one(Input).value = text
    await pilot.press("enter")
    await settle(pilot)


async def test_opens_on_the_queue_with_the_first_node_and_the_counts(
    pilot: Pilot[int], demo_library: Library
) -> None:
    assert isinstance(pilot.app.screen, ReviewScreen)
    assert table(pilot).has_focus
    expected = pending_ids(demo_library)
    assert len(expected) >= 8  # the demo's queue after the precision bar (10 on issue 11's)
    assert ids(pilot) == expected
    assert shown(pilot) == demo_library.node(expected[0])
    detail = pilot.app.screen.query_one(NodeDetailView)
    assert detail.transcript  # the messages around the evidence are loaded
    assert any(m.in_range for m in detail.transcript)
    counts = demo_library.queue_counts()
    assert counts.suppressed > 20  # the demo's candidates below the bar
    assert status(pilot).startswith(
        f"{counts.pending} pending · {counts.suppressed} kept out (S: show) · 0 decided today"
    )


async def test_approve_moves_on_and_undo_brings_it_back(
    pilot: Pilot[int], demo_library: Library
) -> None:
    first, second = ids(pilot)[:2]
    before = demo_library.queue_counts()
    await pilot.press("a")
    await settle(pilot)
    assert ids(pilot)[0] == second
    assert first not in ids(pilot)
    assert current(pilot).node_id == second
    assert shown(pilot) == demo_library.node(second)
    assert demo_library.node(first).status == "approved"
    (entry,) = demo_library.audit(node_id=first)
    assert entry.action == "approved"
    assert entry.before["status"] == "pending"
    assert entry.after["status"] == "approved"
    assert entry.actor == demo_library.actor
    assert status(pilot).startswith(
        f"{before.pending - 1} pending · {before.suppressed} kept out (S: show) · 1 decided today"
    )

    await pilot.press("u")
    await settle(pilot)
    assert ids(pilot) == pending_ids(demo_library)
    assert current(pilot).node_id == first  # back, with the cursor on it
    assert demo_library.node(first).status == "pending"
    assert [e.action for e in demo_library.audit(node_id=first)] == ["reopened", "approved"]
    assert status(pilot).startswith(
        f"{before.pending} pending · {before.suppressed} kept out (S: show) · 0 decided today"
    )  # the undone decision no longer counts
    assert demo_library.queue_counts().decided_today == 0
    assert "undone: 1 node restored" in [n.message for n in pilot.app._notifications]


async def test_reject_asks_for_an_optional_reason(pilot: Pilot[int], demo_library: Library) -> None:
    first, second = ids(pilot)[:2]
    await pilot.press("x")
    await settle(pilot)
    assert isinstance(pilot.app.screen, TextPrompt)
    await pilot.press("escape")  # cancel: nothing happens
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReviewScreen)
    assert demo_library.node(first).status == "pending"
    assert demo_library.audit(node_id=first) == []

    await pilot.press("x")
    await settle(pilot)
    await answer(pilot, "too vague to be useful")
    rejected = demo_library.node(first)
    assert rejected.status == "rejected"
    assert rejected.reason == "too vague to be useful"
    assert current(pilot).node_id == second
    (entry,) = demo_library.audit(node_id=first)
    assert (entry.action, entry.reason) == ("rejected", "too vague to be useful")
    assert (entry.before["status"], entry.after["status"]) == ("pending", "rejected")
    assert "1 decided today" in status(pilot)


async def test_edit_scope_and_skip_keep_the_node_pending(
    pilot: Pilot[int], demo_library: Library
) -> None:
    node = current(pilot)
    await pilot.press("e")
    await settle(pilot)
    assert pilot.app.screen.query_one(Input).value == node.summary  # prefilled
    await answer(pilot, "   ")  # the store refuses an empty summary: a notification
    assert errors(pilot) == ["edit failed: edit needs a non-empty summary"]
    assert current(pilot) == node
    assert table(pilot).busy == frozenset()
    assert demo_library.audit(node_id=node.node_id) == []

    await pilot.press("e")
    await settle(pilot)
    await answer(pilot, "The export needs a batched cursor.")
    assert current(pilot).node_id == node.node_id  # still pending: the cursor stays
    assert current(pilot).summary == "The export needs a batched cursor."
    assert shown(pilot) == demo_library.node(node.node_id)
    (entry,) = demo_library.audit(node_id=node.node_id)
    assert entry.action == "edited"
    assert entry.before == {"summary": node.summary}
    assert entry.after == {"summary": "The export needs a batched cursor."}

    assert node.scope == "PROJECT"
    await pilot.press("s")
    await settle(pilot)
    assert current(pilot).scope == "TEAM"
    assert shown(pilot) == demo_library.node(node.node_id)
    rescoped = demo_library.audit(node_id=node.node_id)[0]
    assert (rescoped.action, rescoped.before, rescoped.after) == (
        "rescoped",
        {"scope": "PROJECT"},
        {"scope": "TEAM"},
    )

    second = ids(pilot)[1]
    await pilot.press("n")  # skip: the node stays pending, nothing is audited
    await settle(pilot)
    assert current(pilot).node_id == second
    assert shown(pilot) == demo_library.node(second)
    assert demo_library.node(node.node_id).status == "pending"
    assert len(demo_library.audit(node_id=node.node_id)) == 2
    assert "0 decided today" in status(pilot)


async def test_marked_nodes_are_decided_together(pilot: Pilot[int], demo_library: Library) -> None:
    first, second, third = ids(pilot)[:3]
    await pilot.press("m", "m")  # marks the first two; the cursor moves down with each mark
    assert table(pilot).marked == (first, second)
    assert "2 marked" in status(pilot)
    await pilot.press("a")
    await settle(pilot)
    assert {demo_library.node(i).status for i in (first, second)} == {"approved"}
    assert demo_library.node(third).status == "pending"
    assert current(pilot).node_id == third
    assert table(pilot).marked == ()
    assert [e.node_id for e in demo_library.audit(limit=2)] == [second, first]

    await pilot.press("u")  # one batch: both come back
    await settle(pilot)
    assert {demo_library.node(i).status for i in (first, second)} == {"pending"}


async def test_select_all_visible_then_reject(pilot: Pilot[int], demo_library: Library) -> None:
    await pilot.press("f", "f", "f")  # the third node type (DISCOVERY)
    await settle(pilot)
    found = [n.node_id for n in demo_library.nodes(status="pending", type_="DISCOVERY")]
    assert found
    assert ids(pilot) == found
    await pilot.press("ctrl+a", "x")
    await settle(pilot)
    await answer(pilot, "")  # the reason is optional
    assert ids(pilot) == []
    assert {demo_library.node(i).status for i in found} == {"rejected"}
    assert len([e for e in demo_library.audit() if e.node_id in found]) == len(found)
    assert shown(pilot) is None
    assert "No node matches the filters." in str(table(pilot).render_line(1).text)


async def test_error_text_is_never_markup(
    pilot: Pilot[int], demo_library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(action: str, node_ids: list[str], **values: str) -> list[Node]:
        raise ReviewError("node [bold]n_1[/bold] was merged into [link=http://e]n_2[/link]")

    monkeypatch.setattr(demo_library, "review", refuse)
    first = ids(pilot)[0]
    await pilot.press("a")
    await settle(pilot)
    (notification,) = [n for n in pilot.app._notifications if n.severity == "error"]
    assert notification.message == (
        "approve failed: node [bold]n_1[/bold] was merged into [link=http://e]n_2[/link]"
    )
    assert notification.markup is False
    assert first in ids(pilot)  # still listed, no longer dimmed
    assert table(pilot).busy == frozenset()
    assert isinstance(pilot.app, LibrarianApp)
    assert pilot.app.is_running


async def test_filters_and_order(pilot: Pilot[int], demo_library: Library) -> None:
    await pilot.press("slash")
    await paste(pilot, "kubectl")
    await settle(pilot)
    assert ids(pilot) == [
        n.node_id for n in demo_library.nodes(status="pending", text="kubectl", order="best")
    ]
    assert 0 < len(ids(pilot)) < len(pending_ids(demo_library))
    await pilot.press("escape", "enter")  # clear the filter, back to the list
    await settle(pilot)
    assert table(pilot).has_focus
    assert ids(pilot) == pending_ids(demo_library)

    await pilot.press("o", "o", "S", "S")  # newest first (after oldest); approved (after kept out)
    await settle(pilot)
    approved = demo_library.nodes(status="approved", order="newest")
    assert ids(pilot) == [n.node_id for n in approved]
    assert pilot.app.screen.query_one("#status-filter", Select).value == "approved"
    assert "newest first" in status(pilot)

    project = current(pilot).project
    await pilot.press("P")  # only this node's project
    await settle(pilot)
    in_project = demo_library.nodes(status="approved", project=project, order="newest")
    assert ids(pilot) == [n.node_id for n in in_project]
    assert pilot.app.screen.query_one("#project-filter", Select).value == project
    await pilot.press("P")  # again: every project
    await settle(pilot)
    assert ids(pilot) == [n.node_id for n in approved]


async def test_palette_offers_decisions_that_follow_the_selection(
    pilot: Pilot[int], demo_library: Library
) -> None:
    first = ids(pilot)[0]
    await pilot.press("ctrl+p")
    await settle(pilot)
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await paste(pilot, "node: approve")
    await settle(pilot)
    options = palette.query_one(CommandList)
    titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    assert any(t.startswith("node: approve this node") for t in titles)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ReviewScreen)
    assert demo_library.node(first).status == "approved"


async def test_the_best_nodes_come_first(pilot: Pilot[int], demo_library: Library) -> None:
    rows = table(pilot).rows
    scores = [n.informativeness * n.confidence for n in rows]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]
    assert "best first" in status(pilot)
    assert shown(pilot) == rows[0]

    await pilot.press("o")  # the next order: oldest first
    await settle(pilot)
    oldest = demo_library.nodes(status="pending", order="oldest")
    assert ids(pilot) == [n.node_id for n in oldest]
    assert "oldest first" in status(pilot)


async def test_grouped_by_session_best_first_inside(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("G")
    await settle(pilot)
    grouped = demo_library.nodes(status="pending", order="best", by_session=True)
    assert ids(pilot) == [n.node_id for n in grouped]
    assert table(pilot).grouped
    assert "best first by session" in status(pilot)
    sessions = [key for key, _ in groupby(grouped, key=lambda n: n.session_id)]
    assert len(sessions) == len(set(sessions)) > 1  # each session once
    for _, members in groupby(grouped, key=lambda n: n.session_id):
        scores = [n.informativeness * n.confidence for n in members]
        assert scores == sorted(scores, reverse=True)

    # the first line is the first session's header: id, project, start and count
    first = demo_library.session(sessions[0])
    count = sum(1 for n in grouped if n.session_id == first.session_id)
    header = table(pilot).render_line(1).text
    assert header.startswith(f"▾ session {first.session_id[:8]} · {first.project} · ")
    assert f"{first.started_at[:10]} " in header
    assert f" · {count} node" in header
    assert current(pilot).node_id == grouped[0].node_id  # the cursor is on a node, not a header

    # deciding works as before: the cursor moves on to the next node, across a header
    at = count - 1
    table(pilot).cursor = at
    await pilot.press("a")
    await settle(pilot)
    assert current(pilot).node_id == grouped[at + 1].node_id
    assert current(pilot).session_id != grouped[at].session_id

    await pilot.press("G")  # one list again
    await settle(pilot)
    assert not table(pilot).grouped
    assert ids(pilot) == pending_ids(demo_library)
    assert "by session" not in status(pilot)


async def test_suppressed_nodes_are_one_filter_away_and_promoted_to_pending(
    pilot: Pilot[int], demo_library: Library
) -> None:
    before = demo_library.queue_counts()
    promote = footer_key(pilot, "promote")
    assert promote is not None
    assert promote.has_class("-disabled")  # nothing to promote among pending nodes
    await pilot.press("p")
    await settle(pilot)
    assert demo_library.queue_counts() == before

    await pilot.press("S")  # pending → kept out
    await settle(pilot)
    assert pilot.app.screen.query_one("#status-filter", Select).value == "suppressed"
    kept_out = suppressed_ids(demo_library)
    assert ids(pilot) == kept_out
    assert f"{before.suppressed} kept out (p: promote to pending)" in status(pilot)
    node = current(pilot)
    assert node.suppressed_reason
    detail = pilot.app.screen.query_one(NodeDetailView)
    assert detail.node == node
    (kept_line,) = [line for line in detail_text(pilot) if line.startswith("Kept out")]
    assert node.suppressed_reason in kept_line
    assert f"informativeness {node.informativeness:.2f}" in "\n".join(detail_text(pilot))
    promote = footer_key(pilot, "promote")
    assert promote is not None
    assert not promote.has_class("-disabled")

    await pilot.press("p")
    await settle(pilot)
    promoted = demo_library.node(node.node_id)
    assert promoted.status == "pending"
    (entry,) = demo_library.audit(node_id=node.node_id)
    assert (entry.action, entry.before, entry.after) == (
        "unsuppressed",
        {"status": "suppressed"},
        {"status": "pending"},
    )
    assert node.node_id not in ids(pilot)
    assert current(pilot).node_id == kept_out[1]  # on to the next one kept out
    assert status(pilot).startswith(
        f"{before.pending + 1} pending · {before.suppressed - 1} kept out"
    )
    assert "promoted 1 node to pending (u: undo)" in [n.message for n in pilot.app._notifications]

    await pilot.press("u")  # back below the bar, and back in this list with the cursor on it
    await settle(pilot)
    assert demo_library.node(node.node_id).status == "suppressed"
    assert ids(pilot) == kept_out
    assert current(pilot).node_id == node.node_id
    assert demo_library.queue_counts() == before


async def test_marked_suppressed_nodes_are_promoted_together(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("S")
    await settle(pilot)
    first, second, third = ids(pilot)[:3]
    await pilot.press("m", "m", "p")
    await settle(pilot)
    assert {demo_library.node(i).status for i in (first, second)} == {"pending"}
    assert demo_library.node(third).status == "suppressed"
    assert current(pilot).node_id == third
    assert table(pilot).marked == ()

    await pilot.press("S")  # on to approved: the promoted ones wait among the pending
    await pilot.press("u")  # one batch: both go back below the bar
    await settle(pilot)
    assert {demo_library.node(i).status for i in (first, second)} == {"suppressed"}


async def test_approve_and_reject_work_on_a_suppressed_node(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("S")
    await settle(pilot)
    first, second, third = ids(pilot)[:3]
    await pilot.press("a")
    await settle(pilot)
    assert demo_library.node(first).status == "approved"
    (entry,) = demo_library.audit(node_id=first)
    assert (entry.before["status"], entry.after["status"]) == ("suppressed", "approved")
    assert current(pilot).node_id == second  # the next one kept out
    assert first not in ids(pilot)

    await pilot.press("x")
    await settle(pilot)
    await answer(pilot, "narration")
    assert (demo_library.node(second).status, demo_library.node(second).reason) == (
        "rejected",
        "narration",
    )
    assert current(pilot).node_id == third

    await pilot.press("u", "u")
    await settle(pilot)
    assert {demo_library.node(i).status for i in (first, second)} == {"suppressed"}
    assert demo_library.node(first).decided_at == ""  # no longer decided


async def test_palette_offers_promote_only_for_suppressed_nodes(pilot: Pilot[int]) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ReviewScreen)
    assert not screen.can_promote()
    await pilot.press("S")
    await settle(pilot)
    assert screen.can_promote()
    await pilot.press("ctrl+p")
    await settle(pilot)
    await paste(pilot, "node: promote")
    await settle(pilot)
    options = pilot.app.screen.query_one(CommandList)
    titles = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    assert any(t.startswith("node: promote to pending") for t in titles)


def detail_text(pilot: Pilot[int]) -> list[str]:
    """The detail pane as plain lines (as `tests/widgets/test_node_detail.py` reads it)."""
    detail = pilot.app.screen.query_one(NodeDetailView)
    console = Console(width=detail.scrollable_content_region.width, file=io.StringIO())
    with console.capture() as capture:
        console.print(detail.renderable())
    return [line.rstrip() for line in capture.get().splitlines()]
