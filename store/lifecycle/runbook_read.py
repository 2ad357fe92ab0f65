"""Reading retirement runbook runs and incidents (DESIGN §8): rows become `Run`s here."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from store.errors import LibrarianError
from store.models import RUNBOOK_STEPS, Incident, Run, RunStep

if TYPE_CHECKING:
    from store.kernel import Kernel


class RunbookError(LibrarianError):
    """A runbook action that cannot be done (unknown run, wrong step, missing input)."""


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
        return get_locked(conn, run_id)


def incidents(library: Kernel, skill: str | None = None) -> list[Incident]:
    sql = "SELECT * FROM incidents"
    args: tuple[str, ...] = ()
    if skill:
        sql += " WHERE skill_name=?"
        args = (skill,)
    with library.db.read() as conn:
        rows = conn.execute(sql + " ORDER BY recorded_at DESC, incident_id", args).fetchall()
    return [_incident(row) for row in rows]


def get_locked(conn: sqlite3.Connection, run_id: str) -> Run:
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
