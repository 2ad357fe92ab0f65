"""Projections of governance (issue 16): uses seen in transcripts, the write gate's draft
revisions, enrichment proposals, and what the librarian wrote into skill folders on a
reviewer's say (see `store.projections`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from store.models import Event
from store.projections import Projection

projection = Projection("governance")
handles = projection.handles


@handles("skill.used")
def _used(conn: sqlite3.Connection, event: Event) -> None:
    _project_used(conn, event.payload, event.ts)


@handles("pattern.draft_revised")
def _draft_revised(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "UPDATE drafts SET content_hash=?, parameters=?, kept=? WHERE draft_id=?",
        (
            p["content_hash"],
            _dumps(p.get("parameters", [])),
            _dumps(p.get("kept", [])),
            p["draft_id"],
        ),
    )


@handles("skill.enrichment_proposed")
def _enrichment_proposed(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "INSERT OR REPLACE INTO enrichments(proposal_id, skill_id, skill_name, version_no,"
        " source, fields, before_hash, content_hash, reasons, status, created_at, created_by)"
        " VALUES (?,?,?,?,?,?,?,?,?,'pending',?,?)",
        (
            p["proposal_id"],
            int(p["skill_id"]),
            p["skill_name"],
            int(p["version_no"]),
            p["source"],
            _dumps(p["fields"]),
            p["before_hash"],
            p["content_hash"],
            _dumps(p.get("reasons", [])),
            event.ts,
            event.actor,
        ),
    )
    # A newer proposal for the same skill replaces the one still waiting.
    conn.execute(
        "UPDATE enrichments SET status='replaced', decided_at=?, reason=? WHERE skill_id=?"
        " AND status='pending' AND proposal_id != ?",
        (event.ts, f"replaced by {p['proposal_id']}", int(p["skill_id"]), p["proposal_id"]),
    )


@handles("skill.enrichment_approved")
def _enrichment_approved(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "UPDATE enrichments SET status='approved', decided_at=?, decided_by=? WHERE proposal_id=?",
        (event.ts, event.actor, p["proposal_id"]),
    )
    wrote(conn, p.get("written", {}), "enrichment", event.seq)


@handles("skill.enrichment_rejected")
def _enrichment_rejected(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "UPDATE enrichments SET status=?, decided_at=?, decided_by=?, reason=? WHERE proposal_id=?",
        (
            str(p.get("status", "rejected")),
            event.ts,
            event.actor,
            str(p.get("reason", "")),
            p["proposal_id"],
        ),
    )


def wrote(conn: sqlite3.Connection, written: dict[str, Any], kind: str, seq: int) -> None:
    """Remember what the librarian wrote into a skill folder (`skill_id`, the hashes a scan
    will find), so that scan serves that version at once instead of making it a candidate."""
    if not written or not written.get("skill_id"):
        return
    conn.execute(
        "INSERT OR IGNORE INTO librarian_writes(skill_id, content_hash, files_hash, kind, seq)"
        " VALUES (?,?,?,?,?)",
        (int(written["skill_id"]), written["content_hash"], written["files_hash"], kind, seq),
    )


def _project_used(conn: sqlite3.Connection, payload: dict[str, Any], ts: str) -> None:
    """`skill.used` (store/skills/usage.py): the session's calls, the skill's count and last
    use."""
    sid, session = int(payload["skill_id"]), str(payload["session_id"])
    last = str(payload.get("last_at") or ts)
    conn.execute(
        "INSERT INTO skill_calls(session_id, skill_id, calls, first_at, last_at)"
        " VALUES (?,?,?,?,?) ON CONFLICT(session_id, skill_id) DO UPDATE SET"
        " calls=excluded.calls, last_at=max(last_at, excluded.last_at)",
        (session, sid, int(payload["calls"]), str(payload.get("first_at") or last), last),
    )
    conn.execute(
        "UPDATE skills SET use_count=use_count+?1, last_used_at=CASE WHEN last_used_at IS NULL"
        " OR last_used_at < ?2 THEN ?2 ELSE last_used_at END WHERE skill_id=?3",
        (int(payload.get("added", 0) or 0), last, sid),
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
