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
import json
import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from store import catalog
from store.errors import LibrarianError
from store.ingest.redact import redact
from store.lifecycle.graph import blast_radius
from store.lifecycle.regression_cases import LISTED, append_case, carrier, case_line, skill_cases
from store.lifecycle.status import record
from store.models import RUNBOOK_STEPS, Incident, Run, RunStep, StepPlan
from store.patterns.regressions import REFERENCE
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Dependents and sessions kept in a step's payload (counts stay exact).
KEEP = 200
_TITLES = {number: (name, title) for number, name, title in RUNBOOK_STEPS}
REPAIR_MODES = ("repaired", "successor", "none")


class RunbookError(LibrarianError):
    """A runbook action that cannot be done (unknown run, wrong step, missing input)."""


# -- reading -----------------------------------------------------------------------------------


def runs(library: Kernel, *, status: str | None = None, skill: str | None = None) -> list[Run]:
    """Runs, open ones first, newest first."""
    where, args = [], []
    if status:
        where.append("status=?")
        args.append(status)
    if skill:
        where.append("skill_name=?")
        args.append(skill)
    sql = "SELECT * FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
    sql += " ORDER BY status != 'open', updated_at DESC, run_id"
    with library.db.read() as conn:
        return [_run(conn, row) for row in conn.execute(sql, args).fetchall()]


def get_run(library: Kernel, run_id: str) -> Run:
    with library.db.read() as conn:
        return _get(conn, run_id)


def incidents(library: Kernel, skill: str | None = None) -> list[Incident]:
    sql = "SELECT * FROM incidents"
    args: tuple[str, ...] = ()
    if skill:
        sql += " WHERE skill_name=?"
        args = (skill,)
    with library.db.read() as conn:
        rows = conn.execute(sql + " ORDER BY recorded_at DESC, incident_id", args).fetchall()
    return [_incident(row) for row in rows]


def _get(conn: sqlite3.Connection, run_id: str) -> Run:
    row = conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
    if row is None:
        raise RunbookError(f"no runbook run {run_id!r} (list them with `librarian runs`)")
    return _run(conn, row)


def _run(conn: sqlite3.Connection, row: sqlite3.Row) -> Run:
    done = {
        int(r["step"]): r
        for r in conn.execute("SELECT * FROM run_steps WHERE run_id=?", (row["run_id"],))
    }
    steps = []
    for number, name, title in RUNBOOK_STEPS:
        r = done.get(number)
        if r is None:
            steps.append(RunStep(number, name, title, False))
        else:
            steps.append(
                RunStep(
                    number,
                    name,
                    title,
                    True,
                    str(r["summary"]),
                    json.loads(r["payload"]),
                    str(r["actor"]),
                    str(r["ts"]),
                )
            )
    return Run(
        run_id=str(row["run_id"]),
        skill_id=int(row["skill_id"]),
        skill_name=str(row["skill_name"]),
        status=str(row["status"]),
        step=int(row["step"]),
        reason=str(row["reason"]),
        actor=str(row["actor"]),
        version_no=int(row["version_no"]),
        successor=str(row["successor"]),
        started_at=str(row["started_at"]),
        updated_at=str(row["updated_at"]),
        steps=tuple(steps),
    )


def _incident(row: sqlite3.Row) -> Incident:
    return Incident(
        incident_id=str(row["incident_id"]),
        run_id=str(row["run_id"]),
        skill_id=int(row["skill_id"]),
        skill_name=str(row["skill_name"]),
        version_no=int(row["version_no"]),
        cause=str(row["cause"]),
        scope=str(row["scope"]),
        regression=str(row["regression"]),
        successor=str(row["successor"]),
        actor=str(row["actor"]),
        recorded_at=str(row["recorded_at"]),
    )


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
            return _get(conn, str(open_run[0]))
        if status == "uninstalled":
            raise RunbookError(f"{name!r} is uninstalled: there is nothing to retire")
        if not reason.strip():
            raise RunbookError("a runbook run needs a reason (why is the skill being retired?)")
        seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0]) + 1
        digest = hashlib.sha256(f"{name}\0{seq}".encode()).hexdigest()[:8]
        run_id = f"run-{digest}"
        library.append_event(
            conn,
            "runbook.started",
            f"skill:{name}",
            {
                "run_id": run_id,
                "skill_id": sid,
                "skill_name": name,
                "reason": one_line(redact(reason), 500),
                "version_no": int(version),
            },
        )
        return _get(conn, run_id)


def open_run_for(library: Kernel, key: str | int) -> Run | None:
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RunbookError(f"no skill named {key!r}")
        row = conn.execute(
            "SELECT run_id FROM runs WHERE skill_id=? AND status='open'", (sid,)
        ).fetchone()
        return None if row is None else _get(conn, str(row[0]))


def abandon(library: Kernel, run_id: str, reason: str) -> Run:
    """Close an open run without finishing it (what was done stays done and recorded)."""
    if not reason.strip():
        raise RunbookError("abandoning a run needs a reason")
    with library.db.write() as conn:
        run = _get(conn, run_id)
        if run.status != "open":
            raise RunbookError(f"run {run_id} is {run.status}")
        library.append_event(
            conn,
            "runbook.abandoned",
            f"skill:{run.skill_name}",
            {"run_id": run_id, "reason": one_line(redact(reason), 500), "step": run.step},
        )
        return _get(conn, run_id)


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
    prepared = _PREPARE.get(name, _nothing)(library, run, inputs)
    with library.db.write() as conn:
        current = _get(conn, run_id)
        if current.next_step != step:  # another process did it meanwhile
            raise RunbookError(f"run {run_id}: step {step} was done meanwhile")
        summary, payload = _DOERS[name](library, conn, current, inputs, prepared)
        library.append_event(
            conn,
            "runbook.step",
            f"skill:{run.skill_name}",
            {"run_id": run_id, "step": step, "name": name, "summary": summary, **payload},
        )
        return _get(conn, run_id)


# -- the steps ---------------------------------------------------------------------------------

Inputs = dict[str, str]


def _nothing(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return None


def _skill_row(conn: sqlite3.Connection, run: Run) -> sqlite3.Row:
    row = conn.execute(
        "SELECT name, status, current_version FROM skills WHERE skill_id=?", (run.skill_id,)
    ).fetchone()
    if row is None:
        raise RunbookError(f"skill {run.skill_name!r} is no longer in the catalog")
    return row  # type: ignore[no-any-return]


# 1 quarantine


def _plan_quarantine(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    with library.db.read() as conn:
        row = _skill_row(conn, run)
    if row["status"] == "retired":
        return [f"{run.skill_name} is already retired and on the denylist: nothing to change"], ""
    return [
        f"mark {run.skill_name} retired (it is {row['status']})",
        "put it on the denylist: suggest, the MCP server and the SessionStart hook stop"
        " returning it",
    ], ""


def _do_quarantine(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, _: Any
) -> tuple[str, dict[str, Any]]:
    row = _skill_row(conn, run)
    if row["status"] == "retired":
        return "already retired and on the denylist", {"retired": False}
    record(
        library,
        conn,
        (run.skill_id, run.skill_name, str(row["status"])),
        "skill.retired",
        f"runbook {run.run_id}: {run.reason}",
        run_id=run.run_id,
    )
    return f"retired (was {row['status']}) and put on the denylist", {
        "retired": True,
        "was": str(row["status"]),
    }


# 2 blast radius


def _plan_blast(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    radius = blast_radius(library, run.skill_id, run.version_no)
    return [
        f"record the blast radius of v{run.version_no}: {len(radius.dependents)} dependent"
        f" skills, {len(radius.sessions)} sessions, {len(radius.patterns)} patterns,"
        f" {len(radius.drafts)} drafts",
        *_pin_lines(radius, run),
    ], ""


def _pin_lines(radius: Any, run: Run) -> list[str]:
    """Who is pinned to which version of the skill (pinned elsewhere: not hit)."""
    lines = []
    for pin in radius.pins[:20]:
        hit = "hit" if pin.version_no == run.version_no else "not hit, left as it is"
        lines.append(
            f"pinned: {pin.dependent} {pin.relation} {run.skill_name}@{pin.version_no} ({hit})"
        )
    if len(radius.pins) > 20:
        lines.append(f"… and {len(radius.pins) - 20} more pins")
    return lines


def _prepare_blast(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return blast_radius(library, run.skill_id, run.version_no)


def _do_blast(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, radius: Any
) -> tuple[str, dict[str, Any]]:
    dependents = [
        {"name": d.name, "status": d.status, "relation": d.relation, "depth": d.depth}
        for d in radius.dependents
    ]
    direct = sum(1 for d in radius.dependents if d.depth == 1)
    summary = (
        f"{len(dependents)} dependent skills ({direct} direct), {len(radius.sessions)} sessions,"
        f" {len(radius.patterns)} patterns, {len(radius.drafts)} drafts"
    )
    if radius.pinned:
        summary += f"; {len(radius.pinned)} pinned to another version, not hit"
    return summary, {
        "version_no": radius.version_no,
        "pins": [
            {"dependent": p.dependent, "relation": p.relation, "version_no": p.version_no}
            for p in radius.pins[:KEEP]
        ],
        "pinned_elsewhere": [{"name": d.name, "pin": d.pin} for d in radius.pinned[:KEEP]],
        "dependent_count": len(dependents),
        "dependents": dependents[:KEEP],
        "related": [r.name for r in radius.related][:KEEP],
        "session_count": len(radius.sessions),
        "sessions": list(radius.sessions[:KEEP]),
        "patterns": list(radius.patterns[:KEEP]),
        "drafts": list(radius.drafts[:KEEP]),
    }


# 3 demote dependents


def _recorded(run: Run, step: int) -> dict[str, Any]:
    return run.steps[step - 1].payload


def _active(conn: sqlite3.Connection, names: list[str]) -> list[tuple[int, str, str]]:
    found = []
    for name in names:
        sid = catalog.resolve(conn, name)
        if sid is None:
            continue
        status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()[0]
        if status in ("stable", "proposed"):
            found.append((sid, name, str(status)))
    return found


def _dependents_now(library: Kernel, run: Run) -> list[str]:
    payload = _recorded(run, 2)
    names = [d["name"] for d in payload.get("dependents", [])]
    if payload.get("dependent_count", 0) > len(names):
        version = int(payload.get("version_no", 0) or 0)
        names = [d.name for d in blast_radius(library, run.skill_id, version).dependents]
    return names


def _plan_demote(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    with library.db.read() as conn:
        active = _active(conn, _dependents_now(library, run))
    if not active:
        return ["no stable or proposed dependent to demote"], ""
    shown = [f"deprecate {name} (now {status})" for _sid, name, status in active[:20]]
    if len(active) > 20:
        shown.append(f"… and {len(active) - 20} more")
    return shown, ""


def _prepare_demote(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return _dependents_now(library, run)


def _do_demote(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, names: Any
) -> tuple[str, dict[str, Any]]:
    demoted = []
    for sid, name, status in _active(conn, list(names)):
        record(
            library,
            conn,
            (sid, name, status),
            "skill.deprecated",
            f"depends on {run.skill_name}, retired by runbook {run.run_id}",
            run_id=run.run_id,
        )
        demoted.append({"name": name, "was": status})
    summary = f"deprecated {len(demoted)} dependents" if demoted else "no dependent needed demoting"
    return summary, {"demoted": demoted}


# 4 audit


def _audit(library: Kernel, run: Run) -> dict[str, Any]:
    days = int(library.config.get("runbook.audit_days", 30))
    now = datetime.fromisoformat(library.clock())
    since = (now - timedelta(days=days)).isoformat()
    with library.db.read() as conn:
        sessions = conn.execute(
            "SELECT s.session_id, s.project, s.started_at, s.errors FROM skill_uses u"
            " JOIN sessions s USING(session_id) WHERE u.skill_name=? AND s.started_at >= ?"
            " ORDER BY s.started_at DESC, s.session_id",
            (run.skill_name, since),
        ).fetchall()
        outcomes = conn.execute(
            "SELECT ts, version_no, success, session_id, detail, inferred FROM outcomes"
            " WHERE skill_id=? AND ts >= ? ORDER BY ts DESC, seq DESC",
            (run.skill_id, since),
        ).fetchall()
        did = [
            {
                "session_id": str(s["session_id"]),
                "project": str(s["project"]),
                "started_at": str(s["started_at"]),
                "errors": int(s["errors"]),
                "actions": _what_it_did(conn, str(s["session_id"]), run.skill_name),
            }
            for s in sessions[:20]
        ]
    failures = [o for o in outcomes if not o["success"]]
    return {
        "days": days,
        "since": since,
        "session_count": len(sessions),
        "sessions": did,
        "runs": len(outcomes),
        "failures": len(failures),
        "inferred": sum(1 for o in outcomes if o["inferred"]),
        "versions": sorted({int(o["version_no"]) for o in outcomes}),
        "failed": [
            {
                "ts": str(o["ts"]),
                "version_no": int(o["version_no"]),
                "session_id": str(o["session_id"]),
                "detail": one_line(str(o["detail"]), 300),
                "inferred": bool(o["inferred"]),
            }
            for o in failures[:20]
        ],
    }


def _what_it_did(conn: sqlite3.Connection, session_id: str, name: str) -> list[str]:
    """The assistant's next few moves after the skill was launched in a session."""
    start = conn.execute(
        "SELECT idx FROM session_messages WHERE session_id=? AND text LIKE ? ORDER BY idx LIMIT 1",
        (session_id, f"%Launching skill: {name}%"),
    ).fetchone()
    if start is None:
        return []
    rows = conn.execute(
        "SELECT role, kind, text, is_error FROM session_messages WHERE session_id=? AND idx > ?"
        " AND kind IN ('tool_use', 'text', 'tool_result') ORDER BY idx LIMIT 8",
        (session_id, int(start[0])),
    ).fetchall()
    moves = []
    for role, kind, text, is_error in rows:
        if kind == "tool_result" and not is_error:
            continue
        mark = "error: " if is_error else ("" if role == "assistant" else f"{role}: ")
        moves.append(one_line(f"{mark}{text}", 140))
    return moves[:6]


def _plan_audit(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    days = int(library.config.get("runbook.audit_days", 30))
    return [
        f"record the sessions that used {run.skill_name} in the last {days} days, what it did"
        " there, and its outcomes (runs, failures, their details)"
    ], ""


def _prepare_audit(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return _audit(library, run)


def _do_audit(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, audit: Any
) -> tuple[str, dict[str, Any]]:
    summary = (
        f"{audit['session_count']} sessions and {audit['runs']} runs in {audit['days']} days,"
        f" {audit['failures']} failed"
    )
    if audit["inferred"]:
        summary += f" ({audit['inferred']} runs inferred from transcripts)"
    return summary, audit


# 5 repair or replace


def _repair_choice(library: Kernel, run: Run, inputs: Inputs) -> tuple[str, str, int, str]:
    """(mode, successor, new version, why it waits) from the inputs and the catalog."""
    successor = inputs.get("successor", "").strip()
    mode = inputs.get("mode", "").strip()
    with library.db.read() as conn:
        row = _skill_row(conn, run)
        current = int(row["current_version"])
        if successor:
            sid = catalog.resolve(conn, successor)
            if sid is None:
                raise RunbookError(f"no skill named {successor!r} to succeed {run.skill_name}")
            name, status = conn.execute(
                "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
            ).fetchone()
            if sid == run.skill_id:
                raise RunbookError("a skill cannot succeed itself (repair it as a new version)")
            if status in ("retired", "uninstalled"):
                raise RunbookError(f"successor {name!r} is {status}")
            return "successor", str(name), current, ""
    if mode == "none":
        return "none", "", current, ""
    if current > run.version_no:
        return "repaired", "", current, ""
    if mode == "repaired":
        raise RunbookError(
            f"{run.skill_name} has no new version since v{run.version_no}: edit its SKILL.md"
            " and run `librarian scan` first"
        )
    return (
        "",
        "",
        current,
        f"waiting for a repair: edit {run.skill_name}'s SKILL.md (a new version) and rescan,"
        " name a successor skill, or retire it without replacement",
    )


def _plan_repair(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    mode, successor, version, waiting = _repair_choice(library, run, inputs)
    cases = _case_lines(library, run)
    if mode == "successor":
        return [
            f"name {successor} the successor of {run.skill_name}"
            f" (relation: {successor} supersedes {run.skill_name})",
            *cases,
        ], ""
    if mode == "repaired":
        return [
            f"take v{version} (changed since v{run.version_no}) as the repaired version",
            *cases,
        ], ""
    if mode == "none":
        return [f"retire {run.skill_name} without repair or successor"], ""
    return cases, waiting


def _case_lines(library: Kernel, run: Run) -> list[str]:
    """The regression cases a repair (or a successor) must keep passing."""
    with library.db.read() as conn:
        row = conn.execute("SELECT dir FROM skills WHERE skill_id=?", (run.skill_id,)).fetchone()
        found = skill_cases(conn, run.skill_id, run.skill_name, str(row[0]) if row else "")
    if not found:
        return [f"no regression cases recorded for {run.skill_name} yet (step 7 adds one)"]
    lines = [f"regression cases the repair must keep passing ({len(found)}):"]
    lines += [f"  - {one_line(case, 300)}" for case in found[:LISTED]]
    if len(found) > LISTED:
        lines.append(f"  … and {len(found) - LISTED} more")
    return lines


def _prepare_repair(library: Kernel, run: Run, inputs: Inputs) -> Any:
    mode, successor, version, waiting = _repair_choice(library, run, inputs)
    if waiting:
        raise RunbookError(waiting)
    return mode, successor, version


def _do_repair(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, choice: Any
) -> tuple[str, dict[str, Any]]:
    mode, successor, version = choice
    note = one_line(inputs.get("note", ""), 500)
    row = conn.execute("SELECT dir FROM skills WHERE skill_id=?", (run.skill_id,)).fetchone()
    cases = skill_cases(conn, run.skill_id, run.skill_name, str(row[0]) if row else "")
    if mode == "successor":
        exists = conn.execute(
            "SELECT 1 FROM relations r JOIN skills s ON s.skill_id = r.source_id"
            " WHERE s.name=? AND r.type='supersedes' AND r.target_name=?",
            (successor, run.skill_name),
        ).fetchone()
        if exists is None:
            sid = catalog.resolve(conn, successor)
            library.append_event(
                conn,
                "relation.added",
                f"skill:{successor}",
                {
                    "source_id": sid,
                    "type": "supersedes",
                    "target_name": run.skill_name,
                    "origin": "runbook",
                    "run_id": run.run_id,
                },
            )
        summary = f"{successor} succeeds {run.skill_name}"
    elif mode == "repaired":
        summary = f"repaired as v{version} (was v{run.version_no})"
    else:
        summary = "retired without repair or successor"
    if note:
        summary += f": {note}"
    if cases and mode != "none":
        summary += f" ({len(cases)} regression cases to keep passing)"
    return summary, {
        "mode": mode,
        "successor": successor,
        "version_no": version,
        "note": note,
        "regression_cases": cases[:KEEP],
    }


# 6 re-promote cautiously


def _repromote_targets(
    conn: sqlite3.Connection, run: Run
) -> tuple[list[tuple[int, str, str]], str]:
    """Skills to put back as proposed, and a note when there are none."""
    repair = _recorded(run, 5)
    mode = repair.get("mode", "none")
    if mode == "none":
        return [], (
            "nothing to re-promote: no repair or successor; the demoted dependents stay"
            " deprecated until they are relinked"
        )
    targets: list[tuple[int, str, str]] = []
    if mode == "repaired":
        row = _skill_row(conn, run)
        if row["status"] == "retired":
            targets.append((run.skill_id, run.skill_name, "retired"))
    else:
        sid = catalog.resolve(conn, repair.get("successor", ""))
        if sid is not None:
            name, status = conn.execute(
                "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
            ).fetchone()
            if status == "deprecated":
                targets.append((sid, str(name), "deprecated"))
    for demoted in _recorded(run, 3).get("demoted", []):
        sid = catalog.resolve(conn, demoted["name"])
        if sid is None:
            continue
        status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()[0]
        if status == "deprecated" and all(t[0] != sid for t in targets):
            targets.append((sid, str(demoted["name"]), "deprecated"))
    return targets, "" if targets else "nothing to re-promote: all already in circulation"


def _plan_repromote(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    with library.db.read() as conn:
        targets, note = _repromote_targets(conn, run)
    if not targets:
        return [note], ""
    shown = [
        f"re-propose {name} (now {status}): it must earn stable again through clean runs"
        for _sid, name, status in targets[:20]
    ]
    if len(targets) > 20:
        shown.append(f"… and {len(targets) - 20} more")
    if _recorded(run, 5).get("mode") == "repaired":
        shown.append(f"{run.skill_name} leaves the denylist as proposed")
    return shown, ""


def _do_repromote(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, _: Any
) -> tuple[str, dict[str, Any]]:
    targets, note = _repromote_targets(conn, run)
    repair = _recorded(run, 5)
    done = []
    for sid, name, status in targets:
        if sid == run.skill_id:
            reason = f"repaired as v{repair.get('version_no')}: re-enters as proposed"
        elif name == repair.get("successor"):
            reason = f"successor of {run.skill_name}: re-enters as proposed"
        else:
            reason = f"{run.skill_name} was replaced: re-enters as proposed"
        record(library, conn, (sid, name, status), "skill.proposed", reason, run_id=run.run_id)
        done.append(name)
    summary = f"re-proposed {len(done)}: {', '.join(done[:10])}" if done else note
    return one_line(summary, 400), {"proposed": done}


# 7 record the incident


def _incident_fields(library: Kernel, run: Run, inputs: Inputs) -> tuple[str, str, str, str]:
    cause = one_line(inputs.get("cause", "") or run.reason, 1000)
    blast, audit, demote = _recorded(run, 2), _recorded(run, 4), _recorded(run, 3)
    scope = one_line(inputs.get("scope", ""), 1000) or (
        f"{blast.get('dependent_count', 0)} dependent skills"
        f" ({len(demote.get('demoted', []))} demoted),"
        f" {audit.get('session_count', 0)} sessions in {audit.get('days', 30)} days,"
        f" {audit.get('failures', 0)} of {audit.get('runs', 0)} runs failed"
    )
    regression = one_line(inputs.get("regression", ""), 2000)
    if not regression and audit.get("failed"):
        regression = f"reproduce: {audit['failed'][0]['detail']}"
    waiting = "" if regression else "needs the regression case to test for"
    return cause, scope, regression, waiting


def _plan_incident(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    cause, scope, regression, waiting = _incident_fields(library, run, inputs)
    actions = [f"cause: {cause}", f"scope: {scope}"]
    if regression:
        actions.append(f"regression case: {regression}")
        repair = _recorded(run, 5)
        with library.db.read() as conn:
            skill = carrier(conn, run.skill_id, repair.get("mode", ""), repair.get("successor", ""))
        if skill is not None:
            actions.append(
                f"add it to {skill['name']}'s {REFERENCE} for good (the checklist its repairs"
                " must keep passing)"
            )
    actions.append("close the run")
    return actions, waiting


def _prepare_incident(library: Kernel, run: Run, inputs: Inputs) -> Any:
    cause, scope, regression, waiting = _incident_fields(library, run, inputs)
    if waiting:
        raise RunbookError(f"step 7 {waiting} (what would catch this next time?)")
    return cause, scope, regression


def _do_incident(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, fields: Any
) -> tuple[str, dict[str, Any]]:
    cause, scope, regression = fields
    successor = str(_recorded(run, 5).get("successor", ""))
    incident_id = f"inc-{run.run_id.removeprefix('run-')}"
    library.append_event(
        conn,
        "incident.recorded",
        f"skill:{run.skill_name}",
        {
            "incident_id": incident_id,
            "run_id": run.run_id,
            "skill_id": run.skill_id,
            "skill_name": run.skill_name,
            "version_no": run.version_no,
            "cause": cause,
            "scope": scope,
            "regression": regression,
            "successor": successor,
        },
    )
    repair = _recorded(run, 5)
    skill = carrier(conn, run.skill_id, repair.get("mode", ""), repair.get("successor", ""))
    written: dict[str, Any] = {}
    if skill is not None and regression:
        try:
            written = append_case(conn, skill, case_line(incident_id, cause, regression))
        except OSError as exc:
            written = {"regression_file": "", "regression_error": one_line(str(exc), 300)}
    summary = f"incident {incident_id} recorded"
    if written.get("regression_added"):
        summary += f"; its regression case added to {written['regression_skill']}"
    return summary, {"incident_id": incident_id, **written}


_PLANNERS = {
    "quarantine": _plan_quarantine,
    "blast": _plan_blast,
    "demote": _plan_demote,
    "audit": _plan_audit,
    "repair": _plan_repair,
    "repromote": _plan_repromote,
    "incident": _plan_incident,
}
_PREPARE = {
    "blast": _prepare_blast,
    "demote": _prepare_demote,
    "audit": _prepare_audit,
    "repair": _prepare_repair,
    "incident": _prepare_incident,
}
_DOERS = {
    "quarantine": _do_quarantine,
    "blast": _do_blast,
    "demote": _do_demote,
    "audit": _do_audit,
    "repair": _do_repair,
    "repromote": _do_repromote,
    "incident": _do_incident,
}
