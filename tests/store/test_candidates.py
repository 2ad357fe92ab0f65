"""Candidate versions (issue 16): a new version of a stable skill proves itself while the
previous version stays served; it takes over after clean runs (an event) or is set aside when
it drifts (an alert)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.errors import LibrarianError
from store.library import Library
from store.verify import verify
from tests.store.conftest import write_skill


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy the API with a canary.")
    write_skill(root, "rollback", "Roll the API back.", extra="metadata:\n  requires: deploy\n")
    library.scan([root])
    return library


def edit(tmp_path: Path, lib: Library, description: str) -> None:
    write_skill(tmp_path / "skills", "deploy", description)
    lib.scan([tmp_path / "skills"])


def events_of(lib: Library, type_: str) -> list[dict[str, object]]:
    import json

    with lib.db.read() as conn:
        rows = conn.execute(
            "SELECT payload FROM events WHERE type=? ORDER BY seq", (type_,)
        ).fetchall()
    return [json.loads(r[0]) for r in rows]


def test_an_edit_of_a_stable_skill_is_a_candidate_and_the_old_version_stays_served(
    lib: Library, tmp_path: Path
) -> None:
    edit(tmp_path, lib, "Deploy the API with a canary and a watch window.")
    detail = lib.get_skill("deploy")
    assert detail.summary.version_no == 2  # the file on disk
    assert detail.served_version == 1
    assert detail.candidate is not None
    assert (detail.candidate.status, detail.candidate.base_version) == ("candidate", 1)
    assert "0 of 5 clean runs" in detail.candidate.describe()
    assert detail.summary.status == "stable"
    # suggest serves (and describes) the served version, not the candidate
    hit = lib.suggest("deploy the api with a canary")[0]
    assert hit.name == "deploy"
    assert hit.description == "Deploy the API with a canary."
    assert events_of(lib, "skill.changed")[-1]["candidate"] == 1
    assert verify(lib).ok


def test_a_candidate_takes_over_after_clean_runs_in_a_row(lib: Library, tmp_path: Path) -> None:
    edit(tmp_path, lib, "Deploy the API with a canary and a watch window.")
    lib.record_outcome("deploy", False)  # a failure starts the count again
    for _ in range(4):
        lib.record_outcome("deploy", True)
    assert lib.get_skill("deploy").served_version == 1
    lib.record_outcome("deploy", True)
    detail = lib.get_skill("deploy")
    assert detail.served_version == 2
    assert detail.candidate is not None
    assert detail.candidate.status == "promoted"
    (promoted,) = events_of(lib, "skill.candidate_promoted")
    assert promoted["version_no"] == 2
    assert promoted["base_version"] == 1
    assert "5 clean runs of v2 in a row" in str(promoted["reason"])
    assert lib.suggest("watch window deploy")[0].description.endswith("watch window.")
    lineage = lib.lineage("deploy")
    assert any(c.event == "skill.candidate_promoted" for c in lineage.history)
    assert verify(lib).ok


def test_a_drifting_candidate_is_set_aside_with_an_alert(lib: Library, tmp_path: Path) -> None:
    for _ in range(6):
        lib.record_outcome("deploy", True)
    edit(tmp_path, lib, "Deploy the API all at once.")
    lib.record_outcome("deploy", True)
    lib.record_outcome("deploy", False)
    assert not events_of(lib, "skill.candidate_set_aside")
    lib.record_outcome("deploy", False)  # 2 of 3 failed: drifting
    (aside,) = events_of(lib, "skill.candidate_set_aside")
    assert aside["alert"] == "drifting"
    assert "v1 stays served" in str(aside["reason"])
    detail = lib.get_skill("deploy")
    assert detail.served_version == 1
    assert detail.summary.status == "stable"
    assert detail.candidate is not None
    assert detail.candidate.status == "set_aside"
    deploy = next(h for h in lib.health()[0] if h.name == "deploy")
    assert deploy.verdict == "HEALTHY"  # judged on what is served
    assert deploy.served_version == 1
    assert deploy.candidate is not None
    assert deploy.candidate.verdict == "DRIFTING"
    assert any("candidate v2 drifting, set aside" in f for f in deploy.flags)
    history = lib.lineage("deploy").history
    assert history[0].event == "skill.candidate_set_aside"
    assert history[0].alert == "drifting"
    assert verify(lib).ok


def test_a_new_version_replaces_an_open_candidate_and_a_revert_is_served_at_once(
    lib: Library, tmp_path: Path
) -> None:
    edit(tmp_path, lib, "Deploy the API, version two.")
    edit(tmp_path, lib, "Deploy the API, version three.")
    detail = lib.get_skill("deploy")
    assert (detail.served_version, detail.candidate.version_no) == (1, 3)  # type: ignore[union-attr]
    with lib.db.read() as conn:
        fates = conn.execute(
            "SELECT version_no, status, base_version FROM skill_candidates ORDER BY version_no"
        ).fetchall()
    assert [tuple(r) for r in fates] == [(2, "replaced", 1), (3, "candidate", 1)]
    edit(tmp_path, lib, "Deploy the API with a canary.")  # the served text again
    detail = lib.get_skill("deploy")
    assert detail.served_version == 4
    assert detail.summary.version_no == 4
    assert verify(lib).ok


def test_proposed_skills_and_thresholds_from_health_apply(lib: Library, tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "fresh", "A new skill.")
    lib.scan([tmp_path / "skills"])
    lib.change_status("fresh", "skill.proposed", "trying it out")
    write_skill(tmp_path / "skills", "fresh", "A new skill, edited.")
    lib.scan([tmp_path / "skills"])
    assert lib.get_skill("fresh").served_version == 2  # not stable: served at once
    lib.change_status("rollback", "skill.deprecated", "old")
    lib.change_status("rollback", "skill.promoted", "back")
    write_skill(
        tmp_path / "skills",
        "rollback",
        "Roll the API back, carefully.",
        extra="metadata:\n  requires: deploy\n",
    )
    lib.scan([tmp_path / "skills"])
    for _ in range(3):
        lib.record_outcome("rollback", True)
    assert lib.get_skill("rollback").served_version == 1
    lib.config.set("health.promote_after", "3")
    assert [c.event_type for c in lib.health_plan()] == ["skill.candidate_promoted"]
    _, changes = lib.health(apply=True)
    assert changes == [
        "rollback: candidate v2 takes over (3 clean runs of v2 in a row (3 runs, 0 failed))"
    ]
    assert lib.get_skill("rollback").served_version == 2
    report = verify(lib)
    assert report.ok, [(c.name, c.problems) for c in report.checks if not c.ok]


def test_a_candidate_that_requires_a_proposed_skill_waits(lib: Library, tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "canary", "Canary analysis.")
    lib.scan([tmp_path / "skills"])
    lib.change_status("canary", "skill.proposed", "new and unproven")
    write_skill(
        tmp_path / "skills",
        "deploy",
        "Deploy with canary analysis.",
        extra="metadata:\n  requires: canary\n",
    )
    report = lib.scan([tmp_path / "skills"])
    assert [u.target for u in report.unproven] == ["canary"]
    assert "a stable skill cannot depend on a proposed one" in report.unproven[0].reason
    for _ in range(5):
        lib.record_outcome("deploy", True)
    detail = lib.get_skill("deploy")
    assert detail.served_version == 1
    assert detail.candidate is not None
    assert "requires canary, which is proposed" in (detail.candidate.waiting)
    assert [u.target for u in detail.unproven] == ["canary"]
    with pytest.raises(LibrarianError, match="a stable skill cannot depend on a proposed one"):
        lib.relate("rollback", "extends", "canary")
    lib.change_status("canary", "skill.promoted", "proven")
    lib.health(apply=True)
    assert lib.get_skill("deploy").served_version == 2
    assert verify(lib).ok
