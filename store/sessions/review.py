"""The review queue: reading nodes, and recording every decision as an audited event."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from store.content import NODE_TEXT_KEYS, store_text, with_refs
from store.db import Database
from store.errors import LibrarianError
from store.ingest.redact import redact
from store.models import NODE_TYPES, SCOPES, AuditEntry, ContextMessage, Edge, Node, QueueCounts

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Review orders, each total (the node id breaks every tie). `best`: what a reviewer learns
#: most from first, informativeness × confidence (`store.ingest.bar`).
ORDERS = {
    "best": "informativeness * confidence DESC, created_at, node_id",
    "oldest": "created_at, node_id",
    "newest": "created_at DESC, node_id DESC",
    "confidence": "confidence DESC, created_at, node_id",
    "type": "type, confidence DESC, node_id",
    "session": "session_id, line_start, node_id",
}
ACTIONS = {
    "approve": "node.approved",
    "reject": "node.rejected",
    "edit": "node.edited",
    "scope": "node.rescoped",
    "reopen": "node.reopened",
    "unsuppress": "node.unsuppressed",
}
#: The `nodes` columns a `Node` is made of, in its field order.
NODE_COLUMNS = (
    "node_id, session_id, project, type, summary, evidence, file, line_start, line_end,"
    " confidence, scope, tier, status, developer, created_at, decided_at, decided_by, reason,"
    " merged_into, retrieval_count, last_retrieved_at, informativeness, suppressed_reason,"
    " superseded_by"
)


class ReviewError(LibrarianError):
    """A decision that cannot be applied (unknown node, bad value)."""


def _where(
    status: str | None, type_: str | None, project: str | None, session: str | None, text: str = ""
) -> tuple[str, list[Any]]:
    clauses, params = [], []
    for column, value in (
        ("status", status),
        ("type", type_),
        ("project", project),
        ("session_id", session),
    ):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    for word in text.split():
        clauses.append("(summary LIKE ? ESCAPE '\\' OR evidence LIKE ? ESCAPE '\\')")
        like = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [like, like]
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def list_nodes(
    db: Database,
    *,
    status: str | None = None,
    type_: str | None = None,
    project: str | None = None,
    session: str | None = None,
    text: str = "",
    order: str = "oldest",
    by_session: bool = False,
    limit: int | None = None,
    offset: int = 0,
) -> list[Node]:
    """Nodes in `order`; `by_session`: each session's nodes together, in that order, and the
    sessions in the order of their first node (with `best`: the session with the best node
    first)."""
    where, params = _where(status, type_, project, session, text)
    page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
    ordering = ORDERS.get(order, ORDERS["oldest"])
    if by_session:
        sql = (
            f"SELECT {NODE_COLUMNS} FROM (SELECT *, min(pos) OVER (PARTITION BY session_id)"
            f" AS first_rank FROM (SELECT *, row_number() OVER (ORDER BY {ordering}) AS pos"
            f" FROM nodes{where})) ORDER BY first_rank, pos{page}"
        )
    else:
        sql = f"SELECT {NODE_COLUMNS} FROM nodes{where} ORDER BY {ordering}{page}"
    with db.read() as conn:
        cursor = conn.cursor()
        cursor.row_factory = None
        rows = cursor.execute(sql, params).fetchall()
    return [Node(*row) for row in rows]


def session_starts(db: Database) -> dict[str, str]:
    """When each ingested session started (ISO 8601), by session id."""
    with db.read() as conn:
        return dict(conn.execute("SELECT session_id, started_at FROM sessions").fetchall())


def count_nodes(
    db: Database,
    *,
    status: str | None = None,
    type_: str | None = None,
    project: str | None = None,
    session: str | None = None,
    text: str = "",
) -> int:
    where, params = _where(status, type_, project, session, text)
    with db.read() as conn:
        return int(conn.execute(f"SELECT count(*) FROM nodes{where}", params).fetchone()[0])


def get_node(db: Database, node_id: str) -> Node | None:
    with db.read() as conn:
        return _node(conn, node_id)


def _node(conn: sqlite3.Connection, node_id: str) -> Node | None:
    cursor = conn.cursor()
    cursor.row_factory = None
    row = cursor.execute(f"SELECT {NODE_COLUMNS} FROM nodes WHERE node_id=?", (node_id,)).fetchone()
    return Node(*row) if row else None


def session_graph(db: Database, session_id: str) -> tuple[list[Node], list[Edge]]:
    """Every node of a session (merged ones excluded) and the edges between them."""
    nodes = [n for n in list_nodes(db, session=session_id, order="session") if n.status != "merged"]
    ids = {n.node_id for n in nodes}
    with db.read() as conn:
        rows = conn.execute(
            "SELECT e.source_id, e.target_id, e.type FROM edges e JOIN nodes n"
            " ON n.node_id = e.target_id WHERE n.session_id=?",
            (session_id,),
        ).fetchall()
    return nodes, [Edge(*r) for r in rows if r[0] in ids and r[1] in ids]


def context(db: Database, node: Node, radius: int = 3) -> list[ContextMessage]:
    """The archived messages of the node's file around its evidence (a window, by index)."""
    with db.read() as conn:
        lo, hi = conn.execute(
            "SELECT min(idx), max(idx) FROM session_messages WHERE session_id=? AND file=?"
            " AND line_start <= ? AND line_end >= ?",
            (node.session_id, node.file, node.line_end, node.line_start),
        ).fetchone()
        if lo is None:
            return []
        rows = conn.execute(
            "SELECT idx, file, line_start, line_end, role, kind, text, ts, is_error"
            " FROM session_messages WHERE session_id=? AND file=? AND idx BETWEEN ? AND ?"
            " ORDER BY idx",
            (node.session_id, node.file, lo - radius, hi + radius),
        ).fetchall()
    return [
        ContextMessage(
            index=r[0],
            file=r[1],
            line_start=r[2],
            line_end=r[3],
            role=r[4],
            kind=r[5],
            text=r[6],
            timestamp=r[7],
            is_error=bool(r[8]),
            in_range=lo <= r[0] <= hi,
        )
        for r in rows
    ]


def counts(db: Database, since: str) -> QueueCounts:
    """Pending and suppressed now, and approvals/rejections at or after `since` (an ISO
    timestamp)."""
    with db.read() as conn:
        by_status = dict(
            conn.execute("SELECT status, count(*) FROM nodes GROUP BY status").fetchall()
        )
        decided = conn.execute(
            "SELECT count(*) FROM audit WHERE ts >= ? AND action IN ('approved', 'rejected')",
            (since,),
        ).fetchone()[0]
    return QueueCounts(
        by_status.get("pending", 0),
        int(decided),
        by_status.get("approved", 0),
        by_status.get("rejected", 0),
        by_status.get("suppressed", 0),
    )


def audit(db: Database, limit: int = 200, node_id: str | None = None) -> list[AuditEntry]:
    where, params = (" WHERE node_id=?", [node_id]) if node_id else ("", [])
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT seq, ts, actor, action, node_id, before, after, reason, batch"
            f" FROM audit{where} ORDER BY seq DESC LIMIT ?",
            [*params, limit],
        ).fetchall()
    return [
        AuditEntry(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), json.loads(r[6]), r[7], r[8])
        for r in rows
    ]


# -- decisions -------------------------------------------------------------------------------


def _change(node: Node, action: str, reason: str, summary: str, scope: str) -> dict[str, Any]:
    if action == "approve":
        return {"status": "approved", "reason": reason}
    if action == "reject":
        return {"status": "rejected", "reason": reason}
    if action == "edit":
        text = " ".join(summary.split())
        if not text:
            raise ReviewError("edit needs a non-empty summary")
        return {"summary": text[:500]}
    if action == "unsuppress":
        if node.status != "suppressed":
            raise ReviewError(f"node {node.node_id} is {node.status}, not suppressed")
        return {"status": "pending"}
    if action == "scope":
        target = scope.upper() or ("TEAM" if node.scope == "PROJECT" else "PROJECT")
        if target not in SCOPES:
            raise ReviewError(f"scope must be one of {', '.join(SCOPES)}")
        return {"scope": target}
    raise ReviewError(f"unknown action {action!r}")


def decide(
    library: Kernel,
    action: str,
    node_ids: Sequence[str],
    *,
    reason: str = "",
    summary: str = "",
    scope: str = "",
) -> list[Node]:
    """Apply one decision to several nodes, all or nothing; returns the updated nodes. What
    the reviewer types (a summary, a reason) is kept with its secrets masked."""
    reason, summary = redact(reason), redact(summary)
    if action not in ACTIONS or action == "reopen":
        raise ReviewError(f"unknown action {action!r} (approve, reject, edit, scope, unsuppress)")
    with library.db.write() as conn:
        batch = f"b{_next_seq(conn)}"  # one id for the whole multi-selection: undo reverts it
        for node_id in dict.fromkeys(node_ids):
            node = _decidable(conn, node_id)
            after = _change(node, action, reason, summary, scope)
            before = {k: getattr(node, k) for k in after}
            library.append_event(
                conn,
                ACTIONS[action],
                f"node:{node_id}",
                _decision(conn, node_id, before, after, reason, batch),
            )
        return [n for n in (_node(conn, i) for i in dict.fromkeys(node_ids)) if n is not None]


def _decision(
    conn: sqlite3.Connection,
    node_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
    reason: str,
    batch: str,
) -> dict[str, Any]:
    """A decision's payload; summaries and reasons go by blob reference (`forget` erases)."""
    owner = f"node:{node_id}"
    return {
        "node_id": node_id,
        "before": with_refs(conn, owner, before, NODE_TEXT_KEYS),
        "after": with_refs(conn, owner, after, NODE_TEXT_KEYS),
        "reason": store_text(conn, owner, reason),
        "batch": batch,
    }


def _decidable(conn: sqlite3.Connection, node_id: str) -> Node:
    node = _node(conn, node_id)
    if node is None:
        raise ReviewError(f"no node {node_id!r}")
    if node.status == "merged":
        raise ReviewError(f"node {node_id} was merged into {node.merged_into}; decide that one")
    if node.status == "forgotten":
        raise ReviewError(f"node {node_id} was forgotten; its content is erased")
    if node.status == "superseded":
        raise ReviewError(f"node {node_id} was superseded by {node.superseded_by}; decide that one")
    if conn.execute("SELECT 1 FROM team_items WHERE item_id=? AND own=0", (node_id,)).fetchone():
        raise ReviewError(
            f"node {node_id} came from the team hub: decide it there (`librarian team review`,"
            " or the review queue's team source)"
        )
    return node


def _next_seq(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM events").fetchone()[0])


def undo_last(library: Kernel) -> list[Node]:
    """Revert this reviewer's most recent decision batch that is not already undone."""
    with library.db.write() as conn:
        rows = conn.execute(
            "SELECT action, node_id, before, batch FROM audit WHERE actor=? ORDER BY seq DESC"
            " LIMIT 2000",
            (library.actor,),
        ).fetchall()
        undone = {b.removeprefix("undo:") for a, _, _, b in rows if a == "reopened"}
        # A batch that touched a forgotten node is past undoing (its content is erased).
        gone = _forgotten(conn, {n for _, n, _, _ in rows})
        undone |= {b for _, n, _, b in rows if n in gone}
        decisions = [r for r in rows if r[0] not in ("reopened", "forgotten")]
        batch = next((b for _, _, _, b in decisions if b not in undone), None)
        if batch is None:
            return []
        targets = [(a, n, before) for a, n, before, b in decisions if b == batch]
        for action, node_id, before in targets:
            node = _decidable(conn, node_id)
            restore = json.loads(before)
            library.append_event(
                conn,
                "node.reopened",
                f"node:{node_id}",
                _decision(
                    conn,
                    node_id,
                    {k: getattr(node, k) for k in restore},
                    restore,
                    f"undo {action}",
                    f"undo:{batch}",
                ),
            )
        return [n for n in (_node(conn, t[1]) for t in targets) if n is not None]


def _forgotten(conn: sqlite3.Connection, node_ids: set[str]) -> set[str]:
    return {
        n
        for n in node_ids
        if conn.execute(
            "SELECT 1 FROM nodes WHERE node_id=? AND status='forgotten'", (n,)
        ).fetchone()
    }


def valid_type(value: str) -> str:
    upper = value.upper()
    if upper not in NODE_TYPES:
        raise ReviewError(f"unknown node type {value!r} (one of {', '.join(NODE_TYPES)})")
    return upper
