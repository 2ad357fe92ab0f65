"""Team drafts in the app, with Pilot over real libraries and the real hub: the review
queue's team source (T) covers the drafts list (D) too. A reviewer approves, rejects with a
reason and edits the hub's staged SKILL.md drafts there, each recorded in the hub with who
and when; the author cannot decide its own draft (the database refuses); the approved draft
becomes a skill under another developer's team skills root at its pull."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from app.factory import make_app
from app.screens.review import ReviewScreen
from app.screenshots import settle
from store.library import Library
from store.team import hub as hub_api
from store.team.drafts import install
from store.team.errors import TeamError
from store.team.pull import pull
from store.team.review import TeamQueue
from store.verify import verify
from tests.team.conftest import Hub
from widgets.draft_table import DraftTable

ALICE_LIBRARY = "a" * 32
NAMES = ("pool-timeouts", "retry-budgets", "lock-ordering")


def skill_md(name: str) -> str:
    return (
        f"---\nname: {name}\ndescription: What the team learned about {name.replace('-', ' ')}."
        f" Use when {name.replace('-', ' ')} show up in a service.\n---\n\n"
        f"# {name}\n\n## Steps\n\n1. Look at the pool's checked-out connections first.\n"
        "2. Keep transactions short.\n"
    )


def stage_drafts(hub: Hub, user: str, library_id: str, names: tuple[str, ...]) -> None:
    """`user`'s library stages one TEAM-scoped SKILL.md draft per name in the hub."""
    ops: list[dict[str, Any]] = []
    for i, name in enumerate(names, start=1):
        item = {
            "pattern_id": f"p_{name}",
            "name": name,
            "content": skill_md(name),
            "citations": [],
            "developer": user,
            "summary": f"Pitfall: {name.replace('-', ' ')}",
            "type": "pitfall",
            "scope": "TEAM",
            "project": "/w/api",
            "rank": 0.5 + i / 10,
            "sessions": 2,
        }
        ops.append(
            {
                "gid": f"{library_id}:{i}",
                "op": "stage",
                "kind": "draft",
                "item_id": f"d_{name}",
                "item": item,
            }
        )
    with hub.connect(user) as conn:
        hub_api.hello(conn, library_id, f"{user}'s library", (1, "0" * 63 + "1"))
        hub_api.push(conn, library_id, len(ops), ops)


def status_line(screen: Any) -> str:
    return str(screen.query_one("#review-status", Static).content)


async def test_team_drafts_are_decided_in_the_review_queue_and_installed_at_pull(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    stage_drafts(hub, "alice", ALICE_LIBRARY, NAMES)
    rita = team_library("rita", "rita")
    app = make_app(rita, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, ReviewScreen)
        await pilot.press("D")
        await settle(pilot)
        assert screen.query_one(DraftTable).rows == []  # her own library has no drafts
        await pilot.press("T")  # the team: the drafts list stays, now from the hub
        await settle(pilot)
        assert screen.drafts_mode
        table = screen.query_one(DraftTable)
        # best first (rank): lock-ordering, retry-budgets, pool-timeouts
        assert [d.name for d in table.rows] == list(reversed(NAMES))
        assert "team" in str(screen.sub_title)
        assert "3 drafts waiting" in status_line(screen)
        assert screen.check_action("edit", ()) is True
        assert screen.check_action("keep_literal", ()) is False

        await pilot.press("a")  # approve lock-ordering
        await settle(pilot)
        assert [d.name for d in table.rows] == ["retry-budgets", "pool-timeouts"]

        await pilot.press("e")  # edit retry-budgets' summary, then reject it with a reason
        await settle(pilot)
        prompt = pilot.app.screen.query_one(Input)
        assert prompt.value == "Pitfall: retry budgets"
        prompt.value = "Retry budgets: cap retries per request, not per call"
        await pilot.press("enter")
        await settle(pilot)
        assert [d.name for d in table.rows] == ["retry-budgets", "pool-timeouts"]
        await pilot.press("x")
        await settle(pilot)
        pilot.app.screen.query_one(Input).value = "too close to the gateway's own docs"
        await pilot.press("enter")
        await settle(pilot)
        assert [d.name for d in table.rows] == ["pool-timeouts"]
        assert not [n for n in pilot.app._notifications if n.severity == "error"]

        await pilot.press("T")  # back to her own library: no drafts
        await settle(pilot)
        assert screen.drafts_mode
        assert screen.query_one(DraftTable).rows == []

    queue = TeamQueue(hub.url("rex"), kind="draft")
    try:
        approved = queue.draft("d_lock-ordering")
        assert (approved.status, approved.decided_by) == ("approved", "team:rita")
        assert approved.decided_at
        rejected = queue.draft("d_retry-budgets")
        assert (rejected.status, rejected.reason) == (
            "rejected",
            "too close to the gateway's own docs",
        )
        history = queue.history("d_retry-budgets")
        assert [(h["kind"], h["actor"]) for h in history] == [
            ("stage", "alice"),
            ("edit", "rita"),
            ("reject", "rita"),
        ]
        assert all(h["at"] is not None for h in history)
        assert queue.titles["d_retry-budgets"].startswith("Retry budgets: cap retries")
        assert queue.draft("d_pool-timeouts").status == "pending"
    finally:
        queue.close()

    # bob pulls: the approved draft becomes a skill under his team skills root, the rejected
    # and the pending ones do not.
    bob = team_library("bob", "bob")
    report = pull(bob)
    assert report.drafts >= 1
    installed, problems = install(bob, lambda root: bob.scan([root]))
    assert (installed, problems) == (["lock-ordering"], [])
    root = Path(str(bob.config.get("team.skills_root")))
    assert (root / "lock-ordering" / "SKILL.md").read_text(encoding="utf-8") == skill_md(
        "lock-ordering"
    )
    assert not (root / "retry-budgets").exists()
    assert bob.get_skill("lock-ordering").summary.status == "proposed"
    assert pull(bob).events == 0  # pulling twice changes nothing
    assert install(bob, lambda root: bob.scan([root])) == ([], [])
    assert verify(bob).ok  # the bulk projection of the pull equals a replay of its events


def test_the_database_refuses_a_draft_decision_by_its_author_or_a_contributor(
    hub: Hub,
) -> None:
    stage_drafts(hub, "alice", ALICE_LIBRARY, NAMES[:1])
    refusals = {  # the author; another contributor (row-level security: unpublished)
        "alice": "permission denied for function decide",
        "bob": "no team item 'd_pool-timeouts' that you may read",
    }
    for user, refusal in refusals.items():
        queue = TeamQueue(hub.url(user), kind="draft")
        try:
            with pytest.raises(TeamError, match=refusal):
                queue.review("approve", ["d_pool-timeouts"])
        finally:
            queue.close()
    stage_drafts(hub, "rex", "b" * 32, ("own-draft",))
    queue = TeamQueue(hub.url("rex"), kind="draft")
    try:
        assert [d.name for d in queue.drafts()] == ["pool-timeouts"]  # not his own
        with pytest.raises(TeamError, match="another reviewer decides it"):
            queue.review("approve", ["d_own-draft"])
        assert queue.draft("d_own-draft").status == "pending"
    finally:
        queue.close()
