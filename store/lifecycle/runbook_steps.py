"""Runbook steps 1 to 4: quarantine, blast radius, demote dependents, audit.

Each step has a planner (what it will do, from the library as it is now: lines and why it
waits), an optional preparer (slow reads done before the write transaction) and a doer
(the change, inside the step's write transaction; returns the summary and the payload
recorded in its `runbook.step` event).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from store import catalog
from store.lifecycle.graph import blast_radius
from store.lifecycle.runbook_read import RunbookError
from store.lifecycle.status import record
from store.models import Run
from store.models.events import EventType
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Dependents and sessions kept in a step's payload (counts stay exact).
KEEP = 200

Inputs = dict[str, str]


def nothing(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return None


def skill_row(conn: sqlite3.Connection, run: Run) -> sqlite3.Row:
    row = conn.execute(
        "SELECT name, status, current_version FROM skills WHERE skill_id=?", (run.skill_id,)
    ).fetchone()
    if row is None:
        raise RunbookError(f"skill {run.skill_name!r} is no longer in the catalog")
    return row  # type: ignore[no-any-return]


def recorded(run: Run, step: int) -> dict[str, Any]:
    """What a done step recorded (its event payload)."""
    return run.steps[step - 1].payload


# 1 quarantine


def plan_quarantine(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    with library.db.read() as conn:
        row = skill_row(conn, run)
    if row["status"] == "retired":
        return [f"{run.skill_name} is already retired and on the denylist: nothing to change"], ""
    return [
        f"mark {run.skill_name} retired (it is {row['status']})",
        "put it on the denylist: suggest, the MCP server and the SessionStart hook stop"
        " returning it",
    ], ""


def do_quarantine(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, _: Any
) -> tuple[str, dict[str, Any]]:
    row = skill_row(conn, run)
    if row["status"] == "retired":
        return "already retired and on the denylist", {"retired": False}
    record(
        library,
        conn,
        (run.skill_id, run.skill_name, str(row["status"])),
        EventType.SKILL_RETIRED,
        f"runbook {run.run_id}: {run.reason}",
        run_id=run.run_id,
    )
    return f"retired (was {row['status']}) and put on the denylist", {
        "retired": True,
        "was": str(row["status"]),
    }


# 2 blast radius


def plan_blast(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
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


def prepare_blast(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return blast_radius(library, run.skill_id, run.version_no)


def do_blast(
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
    payload = recorded(run, 2)
    names = [d["name"] for d in payload.get("dependents", [])]
    if payload.get("dependent_count", 0) > len(names):
        version = int(payload.get("version_no", 0) or 0)
        names = [d.name for d in blast_radius(library, run.skill_id, version).dependents]
    return names


def plan_demote(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    with library.db.read() as conn:
        active = _active(conn, _dependents_now(library, run))
    if not active:
        return ["no stable or proposed dependent to demote"], ""
    shown = [f"deprecate {name} (now {status})" for _sid, name, status in active[:20]]
    if len(active) > 20:
        shown.append(f"… and {len(active) - 20} more")
    return shown, ""


def prepare_demote(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return _dependents_now(library, run)


def do_demote(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, names: Any
) -> tuple[str, dict[str, Any]]:
    demoted = []
    for sid, name, status in _active(conn, list(names)):
        record(
            library,
            conn,
            (sid, name, status),
            EventType.SKILL_DEPRECATED,
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


def plan_audit(library: Kernel, run: Run, inputs: Inputs) -> tuple[list[str], str]:
    days = int(library.config.get("runbook.audit_days", 30))
    return [
        f"record the sessions that used {run.skill_name} in the last {days} days, what it did"
        " there, and its outcomes (runs, failures, their details)"
    ], ""


def prepare_audit(library: Kernel, run: Run, inputs: Inputs) -> Any:
    return _audit(library, run)


def do_audit(
    library: Kernel, conn: sqlite3.Connection, run: Run, inputs: Inputs, audit: Any
) -> tuple[str, dict[str, Any]]:
    summary = (
        f"{audit['session_count']} sessions and {audit['runs']} runs in {audit['days']} days,"
        f" {audit['failures']} failed"
    )
    if audit["inferred"]:
        summary += f" ({audit['inferred']} runs inferred from transcripts)"
    return summary, audit
