"""Read queries over ingested sessions."""

from __future__ import annotations

import json

from store.db import Database
from store.models import SessionSummary

_SQL = """
SELECT s.session_id, s.project, s.branch, s.client_version, s.started_at, s.ended_at, s.turns,
       s.tool_calls, s.errors, s.skills_used, s.skipped,
       (SELECT count(*) FROM nodes n WHERE n.session_id = s.session_id AND n.status != 'merged'),
       (SELECT count(*) FROM nodes n WHERE n.session_id = s.session_id AND n.status = 'pending')
FROM sessions s
"""


def _summary(row: tuple[object, ...]) -> SessionSummary:
    (
        sid,
        project,
        branch,
        version,
        started,
        ended,
        turns,
        tools,
        errors,
        skills,
        skipped,
        nodes,
        pending,
    ) = row
    return SessionSummary(
        session_id=str(sid),
        project=str(project),
        branch=str(branch),
        client_version=str(version),
        started_at=str(started),
        ended_at=str(ended),
        turns=int(str(turns)),
        tool_calls=int(str(tools)),
        errors=int(str(errors)),
        skills_used=tuple(json.loads(str(skills))),
        skipped=json.loads(str(skipped)),
        node_count=int(str(nodes)),
        pending_count=int(str(pending)),
    )


def list_sessions(
    db: Database, project: str | None = None, text: str = "", limit: int | None = None
) -> list[SessionSummary]:
    """Newest first; `text` filters on id, project and branch."""
    clauses, params = [], []
    if project:
        clauses.append("s.project = ?")
        params.append(project)
    for word in text.split():
        clauses.append("(s.session_id LIKE ? OR s.project LIKE ? OR s.branch LIKE ?)")
        params += [f"%{word}%"] * 3
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    page = f" LIMIT {int(limit)}" if limit is not None else ""
    with db.read() as conn:
        cursor = conn.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            f"{_SQL}{where} ORDER BY s.started_at DESC, s.session_id{page}", params
        ).fetchall()
    return [_summary(r) for r in rows]


def get_session(db: Database, session_id: str) -> SessionSummary | None:
    with db.read() as conn:
        cursor = conn.cursor()
        cursor.row_factory = None
        row = cursor.execute(f"{_SQL} WHERE s.session_id = ?", (session_id,)).fetchone()
    return _summary(row) if row else None
