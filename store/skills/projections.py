"""Projections of the skill catalog: versions, status, relations and the search surfaces
(see `store.projections`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from store.lifecycle import candidate_projections as candidates
from store.models import Event
from store.models.events import EventType
from store.projections import Projection, blob_text
from store.skills.surface import SLOTS, fts_columns, lexical_body, surfaces, text_hash

projection = Projection("skills")
handles = projection.handles

_SEVERITY_ORDER = {"high": 3, "medium": 2, "low": 1}


def max_severity(findings: list[dict[str, Any]]) -> str:
    best = max(
        (f.get("severity", "") for f in findings),
        key=lambda s: _SEVERITY_ORDER.get(s, 0),
        default="",
    )
    return best


@handles(EventType.SKILL_INSTALLED, EventType.SKILL_CHANGED)
def _skill_version(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    sid = int(p["skill_id"])
    existing = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()
    status = p.get("status") or (existing[0] if existing else "stable")
    conn.execute(
        "INSERT INTO skills(skill_id, fs_path, dir, name, root, scope, scope_rank, root_rank,"
        " status, current_version, installed_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(skill_id) DO UPDATE SET fs_path=excluded.fs_path, dir=excluded.dir,"
        " name=excluded.name, root=excluded.root, scope=excluded.scope,"
        " scope_rank=excluded.scope_rank, root_rank=excluded.root_rank, status=excluded.status,"
        " current_version=excluded.current_version, updated_at=excluded.updated_at",
        (
            sid,
            p["fs_path"],
            p["dir"],
            p["manifest"]["name"],
            p["root"],
            p["scope"],
            p["scope_rank"],
            p["root_rank"],
            status,
            p["version_no"],
            event.ts,
            event.ts,
        ),
    )
    _insert_version(conn, event)
    _replace_extracted_relations(conn, sid, p.get("relations", []), event.ts)
    served = candidates.version_recorded(conn, event)
    if served == int(p["version_no"]):
        _index_skill(conn, sid, p["manifest"], blob_text(conn, p["body_hash"]))
    else:  # a candidate: the librarian keeps serving (and indexing) the served version
        index_version(conn, sid, served)


def index_version(conn: sqlite3.Connection, sid: int, version_no: int) -> None:
    """Index a skill's search surfaces from one of its recorded versions."""
    row = conn.execute(
        "SELECT name, description, when_to_use, triggers, tags, role, body_hash"
        " FROM skill_versions WHERE skill_id=? AND version_no=?",
        (sid, version_no),
    ).fetchone()
    if row is None:
        return
    manifest = {
        "name": row[0],
        "description": row[1],
        "when_to_use": row[2],
        "triggers": json.loads(row[3]),
        "tags": json.loads(row[4]),
        "role": row[5],
    }
    _index_skill(conn, sid, manifest, blob_text(conn, row[6]))


def _insert_version(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    m = p["manifest"]
    findings = p.get("findings", [])
    warnings = p.get("warnings", [])
    conn.execute(
        "INSERT OR IGNORE INTO skill_versions(skill_id, version_no, content_hash, files_hash,"
        " source_hash, body_hash, name, declared_name, description, when_to_use, triggers, tags,"
        " role, version_label, license, compatibility, allowed_tools, frontmatter, warnings,"
        " findings, warning_count, finding_count, max_severity, created_at, event_seq, event_type,"
        " lint_version) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            int(p["skill_id"]),
            int(p["version_no"]),
            p["content_hash"],
            p["files_hash"],
            p["source_hash"],
            p["body_hash"],
            m["name"],
            m.get("declared_name"),
            m["description"],
            m.get("when_to_use", ""),
            _dumps(m.get("triggers", [])),
            _dumps(m.get("tags", [])),
            m.get("role", ""),
            m.get("version", ""),
            m.get("license", ""),
            m.get("compatibility", ""),
            _dumps(m.get("allowed_tools", [])),
            _dumps(p.get("frontmatter", {})),
            _dumps(warnings),
            _dumps(findings),
            len(warnings),
            len(findings),
            max_severity(findings),
            event.ts,
            event.seq,
            event.type,
            int(p.get("lint_version", 0)),
        ),
    )


@handles(EventType.SKILL_RELINTED)
def _skill_relinted(conn: sqlite3.Connection, event: Event) -> None:
    """Findings of an unchanged version, from newer lint rules (the version itself stays)."""
    p = event.payload
    findings = p.get("findings", [])
    conn.execute(
        "UPDATE skill_versions SET findings=?, finding_count=?, max_severity=?, lint_version=?"
        " WHERE skill_id=? AND version_no=?",
        (
            _dumps(findings),
            len(findings),
            max_severity(findings),
            int(p.get("lint_version", 0)),
            int(p["skill_id"]),
            int(p["version_no"]),
        ),
    )


def _replace_extracted_relations(
    conn: sqlite3.Connection, sid: int, relations: list[list[Any]], ts: str
) -> None:
    """A version's declared relations: [type, target] or, pinned, [type, target, version]."""
    conn.execute("DELETE FROM relations WHERE source_id=? AND origin='extracted'", (sid,))
    conn.executemany(
        "INSERT OR IGNORE INTO relations(source_id, type, target_name, origin, added_at, pin)"
        " VALUES (?,?,?,'extracted',?,?)",
        [(sid, r[0], r[1], ts, int(r[2]) if len(r) > 2 else 0) for r in relations],
    )


def _index_skill(conn: sqlite3.Connection, sid: int, manifest: dict[str, Any], body: str) -> None:
    _unindex_skill(conn, sid)
    rows = [
        (sid * SLOTS + i, sid, kind, text, text_hash(text))
        for i, (kind, text) in enumerate(surfaces(manifest))
    ]
    conn.executemany(
        "INSERT INTO skill_texts(label, skill_id, kind, text, text_hash) VALUES (?,?,?,?,?)", rows
    )
    name, description, extra = fts_columns(manifest)
    conn.execute(
        "INSERT INTO skills_fts(rowid, name, description, extra, body) VALUES (?,?,?,?,?)",
        (sid, name, description, extra, lexical_body(body)),
    )


def _unindex_skill(conn: sqlite3.Connection, sid: int) -> None:
    conn.execute("DELETE FROM skill_texts WHERE skill_id=?", (sid,))
    conn.execute("DELETE FROM skills_fts WHERE rowid=?", (sid,))


@handles(EventType.SKILL_UNINSTALLED)
def _skill_uninstalled(conn: sqlite3.Connection, event: Event) -> None:
    sid = int(event.payload["skill_id"])
    conn.execute(
        "UPDATE skills SET status='uninstalled', updated_at=? WHERE skill_id=?", (event.ts, sid)
    )
    _unindex_skill(conn, sid)


@handles(
    EventType.SKILL_PROPOSED,
    EventType.SKILL_PROMOTED,
    EventType.SKILL_DEPRECATED,
    EventType.SKILL_VALIDATED,
)
def _skill_status(conn: sqlite3.Connection, event: Event) -> None:
    status = {
        EventType.SKILL_PROPOSED.value: "proposed",
        EventType.SKILL_PROMOTED.value: "stable",
        EventType.SKILL_DEPRECATED.value: "deprecated",
        EventType.SKILL_VALIDATED.value: None,
    }[event.type]
    if status is not None:
        sid = int(event.payload["skill_id"])
        conn.execute(
            "UPDATE skills SET status=?, updated_at=? WHERE skill_id=?", (status, event.ts, sid)
        )
        # Back in circulation (or, restored by an abandoned runbook run, deprecated again):
        # off the denylist, which holds retired skills only.
        if status in ("proposed", "stable", "deprecated"):
            conn.execute("DELETE FROM denylist WHERE skill_id=?", (sid,))


@handles(EventType.SKILL_RETIRED)
def _skill_retired(conn: sqlite3.Connection, event: Event) -> None:
    sid = int(event.payload["skill_id"])
    conn.execute(
        "UPDATE skills SET status='retired', updated_at=? WHERE skill_id=?", (event.ts, sid)
    )
    row = conn.execute("SELECT name FROM skills WHERE skill_id=?", (sid,)).fetchone()
    if row is not None:
        conn.execute(
            "INSERT OR REPLACE INTO denylist(name, skill_id, reason, added_at) VALUES (?,?,?,?)",
            (row[0], sid, str(event.payload.get("reason", "")), event.ts),
        )


@handles(EventType.SKILL_CANDIDATE_PROMOTED)
def _candidate_promoted(conn: sqlite3.Connection, event: Event) -> None:
    index_version(conn, int(event.payload["skill_id"]), candidates.promoted(conn, event))


@handles(EventType.SKILL_CANDIDATE_SET_ASIDE)
def _candidate_set_aside(conn: sqlite3.Connection, event: Event) -> None:
    candidates.set_aside(conn, event)


@handles(EventType.SKILL_APPLIED)
def _skill_applied(conn: sqlite3.Connection, event: Event) -> None:
    conn.execute(
        "UPDATE skills SET last_used_at=?, use_count=use_count+1 WHERE skill_id=?",
        (event.ts, int(event.payload["skill_id"])),
    )


@handles(EventType.RELATION_ADDED)
def _relation_added(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    # Adding it again with another pin re-pins it (`relate A requires B@2`, then `B@3`).
    conn.execute(
        "INSERT INTO relations(source_id, type, target_name, origin, added_at, pin)"
        " VALUES (?,?,?,?,?,?) ON CONFLICT(source_id, type, target_name, origin)"
        " DO UPDATE SET pin=excluded.pin",
        (
            int(p["source_id"]),
            p["type"],
            p["target_name"],
            p.get("origin", "manual"),
            event.ts,
            int(p.get("pin", 0) or 0),
        ),
    )


@handles(EventType.RELATION_REMOVED)
def _relation_removed(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "DELETE FROM relations WHERE source_id=? AND type=? AND target_name=? AND origin=?",
        (int(p["source_id"]), p["type"], p["target_name"], p.get("origin", "manual")),
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
