"""Computed `often_used_with` relations (DESIGN §5): open triangles of co-usage.

Two active skills (not retired, not uninstalled) that sessions used together at least
`relations.co_usage_min` times, with no relation of any type or origin between them in either
direction, are proposed once — a `relation.proposed` event fills `relation_proposals`. A
proposal waits in the review queue: accepting it adds the relation (origin `computed`) in the
same transaction, rejecting it needs a reason. A decided pair is never proposed again.

Co-usage is one grouped self-join on `skill_uses` (a session's skills, by the names the
transcript used: `plugin:name` counts as `name` when the catalog knows only the bare name).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from store.errors import LibrarianError
from store.ingest.redact import redact
from store.models import RelationProposal, SharedSession
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

RELATION = "often_used_with"
ORIGIN = "computed"
#: Sessions a proposal keeps as its evidence (newest first).
MAX_SESSIONS = 20
STATUSES = ("pending", "accepted", "rejected")
_INACTIVE = "('retired', 'uninstalled')"
_SUFFIX = "substr(x.skill_name, length(rtrim(x.skill_name, replace(x.skill_name, ':', ''))) + 1)"
_IN = "IN (SELECT value FROM json_each(:{}))"

#: (session, catalog name) for every use of an active skill; `{exact}` and `{prefixed}`
#: narrow the two branches (the name as used; a `plugin:name` whose bare name is known).
_USED = f"""
WITH used(session_id, name) AS (
    SELECT x.session_id, s.name FROM skill_uses x JOIN skills s ON s.name = x.skill_name
    WHERE s.status NOT IN {_INACTIVE} {{exact}}
    UNION
    SELECT x.session_id, s.name FROM skill_uses x JOIN skills s ON s.name = {_SUFFIX}
    WHERE instr(x.skill_name, ':') > 0 AND s.status NOT IN {_INACTIVE}
    AND NOT EXISTS (SELECT 1 FROM skills k WHERE k.name = x.skill_name) {{prefixed}}
)
"""
_ALL = {"exact": "", "prefixed": ""}
_BY_SESSION = {
    "exact": "AND x.session_id " + _IN.format("sessions"),
    "prefixed": "AND x.session_id " + _IN.format("sessions"),
}
_BY_NAME = {
    "exact": "AND x.skill_name " + _IN.format("names"),
    "prefixed": f"AND {_SUFFIX} " + _IN.format("names"),
}

_OPEN_PAIRS = """
SELECT a, b, shared FROM (
    SELECT p.name AS a, q.name AS b, count(*) AS shared FROM used p JOIN used q
    ON q.session_id = p.session_id AND p.name < q.name
    GROUP BY p.name, q.name HAVING count(*) >= :least
)
WHERE NOT EXISTS (
    SELECT 1 FROM relation_proposals rp WHERE rp.source_name = a AND rp.target_name = b
)
AND NOT EXISTS (
    SELECT 1 FROM relations r JOIN skills k ON k.skill_id = r.source_id
    WHERE r.target_name = b AND k.name = a
)
AND NOT EXISTS (
    SELECT 1 FROM relations r JOIN skills k ON k.skill_id = r.source_id
    WHERE r.target_name = a AND k.name = b
)
ORDER BY shared DESC, a, b
"""

_STATUS_OF = (
    "coalesce((SELECT status FROM skills WHERE name={} ORDER BY status = 'uninstalled',"
    " scope_rank, root_rank, fs_path LIMIT 1), 'missing')"
)
_COLUMNS = (
    "source_name, target_name, shared, sessions, status, reason, proposed_at, decided_at,"
    f" decided_by, {_STATUS_OF.format('source_name')}, {_STATUS_OF.format('target_name')}"
)


class ProposalError(LibrarianError):
    """A proposal that cannot be decided (unknown pair, already decided, no reason)."""


def pair(a: str, b: str) -> tuple[str, str]:
    """The canonical order of a pair (the proposal's key)."""
    return (a, b) if a <= b else (b, a)


def minimum(library: Kernel) -> int:
    return max(1, int(library.config.get("relations.co_usage_min", 3)))


def open_pairs(
    conn: sqlite3.Connection, least: int, names: set[str] | None = None
) -> list[tuple[str, str, int]]:
    """Pairs used together in `least` sessions or more, unrelated and never proposed (only
    pairs of `names` when given)."""
    narrow = _ALL if names is None else _BY_NAME
    sql = _USED.format(**narrow) + _OPEN_PAIRS
    args = {"least": least, "names": json.dumps(sorted(names or ()))}
    return [(str(a), str(b), int(n)) for a, b, n in conn.execute(sql, args)]


def compute(library: Kernel, *, since: int | None = None) -> list[RelationProposal]:
    """Propose every new open triangle; returns the proposals made (often none).

    With `since` (an event seq) only pairs of skills that a session ingested after it used
    together can be new, so only those are counted: after a hook ingests one session this is
    a few index lookups instead of the whole self-join."""
    least = minimum(library)
    with library.db.read() as conn:
        names = None if since is None else _names_used_since(conn, since)
        if names is not None and len(names) < 2:
            return []
        if not open_pairs(conn, least, names):  # the common case: a read, no write
            return []
    made: list[RelationProposal] = []
    with library.db.write() as conn:
        found = open_pairs(conn, least, names)  # again, under the write lock: no double
        evidence = _sessions_of(conn, {name for a, b, _ in found for name in (a, b)})
        for a, b, shared in found:
            of_b = set(evidence.get(b, []))
            both = [s for s in evidence.get(a, []) if s in of_b][:MAX_SESSIONS]
            payload = {"source_name": a, "target_name": b, "shared": shared, "sessions": both}
            library.append_event(conn, "relation.proposed", f"skill:{a}", payload)
            made.append(_pending_or_any(conn, a, b))
    return made


def _names_used_since(conn: sqlite3.Connection, since: int) -> set[str]:
    """Active skills used in sessions ingested after event `since`, when one of those
    sessions used two or more (else nothing can have become a pair)."""
    sessions = [
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT json_extract(payload, '$.session_id') FROM events"
            " WHERE seq > ? AND type = 'session.ingested'",
            (since,),
        )
    ]
    if not sessions:
        return set()
    rows = conn.execute(
        _USED.format(**_BY_SESSION) + "SELECT session_id, name FROM used",
        {"sessions": json.dumps(sessions)},
    ).fetchall()
    per_session: dict[str, set[str]] = {}
    for session_id, name in rows:
        per_session.setdefault(str(session_id), set()).add(str(name))
    return {name for used in per_session.values() if len(used) > 1 for name in used}


def _sessions_of(conn: sqlite3.Connection, names: set[str]) -> dict[str, list[str]]:
    """Sessions that used each of `names`, newest first."""
    if not names:
        return {}
    rows = conn.execute(
        _USED.format(**_BY_NAME)
        + "SELECT u.name, u.session_id FROM used u LEFT JOIN sessions s USING(session_id)"
        " ORDER BY s.started_at DESC, u.session_id",
        {"names": json.dumps(sorted(names))},
    )
    found: dict[str, list[str]] = {}
    for name, session_id in rows:
        found.setdefault(str(name), []).append(str(session_id))
    return found


def proposals(library: Kernel, status: str | None = "pending") -> list[RelationProposal]:
    """Proposals with `status` (None: all), most shared sessions first."""
    if status is not None and status not in STATUSES:
        raise ProposalError(f"unknown proposal status {status!r} (one of: {', '.join(STATUSES)})")
    where, args = ("WHERE status=?", (status,)) if status else ("", ())
    with library.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM relation_proposals {where}"
            " ORDER BY status != 'pending', shared DESC, source_name, target_name",
            args,
        ).fetchall()
    return [_proposal(row) for row in rows]


def get(library: Kernel, a: str, b: str) -> RelationProposal:
    with library.db.read() as conn:
        return _pending_or_any(conn, a, b)


def _pending_or_any(conn: sqlite3.Connection, a: str, b: str) -> RelationProposal:
    source, target = pair(a, b)
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM relation_proposals WHERE source_name=? AND target_name=?",
        (source, target),
    ).fetchone()
    if row is None:
        raise ProposalError(
            f"no proposal for {one_line(source, 60)} and {one_line(target, 60)}"
            " (`librarian proposals` lists them)"
        )
    return _proposal(row)


def _pending(conn: sqlite3.Connection, a: str, b: str) -> RelationProposal:
    found = _pending_or_any(conn, a, b)
    if found.status != "pending":
        by = f" by {found.decided_by}" if found.decided_by else ""
        raise ProposalError(
            f"the proposal {one_line(found.source_name, 60)} {RELATION}"
            f" {one_line(found.target_name, 60)} was already {found.status}{by}"
        )
    return found


def accept(library: Kernel, a: str, b: str) -> RelationProposal:
    """Accept a pending proposal: the `often_used_with` relation (origin `computed`) is added
    in the same transaction."""
    with library.db.write() as conn:
        found = _pending(conn, a, b)
        row = conn.execute(
            "SELECT skill_id, status FROM skills WHERE name=?"
            " ORDER BY status = 'uninstalled', scope_rank, root_rank, fs_path LIMIT 1",
            (found.source_name,),
        ).fetchone()
        other = conn.execute(
            "SELECT status FROM skills WHERE name=?"
            " ORDER BY status = 'uninstalled', scope_rank, root_rank, fs_path LIMIT 1",
            (found.target_name,),
        ).fetchone()
        for name, skill in ((found.source_name, row), (found.target_name, other)):
            status = skill[-1] if skill is not None else "missing"
            if status in ("retired", "uninstalled", "missing"):
                raise ProposalError(
                    f"{one_line(name, 60)} is {status} since it was proposed: reject the"
                    " proposal instead"
                )
        key = {"source_name": found.source_name, "target_name": found.target_name}
        subject = f"skill:{found.source_name}"
        library.append_event(conn, "relation.proposal_accepted", subject, key)
        library.append_event(
            conn,
            "relation.added",
            subject,
            {
                "source_id": int(row[0]),
                "type": RELATION,
                "target_name": found.target_name,
                "origin": ORIGIN,
            },
        )
        return _pending_or_any(conn, a, b)


def reject(library: Kernel, a: str, b: str, reason: str) -> RelationProposal:
    """Reject a pending proposal; the reason is required and kept."""
    if not reason.strip():
        raise ProposalError("rejecting a proposal needs a reason")
    with library.db.write() as conn:
        found = _pending(conn, a, b)
        library.append_event(
            conn,
            "relation.proposal_rejected",
            f"skill:{found.source_name}",
            {
                "source_name": found.source_name,
                "target_name": found.target_name,
                "reason": redact(reason.strip()),
            },
        )
        return _pending_or_any(conn, a, b)


def shared_sessions(library: Kernel, a: str, b: str) -> list[SharedSession]:
    """The sessions a proposal names, with project, branch, date and first prompt."""
    found = get(library, a, b)
    out: list[SharedSession] = []
    with library.db.read() as conn:
        for session_id in found.sessions:
            row = conn.execute(
                "SELECT project, branch, started_at FROM sessions WHERE session_id=?",
                (session_id,),
            ).fetchone()
            prompt = conn.execute(
                "SELECT text FROM session_messages WHERE session_id=? AND role='user'"
                " AND kind='prompt' ORDER BY idx LIMIT 1",
                (session_id,),
            ).fetchone()
            project, branch, started = tuple(row) if row is not None else ("", "", "")
            title = one_line(str(prompt[0]), 120) if prompt is not None else ""
            out.append(SharedSession(session_id, project, branch, started, title))
    return out


def _proposal(row: Any) -> RelationProposal:
    try:
        sessions = tuple(str(s) for s in json.loads(row[3] or "[]"))
    except ValueError:
        sessions = ()
    return RelationProposal(
        source_name=row[0],
        target_name=row[1],
        shared=int(row[2]),
        sessions=sessions,
        status=row[4],
        reason=row[5] or "",
        proposed_at=row[6] or "",
        decided_at=row[7] or "",
        decided_by=row[8] or "",
        source_status=row[9],
        target_status=row[10],
    )
