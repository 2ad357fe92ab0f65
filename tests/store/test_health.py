"""Outcomes per version, health verdicts, drift demotion, promotion and flags."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library, LibraryError
from store.lifecycle.health import verdict
from store.verify import verify
from tests.store.conftest import write_skill

SETTINGS = {"warn": 0.2, "fail": 0.5, "min_runs": 3}


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy the API with a canary.", body="Run `scripts/deploy.sh`.\n")
    (root / "deploy" / "scripts").mkdir()
    (root / "deploy" / "scripts" / "deploy.sh").write_text("echo hi\n", encoding="utf-8")
    write_skill(root, "rollback", "Roll the API back.", body="See `references/runbook.md`.\n")
    write_skill(root, "fresh", "A new skill.")
    library.scan([root])
    return library


@pytest.mark.parametrize(
    ("runs", "failures", "expected"),
    [
        (0, 0, "IDLE"),
        (2, 2, "HEALTHY"),  # too few runs for a verdict against it
        (10, 2, "HEALTHY"),  # 20%: not above warn
        (10, 3, "DEGRADING"),
        (10, 5, "DEGRADING"),  # 50%: not above fail
        (10, 6, "DRIFTING"),
    ],
)
def test_verdict_thresholds(runs: int, failures: int, expected: str) -> None:
    assert verdict(runs, failures, SETTINGS) == expected


def test_outcomes_are_kept_per_version_and_checked(lib: Library) -> None:
    lib.record_outcome("deploy", True)
    lib.record_outcome("deploy", False, version=1, session_id="s1", detail="timed out")
    with pytest.raises(LibraryError, match="no version 7"):
        lib.record_outcome("deploy", True, version=7)
    with pytest.raises(LibraryError, match="no skill named"):
        lib.record_outcome("ghost", True)
    rows, _ = lib.health()
    deploy = next(h for h in rows if h.name == "deploy")
    assert (deploy.runs, deploy.failures) == (2, 1)
    assert [(v.version_no, v.runs) for v in deploy.versions] == [(1, 2)]
    assert verify(lib).ok


def test_drifting_skills_are_deprecated_with_an_alert_and_sorted_first(lib: Library) -> None:
    for ok in (False, False, False, True):
        lib.record_outcome("deploy", ok)
    rows, changes = lib.health(apply=True)
    assert rows[0].name == "deploy"
    assert rows[0].verdict == "DRIFTING"
    assert rows[0].status == "deprecated"
    assert changes
    assert "drifting" in changes[0]
    event = lib.get_skill("deploy")
    assert event.summary.status == "deprecated"
    with lib.db.read() as conn:
        payload = conn.execute(
            "SELECT payload FROM events WHERE type='skill.deprecated' ORDER BY seq DESC"
        ).fetchone()[0]
    assert '"alert":"drifting"' in payload.replace(" ", "")
    # reversible: a maintainer re-promotes it
    lib.change_status("deploy", "skill.promoted", "repaired")
    assert lib.get_skill("deploy").summary.status == "stable"
    assert verify(lib).ok


def test_proposed_skills_are_promoted_after_clean_successes(lib: Library) -> None:
    lib.change_status("fresh", "skill.proposed", "new")
    for _ in range(4):
        lib.record_outcome("fresh", True)
    _, changes = lib.health(apply=True)
    assert not changes  # four is not enough
    lib.record_outcome("fresh", True)
    _, changes = lib.health(apply=True)
    assert changes == ["fresh: promoted to stable (5 successes of v1 and no failure)"]
    assert lib.get_skill("fresh").summary.status == "stable"


def test_a_failure_blocks_promotion(lib: Library) -> None:
    lib.change_status("fresh", "skill.proposed", "new")
    lib.record_outcome("fresh", False)
    for _ in range(6):
        lib.record_outcome("fresh", True)
    _, changes = lib.health(apply=True)
    assert not any("promoted" in c for c in changes)


def test_flags_missing_cited_files(lib: Library) -> None:
    rows, _ = lib.health()
    flags = {h.name: h.flags for h in rows}
    assert "missing file: references/runbook.md" in flags["rollback"]
    assert not any(f.startswith("missing file") for f in flags["deploy"])


def test_a_skill_is_judged_on_its_served_version_once_it_has_runs(
    lib: Library, tmp_path: Path
) -> None:
    """A proposed skill's edit is served at once (a stable skill's is a candidate first:
    tests/store/test_candidates.py), so the new version is the one judged."""
    lib.change_status("deploy", "skill.proposed", "still proving itself")
    for _ in range(8):
        lib.record_outcome("deploy", True)
    write_skill(tmp_path / "skills", "deploy", "Deploy the API with a canary, faster.")
    lib.scan([tmp_path / "skills"])
    lib.record_outcome("deploy", False)
    lib.record_outcome("deploy", False)
    deploy = next(h for h in lib.health()[0] if h.name == "deploy")
    assert (deploy.version_no, deploy.verdict, deploy.runs) == (2, "HEALTHY", 10)  # too few
    lib.record_outcome("deploy", False)
    deploy = next(h for h in lib.health()[0] if h.name == "deploy")
    assert (deploy.verdict, deploy.runs, deploy.failures) == ("DRIFTING", 3, 3)
    assert [(v.version_no, v.verdict) for v in deploy.versions] == [
        (1, "HEALTHY"),
        (2, "DRIFTING"),
    ]
    assert lib.health_first()[0][0].name == "deploy"
