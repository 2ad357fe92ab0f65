"""Projections of the retirement runbook: runs, their steps and incidents (DESIGN §8)."""

from __future__ import annotations

import json
import sqlite3

from store.models import Event
from store.projections import Projection
from store.skills.governance_projections import wrote

projection = Projection("runbook")
handles = projection.handles


@handles("runbook.started")
def _run_started(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "INSERT INTO runs(run_id, skill_id, skill_name, status, step, reason, actor, version_no,"
        " successor, started_at, updated_at) VALUES (?,?,?,'open',0,?,?,?,'',?,?)",
        (
            p["run_id"],
            int(p["skill_id"]),
            p["skill_name"],
            p["reason"],
            event.actor,
            int(p["version_no"]),
            event.ts,
            event.ts,
        ),
    )


@handles("runbook.step")
def _run_step(conn: sqlite3.Connection, event: Event) -> None:
    p = dict(event.payload)
    run_id, step = p.pop("run_id"), int(p.pop("step"))
    name, summary = p.pop("name"), p.pop("summary")
    conn.execute(
        "INSERT INTO run_steps(run_id, step, name, summary, payload, actor, ts, seq)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (
            run_id,
            step,
            name,
            summary,
            json.dumps(p, sort_keys=True, ensure_ascii=False),
            event.actor,
            event.ts,
            event.seq,
        ),
    )
    wrote(conn, p.get("wrote", {}), "regression", event.seq)  # step 7's regression case
    conn.execute(
        "UPDATE runs SET step=?, updated_at=?, status=CASE WHEN ? >= 7 THEN 'done' ELSE status"
        " END, successor=CASE WHEN ? != '' THEN ? ELSE successor END WHERE run_id=?",
        (step, event.ts, step, p.get("successor", ""), p.get("successor", ""), run_id),
    )


@handles("runbook.abandoned")
def _run_abandoned(conn: sqlite3.Connection, event: Event) -> None:
    conn.execute(
        "UPDATE runs SET status='abandoned', updated_at=? WHERE run_id=?",
        (event.ts, event.payload["run_id"]),
    )


@handles("incident.recorded")
def _incident(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "INSERT OR REPLACE INTO incidents(incident_id, run_id, skill_id, skill_name, version_no,"
        " cause, scope, regression, successor, actor, recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            p["incident_id"],
            p["run_id"],
            int(p["skill_id"]),
            p["skill_name"],
            int(p["version_no"]),
            p["cause"],
            p["scope"],
            p["regression"],
            p.get("successor", ""),
            event.actor,
            event.ts,
        ),
    )
