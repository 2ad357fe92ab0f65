"""The runbook respects pins and carries regression cases (issue 16): step 2 lists who is
pinned to what and leaves dependents pinned to another version out of the blast radius (step 3
does not demote them); step 5 lists the regression cases a repair must keep passing; step 7
adds the incident's case to the skill that carries on, and that write is served at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.patterns.regressions import REFERENCE, read_checklist
from store.verify import verify
from tests.store.conftest import write_skill


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    """rollout at v2 (served); `legacy` pins v1, `deploy` follows the served version;
    `rollback` will succeed it and already has a regression checklist."""
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "rollout", "Roll out a deployment.")
    library.scan([root])
    library.change_status("rollout", "skill.proposed", "reworking")
    write_skill(root, "rollout", "Roll out a deployment with a canary.")
    write_skill(root, "legacy", "Legacy deploys.", extra="metadata:\n  requires: rollout@1\n")
    write_skill(root, "deploy", "Deploy the service.", extra="metadata:\n  requires: rollout\n")
    write_skill(root, "rollback", "Roll a deployment back.")
    (root / "rollback" / "references").mkdir()
    (root / "rollback" / REFERENCE).write_text(
        "# Regression cases: rollback\n\n- [ ] names --to-revision explicitly\n",
        encoding="utf-8",
    )
    library.scan([root])
    for ok in (True, False, False, False):
        library.record_outcome("rollout", ok, version=2, detail="rollout stalled on v2")
    return library


def test_the_runbook_lists_pins_and_spares_dependents_pinned_elsewhere(lib: Library) -> None:
    run = lib.start_run("rollout", "v2 stalls every rollout")
    assert run.version_no == 2
    lib.run_step(run.run_id, 1)
    plan = lib.plan_step(run.run_id)
    assert "pinned: legacy requires rollout@1 (not hit, left as it is)" in plan.actions
    run = lib.run_step(run.run_id, 2)
    recorded = run.steps[1].payload
    assert [d["name"] for d in recorded["dependents"]] == ["deploy"]
    assert recorded["pinned_elsewhere"] == [{"name": "legacy", "pin": 1}]
    assert recorded["pins"] == [{"dependent": "legacy", "relation": "requires", "version_no": 1}]
    assert "1 pinned to another version, not hit" in run.steps[1].summary
    run = lib.run_step(run.run_id, 3)
    assert [d["name"] for d in run.steps[2].payload["demoted"]] == ["deploy"]
    assert lib.get_skill("legacy").summary.status == "stable"
    assert verify(lib).ok


def test_step_5_lists_the_cases_and_step_7_adds_the_incident_case_for_good(
    lib: Library, tmp_path: Path
) -> None:
    run = lib.start_run("rollback", "practice run")  # a skill with a checklist of its own
    for step in range(1, 5):
        lib.run_step(run.run_id, step)
    plan = lib.plan_step(run.run_id, mode="none")
    assert plan.actions == ("retire rollback without repair or successor",)
    lib.abandon_run(run.run_id, "only practice")
    lib.change_status("rollback", "skill.proposed", "back")
    lib.change_status("rollback", "skill.promoted", "back")

    run = lib.start_run("rollout", "v2 stalls every rollout")
    for step in range(1, 5):
        lib.run_step(run.run_id, step)
    plan = lib.plan_step(run.run_id, successor="rollback")
    assert plan.actions[0] == (
        "name rollback the successor of rollout (relation: rollback supersedes rollout)"
    )
    assert "no regression cases recorded for rollout yet (step 7 adds one)" in plan.actions
    lib.run_step(run.run_id, 5, successor="rollback")
    lib.run_step(run.run_id, 6)
    plan = lib.plan_step(run.run_id, regression="check the canary before widening")
    assert f"add it to rollback's {REFERENCE} for good" in " ".join(plan.actions)
    run = lib.run_step(run.run_id, 7, regression="check the canary before widening")
    assert "its regression case added to rollback" in run.steps[6].summary
    folder = tmp_path / "skills" / "rollback"
    listed = read_checklist(folder)
    assert listed[0] == "names --to-revision explicitly"
    assert listed[1].startswith("check the canary before widening (incident inc-")
    before = lib.get_skill("rollback")
    report = lib.scan([tmp_path / "skills"])
    assert report.changed == 1
    after = lib.get_skill("rollback")
    assert after.summary.version_no == before.summary.version_no + 1
    assert after.served_version == after.summary.version_no  # the runbook's own write
    assert after.candidate is None
    # a later run on the successor lists the case it carries
    run = lib.start_run("rollback", "a second look")
    for step in range(1, 5):
        lib.run_step(run.run_id, step)
    waiting = lib.plan_step(run.run_id)  # no repair yet: it says what a repair must pass
    assert waiting.waiting.startswith("waiting for a repair")
    assert "regression cases the repair must keep passing (2):" in waiting.actions
    assert any("check the canary before widening" in a for a in waiting.actions)
    assert any("names --to-revision explicitly" in a for a in waiting.actions)
    assert verify(lib).ok
