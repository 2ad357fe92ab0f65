"""Projections for computed relation proposals (see `store.projections`)."""

from __future__ import annotations

import json
import sqlite3

from store.models import Event
from store.projections import Projection

projection = Projection("relation proposals")
handles = projection.handles


@handles("relation.proposed")
def _proposed(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "INSERT OR REPLACE INTO relation_proposals(source_name, target_name, shared, sessions,"
        " status, reason, proposed_at, decided_at, decided_by) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            p["source_name"],
            p["target_name"],
            int(p["shared"]),
            json.dumps(list(p.get("sessions", [])), ensure_ascii=False),
            "pending",
            "",
            event.ts,
            None,
            "",
        ),
    )


@handles("relation.proposal_accepted", "relation.proposal_rejected")
def _decided(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    status = "accepted" if event.type == "relation.proposal_accepted" else "rejected"
    conn.execute(
        "UPDATE relation_proposals SET status=?, reason=?, decided_at=?, decided_by=?"
        " WHERE source_name=? AND target_name=?",
        (
            status,
            p.get("reason", ""),
            event.ts,
            event.actor,
            p["source_name"],
            p["target_name"],
        ),
    )
