"""Computed `often_used_with` proposals: open triangles of co-usage, reviewed, not committed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.lifecycle.proposals import ProposalError
from store.verify import verify
from tests.store.conftest import write_skill
from tests.store.test_inferred_outcomes import Session


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy the API with a canary.")
    write_skill(root, "rollback", "Roll the API back to the last good release.")
    write_skill(root, "canary", "Watch a canary release.", extra="metadata:\n  requires: deploy\n")
    write_skill(root, "smoke", "Smoke-test a fresh deployment.")
    library.scan([root])
    return library


class Sessions:
    """Writes one transcript per call, each using the given skills."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def use(self, *skills: str, times: int = 1) -> None:
        for _ in range(times):
            self.count += 1
            s = Session(self.folder / f"s-{self.count}.jsonl", f"s-{self.count}")
            s.prompt(f"Release number {self.count}, please.")
            for skill in skills:
                s.skill(skill)
                s.bash("make release")


def pairs(library: Library, status: str | None = "pending") -> list[tuple[str, str, int]]:
    return [(p.source_name, p.target_name, p.shared) for p in library.relation_proposals(status)]


def events(library: Library) -> int:
    return int(library.db.conn.execute("SELECT count(*) FROM events").fetchone()[0])


def test_pairs_used_together_often_enough_are_proposed_once(lib: Library, tmp_path: Path) -> None:
    sessions = Sessions(tmp_path / "p")
    sessions.use("smoke", "deploy", times=2)
    sessions.use("smoke", "ops:rollback")  # a plugin prefix counts as the bare name
    report = lib.ingest([tmp_path / "p"])
    assert (report.relations_proposed, pairs(lib)) == (0, [])  # 2 < 3 shared sessions
    sessions.use("deploy", "smoke")
    report = lib.ingest([tmp_path / "p"])
    assert report.relations_proposed == 1
    [proposal] = lib.relation_proposals()
    assert (proposal.source_name, proposal.target_name) == ("deploy", "smoke")  # canonical
    assert (proposal.shared, proposal.status) == (3, "pending")
    assert set(proposal.sessions) == {"s-1", "s-2", "s-4"}
    payload = json.loads(
        lib.db.conn.execute("SELECT payload FROM events WHERE type='relation.proposed'").fetchone()[
            0
        ]
    )
    assert payload["shared"] == 3
    before = events(lib)
    assert lib.propose_relations() == []  # idempotent: already proposed
    assert events(lib) == before
    lib.config.set("relations.co_usage_min", "1")
    assert {(p.source_name, p.target_name) for p in lib.propose_relations()} == {
        ("rollback", "smoke")
    }
    assert verify(lib).ok


def test_any_direct_relation_closes_the_triangle(lib: Library, tmp_path: Path) -> None:
    sessions = Sessions(tmp_path / "p")
    sessions.use("canary", "deploy", times=3)  # canary requires deploy (frontmatter)
    sessions.use("rollback", "smoke", times=3)
    lib.relate("smoke", "complements", "rollback")  # the reverse of the canonical order
    lib.ingest([tmp_path / "p"])
    assert pairs(lib) == []
    lib.relate("smoke", "complements", "rollback", remove=True)
    assert pairs(lib) == []  # nothing computed until asked (or the next ingest)
    assert [(p.source_name, p.target_name) for p in lib.propose_relations()] == [
        ("rollback", "smoke")
    ]


def test_retired_skills_are_not_proposed(lib: Library, tmp_path: Path) -> None:
    lib.change_status("rollback", "skill.retired", "broke production")
    Sessions(tmp_path / "p").use("deploy", "rollback", times=3)
    lib.ingest([tmp_path / "p"])
    assert pairs(lib) == []


def test_accepting_adds_the_computed_relation(lib: Library, tmp_path: Path) -> None:
    Sessions(tmp_path / "p").use("smoke", "deploy", times=3)
    lib.ingest([tmp_path / "p"])
    accepted = lib.accept_relation("smoke", "deploy")  # either order names the pair
    assert (accepted.status, accepted.decided_by) == ("accepted", lib.actor)
    rows = lib.db.conn.execute(
        "SELECT s.name, r.type, r.target_name, r.origin FROM relations r"
        " JOIN skills s ON s.skill_id = r.source_id WHERE r.origin='computed'"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("deploy", "often_used_with", "smoke", "computed")]
    related = lib.blast("smoke").related
    assert [(r.name, r.relation) for r in related] == [("deploy", "often_used_with")]
    with pytest.raises(ProposalError, match="already accepted"):
        lib.accept_relation("deploy", "smoke")
    with pytest.raises(ProposalError, match="no proposal"):
        lib.accept_relation("deploy", "rollback")
    assert pairs(lib) == []
    assert pairs(lib, "accepted") == [("deploy", "smoke", 3)]
    assert verify(lib).ok


def test_rejecting_needs_a_reason_and_is_final(lib: Library, tmp_path: Path) -> None:
    sessions = Sessions(tmp_path / "p")
    sessions.use("smoke", "deploy", times=3)
    lib.ingest([tmp_path / "p"])
    with pytest.raises(ProposalError, match="needs a reason"):
        lib.reject_relation("deploy", "smoke", "  ")
    rejected = lib.reject_relation("deploy", "smoke", "coincidence: both run on release day")
    assert (rejected.status, rejected.reason) == (
        "rejected",
        "coincidence: both run on release day",
    )
    with pytest.raises(ProposalError, match="already rejected"):
        lib.reject_relation("deploy", "smoke", "again")
    sessions.use("smoke", "deploy", times=2)
    lib.ingest([tmp_path / "p"])
    assert pairs(lib) == []  # decided pairs stay decided
    assert pairs(lib, None) == [("deploy", "smoke", 3)]
    assert verify(lib).ok


def test_a_proposal_retired_meanwhile_cannot_be_accepted(lib: Library, tmp_path: Path) -> None:
    Sessions(tmp_path / "p").use("smoke", "deploy", times=3)
    lib.ingest([tmp_path / "p"])
    lib.change_status("smoke", "skill.retired", "flaky")
    with pytest.raises(ProposalError, match="retired"):
        lib.accept_relation("deploy", "smoke")
    assert pairs(lib) == [("deploy", "smoke", 3)]


def test_shared_sessions_have_dates_and_titles(lib: Library, tmp_path: Path) -> None:
    Sessions(tmp_path / "p").use("smoke", "deploy", times=3)
    lib.ingest([tmp_path / "p"])
    shared = lib.proposal_sessions("smoke", "deploy")
    assert {s.session_id for s in shared} == {"s-1", "s-2", "s-3"}
    assert all(s.project == "/work/api" and s.started_at for s in shared)
    assert {s.title for s in shared} == {f"Release number {n}, please." for n in (1, 2, 3)}
    with pytest.raises(ProposalError, match="unknown proposal status"):
        lib.relation_proposals("maybe")


def test_ingest_counts_only_pairs_its_own_sessions_used(lib: Library, tmp_path: Path) -> None:
    sessions = Sessions(tmp_path / "p")
    sessions.use("audit", "deploy", times=3)  # `audit` is not in the catalog yet
    lib.ingest([tmp_path / "p"])
    write_skill(tmp_path / "skills", "audit", "Audit who deployed what.")
    lib.scan([tmp_path / "skills"])
    sessions.use("smoke")
    assert lib.ingest([tmp_path / "p"]).relations_proposed == 0  # its session: one skill
    assert [(p.source_name, p.target_name) for p in lib.propose_relations()] == [
        ("audit", "deploy")
    ]
    assert verify(lib).ok
