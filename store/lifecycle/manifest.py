"""The governance half of a skill's manifest (DESIGN §5): the version served and the
candidate proving itself, requirements a stable skill may not have, and — for a graduated
skill — who approved it and its provenance (pattern, draft, sessions, nodes)."""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Any

from store.lifecycle.candidates import of_skill
from store.lifecycle.requirements import unproven_requirements
from store.models import SkillDetail
from store.ports import Ledger

#: Session and node ids read from a SKILL.md's metadata at most.
MAX_CITED = 500


def governed(ledger: Ledger, detail: SkillDetail) -> SkillDetail:
    """`detail` with the served version, the latest candidate, unproven requirements (a
    stable skill on a proposed one) and, for a graduated skill, approval and provenance."""
    sid = detail.summary.skill_id
    with ledger.db.read() as conn:
        row = conn.execute(
            "SELECT served_version, status, approved_by FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        if row is None:
            return detail
        found = of_skill(conn, sid, ledger.config)
        unproven = unproven_requirements(conn, sid) if row[1] == "stable" else []
        provenance = _provenance(conn, detail)
    manifest = dict(detail.manifest)
    manifest["served_version"] = int(row[0]) or detail.summary.version_no
    if found:
        manifest["candidate"] = {
            "version_no": found[0].version_no,
            "status": found[0].status,
            "state": found[0].describe(),
        }
    if provenance:
        manifest["provenance"] = provenance
    manifest["approved_by"] = str(row[2] or "")
    return dataclasses.replace(
        detail,
        manifest=manifest,
        served_version=int(row[0]) or detail.summary.version_no,
        candidate=found[0] if found else None,
        unproven=tuple(unproven),
    )


def _provenance(conn: sqlite3.Connection, detail: SkillDetail) -> dict[str, Any]:
    """Where a graduated skill came from: its pattern and approved draft in the library, and
    the sessions and nodes its SKILL.md cites ({} for a skill that was only installed)."""
    name = detail.summary.name
    pattern = conn.execute(
        "SELECT pattern_id FROM patterns WHERE skill_name=? AND status='graduated'"
        " ORDER BY updated_at DESC, pattern_id LIMIT 1",
        (name,),
    ).fetchone()
    metadata = detail.frontmatter.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    cited_pattern = str(meta.get("librarian-pattern", "") or "")
    pattern_id = str(pattern[0]) if pattern else cited_pattern
    if not pattern_id:
        return {}
    draft = conn.execute(
        "SELECT draft_id, decided_by, decided_at FROM drafts WHERE pattern_id=?"
        " AND status='approved' ORDER BY decided_at DESC, draft_id LIMIT 1",
        (pattern_id,),
    ).fetchone()
    members = conn.execute(
        "SELECT node_id, session_id FROM pattern_members WHERE pattern_id=?"
        " ORDER BY session_id, node_id",
        (pattern_id,),
    ).fetchall()
    sessions = _ids(meta.get("librarian-sessions")) or sorted({str(m[1]) for m in members})
    nodes = _ids(meta.get("librarian-nodes")) or sorted(str(m[0]) for m in members)
    return {
        "patterns": [pattern_id],
        "drafts": [str(draft[0])] if draft else [],
        "sessions": sessions[:MAX_CITED],
        "nodes": nodes[:MAX_CITED],
        "approved_at": str(draft[2]) if draft else "",
    }


def _ids(value: object) -> list[str]:
    if not isinstance(value, str):
        return []
    return [part.strip() for part in value.split(",") if part.strip()][:MAX_CITED]
