"""Runbook steps 5 to 7: repair or replace, re-promote cautiously, record the incident."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from store import catalog
from store.lifecycle.regression_cases import LISTED, append_case, carrier, case_line, skill_cases
from store.lifecycle.runbook_read import RunbookError
from store.lifecycle.runbook_steps import KEEP, Inputs, recorded, skill_row
from store.lifecycle.status import record
from store.models import Run
from store.models.events import EventType
from store.patterns.regressions import REFERENCE
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

REPAIR_MODES = ("repaired", "successor", "none")


# 5 repair or replace


def _repair_choice(library: Kernel, run: Run, inputs: Inputs) -> tuple[str, str, int, str]:
    """(mode, successor, new version, why it waits) from the inputs and the catalog."""
    successor = inputs.get("successor", "").strip()
    mode = inputs.get("mode", "").strip()
    with library.db.read() as conn:
        row = skill_row(conn, run)
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


def plan_repair(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
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


def prepare_repair(library: Kernel, run: Run, inputs: Inputs) -> Any:
    mode, successor, version, waiting = _repair_choice(library, run, inputs)
    if waiting:
        raise RunbookError(waiting)
    return mode, successor, version


def do_repair(
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
                EventType.RELATION_ADDED,
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
    repair = recorded(run, 5)
    mode = repair.get("mode", "none")
    if mode == "none":
        return [], (
            "nothing to re-promote: no repair or successor; the demoted dependents stay"
            " deprecated until they are relinked"
        )
    targets: list[tuple[int, str, str]] = []
    if mode == "repaired":
        row = skill_row(conn, run)
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
    for demoted in recorded(run, 3).get("demoted", []):
        sid = catalog.resolve(conn, demoted["name"])
        if sid is None:
            continue
        status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()[0]
        if status == "deprecated" and all(t[0] != sid for t in targets):
            targets.append((sid, str(demoted["name"]), "deprecated"))
    return targets, "" if targets else "nothing to re-promote: all already in circulation"


def plan_repromote(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
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
    if recorded(run, 5).get("mode") == "repaired":
        shown.append(f"{run.skill_name} leaves the denylist as proposed")
    return shown, ""


def do_repromote(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, _: Any
) -> tuple[str, dict[str, Any]]:
    targets, note = _repromote_targets(conn, run)
    repair = recorded(run, 5)
    done = []
    for sid, name, status in targets:
        if sid == run.skill_id:
            reason = f"repaired as v{repair.get('version_no')}: re-enters as proposed"
        elif name == repair.get("successor"):
            reason = f"successor of {run.skill_name}: re-enters as proposed"
        else:
            reason = f"{run.skill_name} was replaced: re-enters as proposed"
        proposed = EventType.SKILL_PROPOSED
        record(library, conn, (sid, name, status), proposed, reason, run_id=run.run_id)
        done.append(name)
    summary = f"re-proposed {len(done)}: {', '.join(done[:10])}" if done else note
    return one_line(summary, 400), {"proposed": done}


# 7 record the incident


def _incident_fields(library: Kernel, run: Run, inputs: Inputs) -> tuple[str, str, str, str]:
    cause = one_line(inputs.get("cause", "") or run.reason, 1000)
    blast, audit, demote = recorded(run, 2), recorded(run, 4), recorded(run, 3)
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


def plan_incident(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    cause, scope, regression, waiting = _incident_fields(library, run, inputs)
    actions = [f"cause: {cause}", f"scope: {scope}"]
    if regression:
        actions.append(f"regression case: {regression}")
        repair = recorded(run, 5)
        with library.db.read() as conn:
            skill = carrier(conn, run.skill_id, repair.get("mode", ""), repair.get("successor", ""))
        if skill is not None:
            actions.append(
                f"add it to {skill['name']}'s {REFERENCE} for good (the checklist its repairs"
                " must keep passing)"
            )
    actions.append("close the run")
    return actions, waiting


def prepare_incident(library: Kernel, run: Run, inputs: Inputs) -> Any:
    cause, scope, regression, waiting = _incident_fields(library, run, inputs)
    if waiting:
        raise RunbookError(f"step 7 {waiting} (what would catch this next time?)")
    return cause, scope, regression


def do_incident(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, fields: Any
) -> tuple[str, dict[str, Any]]:
    cause, scope, regression = fields
    successor = str(recorded(run, 5).get("successor", ""))
    incident_id = f"inc-{run.run_id.removeprefix('run-')}"
    library.append_event(
        conn,
        EventType.INCIDENT_RECORDED,
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
    repair = recorded(run, 5)
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
