"""The team's knowledge graduates across developers: two developers hit the same pitfall in
their own sessions; once one has pulled the other's approved nodes, consolidation counts two
sessions and the TEAM criterion is met; the drafted SKILL.md goes through team review and
becomes a skill under every library's team skills root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from store.embed import FastEmbedder
from store.library import Library
from store.team.drafts import install
from store.team.pull import pull
from store.team.push import push
from store.team.review import TeamQueue
from store.team.status import team_verify
from store.verify import verify
from tests.store.test_patterns import FIX, POOL, add_node, add_session
from tests.team.conftest import Hub


def pool_session(library: Library, prefix: str, project: str, day: int, i: int) -> list[str]:
    session = f"{prefix}-s"
    add_session(library, session, project, f"2026-10-{day:02d}T09:00:00+00:00")
    dead, fix = f"n_{prefix}dead", f"n_{prefix}fix"
    add_node(library, dead, session, project, POOL[i], line=10, scope="TEAM")
    add_node(
        library,
        fix,
        session,
        project,
        FIX[i],
        line=20,
        scope="TEAM",
        edges_in=[{"source": dead, "type": "resolved"}],
    )
    library.review("approve", [dead, fix])
    return [dead, fix]


def scanner(library: Library) -> Callable[[Path], object]:
    return lambda root: library.scan([root])


def decide_all(hub: Hub, reviewer: str, kind: str = "node") -> None:
    queue = TeamQueue(hub.url(reviewer), kind=kind)
    try:
        ids = [n.node_id for n in queue.nodes(status="pending")]
        assert ids
        queue.review("approve", ids)
    finally:
        queue.close()


def test_a_team_pattern_graduates_from_two_developers_sessions(
    hub: Hub, team_library: Callable[..., Library], model: FastEmbedder
) -> None:
    alice = team_library("alice", "alice", embedder=model)
    bob = team_library("bob", "bob", embedder=model)
    pool_session(alice, "a", "/w/api", 10, 0)
    pool_session(bob, "b", "/w/billing", 12, 1)

    # Alone, each developer saw the pitfall once: nothing recurs, no pattern.
    bob.consolidate()
    assert not [p for p in bob.patterns() if p.kind == "pitfall"]

    push(alice)
    decide_all(hub, "rita")
    report = pull(bob)
    assert report.nodes == 2
    bob.consolidate()
    (pattern,) = [p for p in bob.patterns() if p.kind == "pitfall"]
    assert pattern.scope == "TEAM"
    assert {n.session_id for n in bob.pattern_nodes(pattern.pattern_id)} == {"a-s", "b-s"}
    bob.retrieval_log.channel = "mcp"  # an agent asks (only its retrievals count)
    bob.diagnose("requests time out waiting for a pooled database connection")
    check = bob.graduation_check(pattern.pattern_id)
    met = {c.name: (c.value, c.met) for c in check.criteria}
    assert met["sessions"] == (2, True)  # one confirmation per session, across developers
    assert check.eligible, [c.detail for c in check.criteria]
    _checks, (draft,) = bob.graduate()

    push(bob)  # the draft (and bob's own approved nodes) go to the team
    decide_all(hub, "rex", kind="draft")
    pull(alice)
    installed, problems = install(alice, scanner(alice))
    assert (installed, problems) == ([draft.name], [])
    skill = alice.get_skill(draft.name)
    assert skill.summary.status == "proposed"
    team_root = Path(str(alice.config.get("team.skills_root")))
    assert (team_root / draft.name / "SKILL.md").read_text(encoding="utf-8") == draft.content

    pull(bob)
    installed, problems = install(bob, scanner(bob))
    assert (installed, problems) == ([draft.name], [])
    assert bob.get_draft(draft.draft_id).status == "approved"
    assert bob.pattern(pattern.pattern_id).status == "graduated"
    assert install(bob, scanner(bob)) == ([], [])  # installed once
    for library in (alice, bob):
        assert verify(library).ok, [c for c in verify(library).checks if not c.ok]
        assert team_verify(library).ok
