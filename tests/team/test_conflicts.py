"""Two decisions on one item: the hub's order decides, and both stay in the audit, in the hub
and in every library that pulls the item."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from store.library import Library
from store.team.pull import pull
from store.team.push import push
from store.team.review import DecisionOverruled, TeamQueue
from store.team.status import team_verify
from store.verify import verify
from tests.team.conftest import Hub
from tests.team.helpers import developer

FIX = "Solution: connections idle in transaction held the pool; short transactions fixed it"


def test_two_reviewers_at_once_the_first_in_the_hub_wins(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice, bob = team_library("alice", "alice"), team_library("bob", "bob")
    (node_id,) = developer(alice, "a", "/w/api", [FIX], scope="TEAM")
    push(alice)
    rita, rex = TeamQueue(hub.url("rita")), TeamQueue(hub.url("rex"))
    try:
        rita.nodes(status="pending")
        rex.nodes(status="pending")  # both see the item as staged
        rita.review("approve", [node_id])
        with pytest.raises(DecisionOverruled, match="recorded as overruled"):
            rex.review("reject", [node_id], reason="duplicate of the runbook")
        history = rex.history(node_id)
        assert [(h["kind"], h["actor"], h["applied"]) for h in history] == [
            ("stage", "alice", True),
            ("approve", "rita", True),
            ("reject", "rex", False),
        ]
        assert history[2]["overruled_by"] == history[1]["id"]
        assert rex.node(node_id).status == "approved"
        # Having seen the approval, rex may still reject it: a decision on what is there now.
        assert rex.review("reject", [node_id], reason="superseded")[0].status == "rejected"
    finally:
        rita.close()
        rex.close()

    pull(bob)
    actions = [(a.actor, a.action) for a in reversed(bob.audit(node_id=node_id))]
    assert actions == [
        ("team:rita", "team.approve"),
        ("team:rex", "team.reject.overruled"),
        ("team:rex", "team.reject"),
    ]
    assert bob.node(node_id).status == "rejected"
    assert "superseded" in bob.node(node_id).reason
    overruled = next(a for a in bob.audit(node_id=node_id) if a.action.endswith("overruled"))
    assert "came first in the hub's order" in overruled.reason

    pull(alice)
    assert [a.action for a in alice.audit(node_id=node_id)][:3] == [
        "team.reject",
        "team.reject.overruled",
        "team.approve",
    ]
    for library in (alice, bob):
        assert verify(library).ok
        assert team_verify(library).ok


def test_an_authors_edit_made_without_seeing_the_reviewers_is_overruled(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = team_library("alice", "alice")
    (node_id,) = developer(alice, "a", "/w/api", [FIX])
    push(alice)
    rita = TeamQueue(hub.url("rita"))
    try:
        rita.nodes(status="pending")
        rita.review("edit", [node_id], summary="Short transactions keep pooled connections free")
        rita.review("approve", [node_id])
    finally:
        rita.close()
    # Alice edits her copy before she has pulled the reviewer's edit.
    alice.review("edit", [node_id], summary="Solution: never hold a transaction across HTTP calls")
    report = push(alice)
    assert (report.applied, report.overruled) == (0, 1)

    pull(alice)
    node = alice.node(node_id)
    assert node.summary == "Short transactions keep pooled connections free"  # the hub's order
    assert node.status == "approved"
    actions = [a.action for a in reversed(alice.audit(node_id=node_id))]
    assert actions == [
        "approved",
        "edited",
        "team.stage",
        "team.edit",
        "team.approve",
        "team.revise.overruled",
    ]

    # Now that she has seen it, her next edit applies — and goes back to the reviewers.
    alice.review("edit", [node_id], summary="Solution: keep transactions short around HTTP calls")
    assert push(alice).applied == 1
    rita = TeamQueue(hub.url("rita"))
    try:
        (again,) = rita.nodes(status="pending")
        assert again.summary == "Solution: keep transactions short around HTTP calls"
    finally:
        rita.close()
    assert verify(alice).ok
    assert team_verify(alice).ok
