"""Two developers and a reviewer, through a real PostgreSQL hub: push, team review, pull."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from store.content import ERASED
from store.library import Library
from store.sessions.review import ReviewError
from store.team.pull import pull
from store.team.push import push
from store.team.review import TeamQueue
from store.team.status import team_status, team_verify
from store.verify import verify
from tests.team.conftest import Hub
from tests.team.helpers import developer

API = "/w/api"
WEB = "/w/web"
DEAD = "Dead end: raising pool_size to 50 did not stop QueuePool timeouts in the api"
FIX = "Solution: connections idle in transaction held the pool; short transactions fixed it"
TSC = "Dead end: npx tsc fails with TS2307 for @testing-library/react in the web app"


def test_push_review_pull_between_two_developers(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = team_library("alice", "alice")
    bob = team_library("bob", "bob")
    ids = developer(alice, "a", API, [DEAD, FIX])
    (team_tip,) = developer(alice, "t", WEB, [TSC], scope="TEAM", session_day=11)
    developer(bob, "b", API, ["Investigation: read the pool settings in db.py"], approve=False)

    report = push(alice)
    assert (report.ops, report.applied, report.batches) == (3, 3, 1)
    assert report.anchored > 0
    again = push(alice)
    assert (again.ops, again.round_trips, again.queued_events) == (0, 1, 0)

    # Nothing is published before a reviewer approves it.
    assert pull(bob).events == 0
    rita = TeamQueue(hub.url("rita"))
    try:
        pending = rita.nodes(status="pending", order="best")
        assert sorted(n.node_id for n in pending) == sorted([*ids, team_tip])
        assert all(n.status == "pending" and "team: alice" in n.developer for n in pending)
        decided = rita.review("approve", [ids[0], team_tip])
        assert {n.status for n in decided} == {"approved"}
        rita.review("reject", [ids[1]], reason="too vague for the team")
        assert rita.queue_counts().pending == 0
    finally:
        rita.close()

    got = pull(bob)
    # Bob works on the api project: its approved node, plus the TEAM-scoped one from web.
    assert got.events == 2  # the two approvals; the rejected node was never published
    assert bob.node(ids[0]).status == "approved"
    assert bob.node(ids[0]).decided_by == "team:rita"
    assert bob.node(ids[0]).evidence  # the evidence came along
    assert bob.node(team_tip).scope == "TEAM"
    assert bob.node_count(status="approved") == 2
    assert all(n.node_id != ids[1] for n in bob.nodes())
    audit = bob.audit(node_id=ids[0])
    assert [a.action for a in audit] == ["team.approve"]
    assert audit[0].actor == "team:rita"

    before = bob.last_seq()
    second = pull(bob)
    assert (second.events, second.round_trips) == (0, 1)
    assert bob.last_seq() == before  # pulling twice changes nothing

    # The author learns the team's verdicts on her own nodes.
    pull(alice)
    assert alice.node(ids[0]).status == "approved"
    assert alice.node(ids[1]).status == "rejected"
    assert "too vague" in alice.node(ids[1]).reason
    status = team_status(alice)
    assert status.reachable
    assert status.mine_in_hub == {"approved": 2, "rejected": 1}
    assert status.queued == 0

    for library in (alice, bob):
        assert verify(library).ok, [c for c in verify(library).checks if not c.ok]
        assert team_verify(library).ok, team_verify(library).as_dict()


def test_a_pulled_node_is_decided_in_the_hub_not_here(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice, bob = team_library("alice", "alice"), team_library("bob", "bob")
    (node_id,) = developer(alice, "a", API, [FIX], scope="TEAM")
    push(alice)
    rita = TeamQueue(hub.url("rita"))
    try:
        rita.nodes(status="pending")
        rita.review("approve", [node_id])
    finally:
        rita.close()
    pull(bob)
    with pytest.raises(ReviewError, match="came from the team hub"):
        bob.review("reject", [node_id])
    assert push(bob).ops == 0  # nothing of the team's goes back up from here


@pytest.mark.parametrize("what", ["node", "text"])  # by id, or by a text it holds
def test_a_node_forgotten_here_stays_erased_when_the_hub_sends_it_again(
    hub: Hub, team_library: Callable[..., Library], what: str
) -> None:
    alice = team_library("alice", "alice")
    bob = team_library("bob", "bob")
    (tip,) = developer(alice, "t", WEB, [TSC], scope="TEAM")
    push(alice)
    rita = TeamQueue(hub.url("rita"))
    try:
        rita.review("approve", [tip])
        assert pull(bob).events == 1
        assert bob.node(tip).summary == TSC
        bob.forget(what, tip if what == "node" else "TS2307", reason="not ours to keep")
        gone = bob.node(tip)
        assert (gone.status, gone.summary) == ("forgotten", ERASED), (gone.status, gone.summary)
        rita.review("scope", [tip], scope="PROJECT")  # the item, its summary included, again
    finally:
        rita.close()
    assert pull(bob).events == 1
    assert [
        (n.node_id, n.status, n.summary[:30], n.evidence[:30])
        for n in bob.nodes()
        if "TS2307" in n.summary + n.evidence
    ] == []
    assert verify(bob).ok
