"""Projection rows of candidate versions (see `store.lifecycle.candidates`): which version
of a skill the librarian serves, which one is proving itself, and each candidate's fate.

Pure functions of the event log, called by the skill projections
(`store.skills.projections`) for `skill.installed`/`skill.changed` and the two candidate
events; they never read files or config. An event from before schema 15 carries no
`candidate`: its version is served at once, as it was then.
"""

from __future__ import annotations

import sqlite3

from store.models import Event


def version_recorded(conn: sqlite3.Connection, event: Event) -> int:
    """After a `skill.installed`/`skill.changed` row is written: set the served and candidate
    versions, close a candidate the new version replaces, open the new candidate. Returns the
    version the librarian serves now (whose surfaces are indexed)."""
    p = event.payload
    sid, version = int(p["skill_id"]), int(p["version_no"])
    base = int(p.get("candidate", 0) or 0) if event.type == "skill.changed" else 0
    _close_open(conn, sid, event.ts, f"replaced by v{version}", "replaced")
    if base <= 0:
        conn.execute(
            "UPDATE skills SET served_version=?, candidate_version=0 WHERE skill_id=?",
            (version, sid),
        )
        return version
    conn.execute(
        "UPDATE skills SET served_version=?, candidate_version=? WHERE skill_id=?",
        (base, version, sid),
    )
    conn.execute(
        "INSERT OR REPLACE INTO skill_candidates(skill_id, version_no, base_version, status,"
        " opened_at) VALUES (?,?,?,'candidate',?)",
        (sid, version, base, event.ts),
    )
    return base


def promoted(conn: sqlite3.Connection, event: Event) -> int:
    """`skill.candidate_promoted`: the candidate is served from now on; returns it."""
    p = event.payload
    sid, version = int(p["skill_id"]), int(p["version_no"])
    conn.execute(
        "UPDATE skill_candidates SET status='promoted', decided_at=?, reason=?"
        " WHERE skill_id=? AND version_no=?",
        (event.ts, str(p.get("reason", "")), sid, version),
    )
    conn.execute(
        "UPDATE skills SET served_version=?, candidate_version=0, updated_at=? WHERE skill_id=?",
        (version, event.ts, sid),
    )
    return version


def set_aside(conn: sqlite3.Connection, event: Event) -> None:
    """`skill.candidate_set_aside`: the candidate drifted; the served version stays."""
    p = event.payload
    sid, version = int(p["skill_id"]), int(p["version_no"])
    conn.execute(
        "UPDATE skill_candidates SET status='set_aside', decided_at=?, reason=?, alert=?"
        " WHERE skill_id=? AND version_no=?",
        (event.ts, str(p.get("reason", "")), str(p.get("alert", "")), sid, version),
    )
    conn.execute(
        "UPDATE skills SET candidate_version=0, updated_at=? WHERE skill_id=?"
        " AND candidate_version=?",
        (event.ts, sid, version),
    )


def _close_open(conn: sqlite3.Connection, sid: int, ts: str, reason: str, status: str) -> None:
    conn.execute(
        "UPDATE skill_candidates SET status=?, decided_at=?, reason=?"
        " WHERE skill_id=? AND status='candidate'",
        (status, ts, reason, sid),
    )
