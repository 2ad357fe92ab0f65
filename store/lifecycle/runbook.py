"""The retirement runbook (DESIGN §8): seven steps, each one event, resumable.

1 quarantine (retired + denylist), 2 blast radius, 3 demote dependents to deprecated,
4 audit recent invocations, 5 repair or replace (a new version, or a named successor),
6 re-promote cautiously (as proposed), 7 record the incident and its regression case.

Every step is planned first (`plan`: what it will do, from the library as it is now) and then
done in ONE write transaction together with its `runbook.step` event, so a process killed at
any moment leaves a run either before or after a step, never inside one; `execute` re-checks
that the step is the run's next one inside that transaction, so two processes cannot do a step
twice. A run stays open until step 7; it can be reopened (resumed) from the CLI or the app.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from store import catalog
from store.ingest.redact import redact
from store.lifecycle import runbook_abandon
from store.lifecycle import runbook_repair as repair
from store.lifecycle import runbook_steps as steps
from store.lifecycle.runbook_read import RunbookError, get_locked, get_run, incidents, runs
from store.models import RUNBOOK_STEPS, LeftBehind, Run, StepPlan
from store.models.events import EventType
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

__all__ = [
    "RunbookError",
    "abandon",
    "execute",
    "get_run",
    "incidents",
    "left_behind",
    "open_run_for",
    "plan",
    "runs",
    "start",
]

_TITLES = {number: (name, title) for number, name, title in RUNBOOK_STEPS}


# -- starting, planning, doing -----------------------------------------------------------------


def start(library: Kernel, key: str | int, reason: str) -> Run:
    """Open a run for a skill, or return its open run (a run is resumed, never duplicated)."""
    with library.db.write() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RunbookError(f"no skill named {key!r}")
        name, status, version = conn.execute(
            "SELECT name, status, current_version FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        open_run = conn.execute(
            "SELECT run_id FROM runs WHERE skill_id=? AND status='open'", (sid,)
        ).fetchone()
        if open_run is not None:
            return get_locked(conn, str(open_run[0]))
        if status == "uninstalled":
            raise RunbookError(f"{name!r} is uninstalled: there is nothing to retire")
        if not reason.strip():
            raise RunbookError("a runbook run needs a reason (why is the skill being retired?)")
        seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]) + 1
        digest = hashlib.sha256(f"{name}\0{seq}".encode()).hexdigest()[:8]
        run_id = f"run-{digest}"
        library.append_event(
            conn,
            EventType.RUNBOOK_STARTED,
            f"skill:{name}",
            {
                "run_id": run_id,
                "skill_id": sid,
                "skill_name": name,
                "reason": one_line(redact(reason), 500),
                "version_no": int(version),
            },
        )
        return get_locked(conn, run_id)


def open_run_for(library: Kernel, key: str | int) -> Run | None:
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RunbookError(f"no skill named {key!r}")
        row = conn.execute(
            "SELECT run_id FROM runs WHERE skill_id=? AND status='open'", (sid,)
        ).fetchone()
        return None if row is None else get_locked(conn, str(row[0]))


def abandon(library: Kernel, run_id: str, reason: str, *, restore: bool = True) -> Run:
    """Close an open run without finishing it. With `restore` (the default) every skill
    still in the status the run left it in goes back to its status before the run (one
    status event each); without, the statuses stay. The steps done stay recorded."""
    if not reason.strip():
        raise RunbookError("abandoning a run needs a reason")
    why = one_line(redact(reason), 500)
    with library.db.write() as conn:
        run = get_locked(conn, run_id)
        if run.status != "open":
            raise RunbookError(f"run {run_id} is {run.status}")
        if restore:
            found = runbook_abandon.restore(library, conn, run, why)
        else:
            found = runbook_abandon.left_behind_locked(conn, run)
        back = [c.name for c in found.restorable] if restore else []
        kept = [c.name for c in found.changes if c.name not in back]
        library.append_event(
            conn,
            EventType.RUNBOOK_ABANDONED,
            f"skill:{run.skill_name}",
            {
                "run_id": run_id,
                "reason": why,
                "step": run.step,
                "restore": restore,
                "restored": back,
                "kept": kept,
            },
        )
        return get_locked(conn, run_id)


def left_behind(library: Kernel, run_id: str) -> LeftBehind:
    """What abandoning the open run would leave behind (nothing is changed)."""
    return runbook_abandon.left_behind(library, run_id)


def plan(library: Kernel, run_id: str, **inputs: str) -> StepPlan:
    """What the run's next step will do, computed from the library as it is now."""
    run = get_run(library, run_id)
    step = run.next_step
    if step is None:
        raise RunbookError(f"run {run_id} is {run.status}: no step left to do")
    name, title = _TITLES[step]
    actions, waiting = _PLANNERS[name](library, run, inputs)
    return StepPlan(run_id, step, name, title, tuple(actions), waiting)


def execute(library: Kernel, run_id: str, step: int, **inputs: str) -> Run:
    """Do one step (it must be the run's next step) and record it; returns the run."""
    run = get_run(library, run_id)
    if run.next_step != step:
        expected = "none" if run.next_step is None else str(run.next_step)
        raise RunbookError(f"run {run_id}: step {step} is not next (next: {expected})")
    name, _title = _TITLES[step]
    prepared = _PREPARE.get(name, steps.nothing)(library, run, inputs)
    with library.db.write() as conn:
        current = get_locked(conn, run_id)
        if current.next_step != step:  # another process did it meanwhile
            raise RunbookError(f"run {run_id}: step {step} was done meanwhile")
        summary, payload = _DOERS[name](library, conn, current, inputs, prepared)
        library.append_event(
            conn,
            EventType.RUNBOOK_STEP,
            f"skill:{run.skill_name}",
            {"run_id": run_id, "step": step, "name": name, "summary": summary, **payload},
        )
        return get_locked(conn, run_id)


_PLANNERS = {
    "quarantine": steps.plan_quarantine,
    "blast": steps.plan_blast,
    "demote": steps.plan_demote,
    "audit": steps.plan_audit,
    "repair": repair.plan_repair,
    "repromote": repair.plan_repromote,
    "incident": repair.plan_incident,
}
_PREPARE = {
    "blast": steps.prepare_blast,
    "demote": steps.prepare_demote,
    "audit": steps.prepare_audit,
    "repair": repair.prepare_repair,
    "incident": repair.prepare_incident,
}
_DOERS = {
    "quarantine": steps.do_quarantine,
    "blast": steps.do_blast,
    "demote": steps.do_demote,
    "audit": steps.do_audit,
    "repair": repair.do_repair,
    "repromote": repair.do_repromote,
    "incident": repair.do_incident,
}
