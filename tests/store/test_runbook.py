"""The retirement runbook: seven recorded steps, resumable, atomic, and the quarantine holds
in suggest, the MCP server and the SessionStart hook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.mcp_tools import Tools
from store.library import Library, LibraryError
from store.lifecycle.runbook import RunbookError
from store.lifecycle.status import TransitionError
from store.models import Event
from store.patterns import session_start as ss
from store.verify import verify
from tests.store.conftest import write_skill
from tests.store.test_ingest import Transcript

PROJECT = "/work/payments"


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    """`rollout` is required by `deploy` and `canary` (canary extends deploy too: a diamond);
    `rollout-v2` is its would-be successor; `unrelated` stays out of it."""
    library = make_library()
    root = tmp_path / "skills"
    for name, text in (
        ("rollout", "Roll out a kubernetes deployment with a canary and roll back on errors."),
        ("rollout-v2", "Roll out a kubernetes deployment progressively, checking probes."),
        ("deploy", "Deploy the payments service to production."),
        ("canary", "Run a canary release of the payments service."),
        ("unrelated", "Format SQL queries."),
    ):
        write_skill(root, name, text)
    library.scan([root])
    for a, kind, b in (
        ("deploy", "requires", "rollout"),
        ("canary", "requires", "rollout"),
        ("canary", "extends", "deploy"),
    ):
        library.relate(a, kind, b)
    library.change_status("rollout-v2", "skill.proposed", "new")
    for ok in (True, False, False, False):
        library.record_outcome("rollout", ok, detail="kubectl rollout undo picked revision 0")
    projects = tmp_path / "projects"
    for sid in ("s1", "s2"):
        t = Transcript(projects / f"{sid}.jsonl", sid, PROJECT)
        t.prompt("Roll out the payments release.")
        t.tool("Skill", "rollout", "Launching skill: rollout")
        t.tool("Bash", "kubectl rollout undo deploy/payments", "no revision 0", is_error=True)
        t.say("The rollback failed.")
    library.ingest([projects])
    return library


def run_all(library: Library, run_id: str, **inputs: str) -> None:
    run = library.run(run_id)
    while run.next_step is not None:
        run = library.run_step(run_id, run.next_step, **inputs)


def status(library: Library, name: str) -> str:
    return library.get_skill(name).summary.status


def test_a_full_run_with_a_successor(lib: Library) -> None:
    run = lib.start_run("rollout", "rollbacks pick revision 0")
    assert run.step == 0
    assert run.next_step == 1
    assert lib.start_run("rollout", "again") == run  # an open run is resumed, not duplicated

    plan = lib.plan_step(run.run_id)
    assert plan.step == 1
    assert any("retired" in a for a in plan.actions)
    run = lib.run_step(run.run_id, 1)
    assert status(lib, "rollout") == "retired"

    run = lib.run_step(run.run_id, 2)
    blast = run.steps[1].payload
    assert blast["dependent_count"] == 2
    assert sorted(d["name"] for d in blast["dependents"]) == ["canary", "deploy"]
    assert blast["session_count"] == 2

    assert any("deprecate deploy" in a for a in lib.plan_step(run.run_id).actions)
    run = lib.run_step(run.run_id, 3)
    assert status(lib, "deploy") == status(lib, "canary") == "deprecated"
    assert status(lib, "unrelated") == "stable"

    run = lib.run_step(run.run_id, 4)
    audit = run.steps[3].payload
    recorded = [f for f in audit["failed"] if not f["inferred"]]
    assert audit["runs"] - audit["inferred"] == 4
    assert len(recorded) == 3
    assert audit["session_count"] == 2
    assert recorded[0]["detail"] == "kubectl rollout undo picked revision 0"

    waiting = lib.plan_step(run.run_id)
    assert waiting.step == 5
    assert waiting.waiting.startswith("waiting for a repair")
    with pytest.raises(RunbookError, match="waiting for a repair"):
        lib.run_step(run.run_id, 5)
    with pytest.raises(RunbookError, match="cannot succeed itself"):
        lib.run_step(run.run_id, 5, successor="rollout")
    with pytest.raises(RunbookError, match="no skill named 'ghost'"):
        lib.run_step(run.run_id, 5, successor="ghost")
    run = lib.run_step(run.run_id, 5, successor="rollout-v2")
    assert run.successor == "rollout-v2"
    with lib.db.read() as conn:
        edge = conn.execute(
            "SELECT origin FROM relations WHERE type='supersedes' AND target_name='rollout'"
        ).fetchone()
    assert edge[0] == "runbook"

    run = lib.run_step(run.run_id, 6)
    assert sorted(run.steps[5].payload["proposed"]) == ["canary", "deploy"]
    assert status(lib, "deploy") == "proposed"
    assert status(lib, "rollout") == "retired"  # replaced, not repaired: stays quarantined
    assert status(lib, "rollout-v2") == "proposed"

    plan = lib.plan_step(run.run_id)
    assert any(a.startswith("regression case: reproduce: ") for a in plan.actions)
    run = lib.run_step(run.run_id, 7, regression="undo must name the previous revision")
    assert run.status == "done"
    assert run.next_step is None
    [incident] = lib.incidents("rollout")
    assert incident.successor == "rollout-v2"
    assert incident.regression == "undo must name the previous revision"
    assert incident.scope.startswith("2 dependent skills (2 demoted)")
    with lib.db.read() as conn:
        steps = [r[0] for r in conn.execute("SELECT payload FROM events WHERE type='runbook.step'")]
    assert len(steps) == 7
    assert verify(lib).ok


def test_a_repaired_skill_re_enters_as_proposed_and_leaves_the_denylist(
    lib: Library, tmp_path: Path
) -> None:
    run = lib.start_run("rollout", "bad rollback")
    for step in (1, 2, 3, 4):
        run = lib.run_step(run.run_id, step)
    with pytest.raises(RunbookError, match="no new version since v1"):
        lib.run_step(run.run_id, 5, mode="repaired")
    write_skill(
        tmp_path / "skills", "rollout", "Roll out a deployment; roll back to the previous revision."
    )
    lib.scan([tmp_path / "skills"])
    assert status(lib, "rollout") == "retired"  # a new version does not lift the quarantine
    assert lib.plan_step(run.run_id).actions == (
        "take v2 (changed since v1) as the repaired version",
        "no regression cases recorded for rollout yet (step 7 adds one)",
    )
    run = lib.run_step(run.run_id, 5)
    assert run.steps[4].payload["mode"] == "repaired"
    names = [h.name for h in lib.suggest("roll out a kubernetes deployment", limit=10)]
    assert "rollout" not in names
    run = lib.run_step(run.run_id, 6)
    assert status(lib, "rollout") == "proposed"
    names = [h.name for h in lib.suggest("roll out a kubernetes deployment", limit=10)]
    assert "rollout" in names
    with lib.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM denylist").fetchone()[0] == 0
    assert verify(lib).ok


def test_quarantine_holds_in_suggest_mcp_and_the_session_start_hook(lib: Library) -> None:
    tools = Tools(lib)
    for _ in range(3):
        lib.skill_event("rollout", "applied")
    with lib.db.read() as conn:
        before = ss.build_context(conn, PROJECT, ss.Settings()).text
    assert "rollout" in before
    assert "rollout" in [s["name"] for s in tools.suggest_skills("roll out kubernetes")["skills"]]

    run = lib.start_run("rollout", "outage")
    lib.run_step(run.run_id, 1)
    assert "rollout" not in [h.name for h in lib.suggest("roll out a kubernetes deployment")]
    found = tools.suggest_skills("roll out a kubernetes deployment")["skills"]
    assert "rollout" not in [s["name"] for s in found]
    with lib.db.read() as conn:
        after = ss.build_context(conn, PROJECT, ss.Settings()).text
    assert "rollout" not in after.replace("rollout-v2", "")
    with pytest.raises(LibraryError, match="retired"):
        lib.skill_event("rollout", "applied")


def test_runs_are_listed_reopened_and_abandoned(lib: Library, tmp_path: Path) -> None:
    run = lib.start_run("rollout", "bad")
    lib.run_step(run.run_id, 1)
    lib.close()
    reopened = Library(tmp_path / "lib", embedder=lib.embedder)
    try:
        [listed] = reopened.runs()
        assert listed.run_id == run.run_id
        assert listed.step == 1
        assert reopened.open_run("rollout") == listed
        assert reopened.plan_step(run.run_id).step == 2
        with pytest.raises(RunbookError, match="step 4 is not next"):
            reopened.run_step(run.run_id, 4)
        with pytest.raises(RunbookError, match="needs a reason"):
            reopened.abandon_run(run.run_id, " ")
        done = reopened.abandon_run(run.run_id, "handled elsewhere", restore=False)
        assert done.status == "abandoned"
        assert reopened.runs(status="open") == []
        with pytest.raises(RunbookError, match="abandoned"):
            reopened.plan_step(run.run_id)
        again = reopened.start_run("rollout", "second look")  # a new run after an abandoned one
        assert again.run_id != run.run_id
        assert again.next_step == 1
        assert "already retired" in reopened.plan_step(again.run_id).actions[0]
        with pytest.raises(RunbookError, match="no runbook run"):
            reopened.run("run-nope")
        with pytest.raises(RunbookError, match="no skill named"):
            reopened.start_run("ghost", "x")
        assert verify(reopened).ok
    finally:
        reopened.close()


def test_a_run_killed_inside_a_step_resumes_cleanly(lib: Library, tmp_path: Path) -> None:
    """Step 3 is killed (SIGKILL) after its status events, before its commit: nothing of it
    stays, and the step is done again on resume."""
    run = lib.start_run("rollout", "bad")
    lib.run_step(run.run_id, 1)
    lib.run_step(run.run_id, 2)
    lib.close()
    ready = tmp_path / "inside-step"
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from store.library import Library
        from store.lifecycle import runbook
        real = runbook._DOERS["demote"]
        def slow(*args):
            result = real(*args)
            Path({str(ready)!r}).write_text("x")
            time.sleep(60)
            return result
        runbook._DOERS["demote"] = slow
        with Library(Path({str(tmp_path / "lib")!r})) as library:
            library.run_step({run.run_id!r}, 3)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert child.poll() is None, "the child ended before reaching the step"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    resumed = Library(tmp_path / "lib", embedder=lib.embedder)
    try:
        assert resumed.run(run.run_id).step == 2
        assert status(resumed, "deploy") == "stable"  # nothing half-applied
        assert verify(resumed).ok
        after = resumed.run_step(run.run_id, 3)
        assert after.step == 3
        assert status(resumed, "deploy") == "deprecated"
        assert verify(resumed).ok
    finally:
        resumed.close()


def test_status_transitions_are_checked(lib: Library) -> None:
    with pytest.raises(TransitionError, match="already stable"):
        lib.change_status("deploy", "skill.promoted", "again")
    with pytest.raises(LibraryError, match="needs a reason"):
        lib.change_status("deploy", "skill.deprecated", "")
    lib.change_status("deploy", "skill.retired", "harmful")
    with pytest.raises(TransitionError, match="comes back only as proposed"):
        lib.change_status("deploy", "skill.promoted", "fixed")
    with pytest.raises(TransitionError, match="it is retired"):
        lib.change_status("deploy", "skill.deprecated", "x")
    lib.change_status("deploy", "skill.proposed", "repaired")
    lib.change_status("deploy", "skill.promoted", "proven")
    with lib.db.read() as conn:
        rows = conn.execute(
            "SELECT type, actor, json_extract(payload, '$.from'), json_extract(payload,"
            " '$.reason') FROM events WHERE subject='skill:deploy' AND type IN"
            " ('skill.retired', 'skill.proposed', 'skill.promoted') ORDER BY seq"
        ).fetchall()
    assert [(r[0], r[2], r[3]) for r in rows] == [
        ("skill.retired", "stable", "harmful"),
        ("skill.proposed", "retired", "repaired"),
        ("skill.promoted", "proposed", "proven"),
    ]
    assert all(r[1] for r in rows)  # every transition has an actor
    assert verify(lib).ok


def test_a_demoted_dependent_named_successor_is_re_proposed_once(lib: Library) -> None:
    run = lib.start_run("rollout", "bad")
    for step in (1, 2, 3, 4):
        run = lib.run_step(run.run_id, step)
    run = lib.run_step(run.run_id, 5, successor="deploy", note="deploy now rolls out itself")
    assert run.steps[4].summary == "deploy succeeds rollout: deploy now rolls out itself"
    plan = lib.plan_step(run.run_id)
    assert sum("re-propose deploy" in a for a in plan.actions) == 1
    run = lib.run_step(run.run_id, 6)
    assert sorted(run.steps[5].payload["proposed"]) == ["canary", "deploy"]
    assert verify(lib).ok


def events_of(library: Library, name: str) -> list[Event]:
    return list(library.skill_events(name, limit=100)[0])


def denied(library: Library) -> list[str]:
    with library.db.read() as conn:
        return [str(r[0]) for r in conn.execute("SELECT name FROM denylist ORDER BY name")]


def test_abandoning_after_quarantine_restores_the_statuses_the_run_changed(lib: Library) -> None:
    """The regression of issue 14: abandoning left the skill retired and on the denylist."""
    before = {name: status(lib, name) for name in ("rollout", "deploy", "canary")}
    run = lib.start_run("rollout", "outage")
    for step in (1, 2, 3):
        lib.run_step(run.run_id, step)
    assert [status(lib, n) for n in before] == ["retired", "deprecated", "deprecated"]
    found = lib.left_behind(run.run_id)
    assert sorted((c.name, c.before, c.after, c.restorable) for c in found.changes) == [
        ("canary", before["canary"], "deprecated", True),
        ("deploy", before["deploy"], "deprecated", True),
        ("rollout", before["rollout"], "retired", True),
    ]
    assert "the 3 recorded steps stay" in found.other[0]

    done = lib.abandon_run(run.run_id, "false alarm")
    assert done.status == "abandoned"
    assert {name: status(lib, name) for name in before} == before
    assert denied(lib) == []
    assert "rollout" in [h.name for h in lib.suggest("roll out a kubernetes deployment")]
    restored = [e for e in events_of(lib, "rollout") if e.payload.get("restored") is True]
    assert [(e.type, e.payload["from"], e.payload["run_id"]) for e in restored] == [
        (
            f"skill.{'promoted' if before['rollout'] == 'stable' else 'proposed'}",
            "retired",
            run.run_id,
        )
    ]
    [abandoned] = [e for e in events_of(lib, "rollout") if e.type == "runbook.abandoned"]
    assert abandoned.payload["restore"] is True
    assert sorted(abandoned.payload["restored"]) == ["canary", "deploy", "rollout"]
    assert verify(lib).ok


def test_abandoning_can_keep_the_statuses_and_leaves_later_changes_alone(lib: Library) -> None:
    run = lib.start_run("rollout", "outage")
    for step in (1, 2, 3):
        lib.run_step(run.run_id, step)
    lib.change_status("deploy", "skill.promoted", "fixed by hand meanwhile")
    found = lib.left_behind(run.run_id)
    deploy = next(c for c in found.changes if c.name == "deploy")
    assert (deploy.now, deploy.restorable) == ("stable", False)
    assert sorted(c.name for c in found.restorable) == ["canary", "rollout"]

    lib.abandon_run(run.run_id, "keep it out", restore=False)
    assert [status(lib, n) for n in ("rollout", "deploy", "canary")] == [
        "retired",
        "stable",
        "deprecated",
    ]
    assert denied(lib) == ["rollout"]
    [abandoned] = [e for e in events_of(lib, "rollout") if e.type == "runbook.abandoned"]
    assert (abandoned.payload["restore"], abandoned.payload["restored"]) == (False, [])
    assert sorted(abandoned.payload["kept"]) == ["canary", "deploy", "rollout"]
    with pytest.raises(RunbookError, match="abandoned"):
        lib.left_behind(run.run_id)
    assert verify(lib).ok


def test_a_skill_deprecated_before_the_run_goes_back_to_deprecated_off_the_denylist(
    lib: Library,
) -> None:
    lib.change_status("rollout", "skill.deprecated", "drifting")
    run = lib.start_run("rollout", "drifting for weeks")
    lib.run_step(run.run_id, 1)
    assert denied(lib) == ["rollout"]
    lib.abandon_run(run.run_id, "repair it instead")
    assert status(lib, "rollout") == "deprecated"
    assert denied(lib) == []
    assert verify(lib).ok


def test_abandoning_after_naming_a_successor_removes_the_relation_it_added(
    lib: Library,
) -> None:
    run = lib.start_run("rollout", "outage")
    for step in (1, 2, 3, 4):
        lib.run_step(run.run_id, step)
    lib.run_step(run.run_id, 5, successor="rollout-v2")

    def supersedes() -> list[tuple[str, str]]:
        with lib.db.read() as conn:
            return [
                (str(r[0]), str(r[1]))
                for r in conn.execute(
                    "SELECT s.name, r.origin FROM relations r JOIN skills s"
                    " ON s.skill_id = r.source_id WHERE r.type='supersedes'"
                    " AND r.target_name='rollout'"
                )
            ]

    assert supersedes() == [("rollout-v2", "runbook")]
    found = lib.left_behind(run.run_id)
    assert [r[1:] for r in found.relations] == [("rollout-v2", "supersedes", "rollout")]
    lib.abandon_run(run.run_id, "wrong successor")
    assert supersedes() == []
    assert status(lib, "rollout") != "retired"
    assert verify(lib).ok
