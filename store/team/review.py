"""The team review queue: the hub's staged nodes as a review queue, for the review screen's
"team" source and `librarian team review`.

It answers the calls the review screen makes of the library (`nodes`, `node_count`,
`queue_counts`, `review`, …) from the hub, so the same table, detail pane and keys decide
team items. Row-level security decides what a member reads: a reviewer sees every staged
item, a contributor what is published and its own. Each decision is made on the item as the
reviewer saw it (its last hub event); if someone decided it meanwhile, the hub records the
decision as overruled and this raises `DecisionOverruled` (both stay in the audit).
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from store.models import SCOPES, Citation, ContextMessage, Draft, Node, QueueCounts
from store.team import hub as hub_api
from store.team.connection import connect, describe, hub_errors
from store.team.errors import TeamError

if TYPE_CHECKING:
    from store.team.hub import Conn

#: Review orders over the hub's items, each total (the item id breaks every tie).
ORDERS = {
    "best": "i.rank DESC, i.staged_at, i.item_id",
    "oldest": "i.staged_at, i.item_id",
    "newest": "i.staged_at DESC, i.item_id DESC",
    "confidence": "(i.body->>'confidence')::real DESC, i.staged_at, i.item_id",
    "type": "i.type, i.rank DESC, i.item_id",
    "session": "i.body->>'session_id', (i.body->>'line_start')::int, i.item_id",
}
#: The review screen's statuses, in the hub's words.
STATUSES = {
    "pending": ("staged",),
    "approved": ("approved",),
    "rejected": ("rejected", "withdrawn"),
}
#: "Decided today" is counted up to this many (the status line says so past it).
DECIDED_CAP = 10_000
ACTIONS = {"approve": "approve", "reject": "reject", "edit": "edit", "scope": "rescope"}
_COLUMNS = (
    "i.item_id, i.body, i.status, i.author, i.developer, i.project, i.scope, i.type,"
    " i.summary, i.staged_at, i.decided_by, i.decided_at, i.reason, i.last_event"
)

#: The oldest hub schema whose tables the review queue reads (schema 2 changed only `pull`):
#: a hub not yet upgraded still lists its items.
READS_SCHEMA = 1


class DecisionOverruled(TeamError):
    """A decision the hub recorded as overruled: the item changed since it was shown."""


class TeamQueue:
    """The hub's staged nodes, read and decided as a review queue."""

    def __init__(self, conninfo: str, *, kind: str = "node") -> None:
        """`kind`: the items listed, `node` (the review screen) or `draft` (SKILL.md drafts)."""
        self.conninfo = conninfo
        self.kind = kind
        self.where = describe(conninfo)
        self._conn: Conn | None = None
        self._lock = threading.Lock()
        #: Each listed item's last hub event: what a decision is made on.
        self._bases: dict[str, int] = {}
        self._scopes: dict[str, str] = {}
        #: Each listed draft's summary in the hub (the team's title for it; `edit` changes it).
        self.titles: dict[str, str] = {}
        self.user = ""

    def _hub(self) -> Conn:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.conninfo)
            self.user = str(self._conn.info.user)
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- reading -----------------------------------------------------------------------

    def nodes(
        self,
        *,
        status: str | None = None,
        type_: str | None = None,
        project: str | None = None,
        session: str | None = None,
        text: str = "",
        order: str = "best",
        by_session: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Node]:
        """Staged (or decided) team nodes, filtered and ordered like the local queue."""
        where, params = self._where(status, type_, project, session, text)
        ordering = ORDERS.get(order, ORDERS["best"])
        page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
        if by_session:
            sql = (
                f"SELECT {_COLUMNS.replace('i.', 'g.')} FROM (SELECT i.*, min(pos) OVER"
                f" (PARTITION BY i.body->>'session_id') AS first_rank FROM (SELECT i.*,"
                f" row_number() OVER (ORDER BY {ordering}) AS pos FROM librarian.items i"
                f"{where}) i) g ORDER BY g.first_rank, g.pos{page}"
            )
        else:
            sql = f"SELECT {_COLUMNS} FROM librarian.items i{where} ORDER BY {ordering}{page}"
        rows = self._run(sql, params)
        found = [self._node(r) for r in rows]
        return found

    def node_count(
        self,
        *,
        status: str | None = None,
        type_: str | None = None,
        project: str | None = None,
        session: str | None = None,
        text: str = "",
    ) -> int:
        where, params = self._where(status, type_, project, session, text)
        rows = self._run(f"SELECT count(*) FROM librarian.items i{where}", params)
        return int(rows[0][0])

    def node(self, item_id: str) -> Node:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM librarian.items i WHERE i.item_id = %s", [item_id]
        )
        if not rows:
            raise TeamError(f"no team item {item_id!r} that you may read")
        return self._node(rows[0])

    def node_context(self, node: Node, radius: int = 3) -> list[ContextMessage]:
        """The hub keeps evidence, not transcripts: no surrounding messages."""
        return []

    def session_starts(self) -> dict[str, str]:
        rows = self._run(
            "SELECT DISTINCT i.body->>'session_id', i.body->>'session_started_at'"
            " FROM librarian.items i WHERE i.kind='node' AND i.status='staged'",
            [],
        )
        return {str(r[0]): str(r[1] or "") for r in rows}

    def projects(self) -> list[str]:
        rows = self._run(  # the projects of what waits (the index answers)
            "SELECT DISTINCT i.project FROM librarian.items i WHERE i.status='staged'"
            " AND i.kind = %s ORDER BY i.project",
            [self.kind],
        )
        return [str(r[0]) for r in rows]

    def queue_counts(self) -> QueueCounts:
        """Waiting for me, and what I decided since midnight (UTC, counted up to
        `DECIDED_CAP`); each from an index alone."""
        midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        rows = self._run(
            "SELECT (SELECT count(*) FROM librarian.items i WHERE i.status='staged'"
            "  AND i.kind = %s AND i.author <> session_user),"
            " (SELECT count(*) FROM (SELECT 1 FROM librarian.events e"
            "  WHERE e.actor = session_user AND e.at >= %s"
            "  AND e.kind IN ('approve', 'reject') LIMIT %s) d)",
            [self.kind, midnight, DECIDED_CAP],
        )
        waiting, decided = (int(v) for v in rows[0])
        return QueueCounts(waiting, decided, 0, 0, 0)

    def history(self, item_id: str) -> list[dict[str, Any]]:
        """Every hub event on an item (who, what, when, applied or overruled)."""
        rows = self._run(
            "SELECT e.id, e.kind, e.actor, e.at, e.applied, e.overruled_by, e.body - 'item'"
            " FROM librarian.events e WHERE e.item_id = %s ORDER BY e.id",
            [item_id],
        )
        names = ("id", "kind", "actor", "at", "applied", "overruled_by", "values")
        return [dict(zip(names, r, strict=True)) for r in rows]

    # -- deciding ----------------------------------------------------------------------

    def review(
        self,
        action: str,
        node_ids: list[str] | tuple[str, ...],
        *,
        reason: str = "",
        summary: str = "",
        scope: str = "",
    ) -> list[Node]:
        """approve | reject [reason] | edit summary | scope [PROJECT|TEAM], in the hub."""
        if action not in ACTIONS:
            raise TeamError(f"{action!r} is not a team decision (approve, reject, edit, scope)")
        ids = list(dict.fromkeys(node_ids))
        missing = [i for i in ids if i not in self._bases]
        for item_id in missing:
            self.node(item_id)  # learn its base (and that it may be read)
        values: dict[str, str] = {"reason": reason}
        if action == "edit":
            values = {"summary": " ".join(summary.split())[:2000]}
        elif action == "scope":
            target = scope.upper() or (
                "PROJECT" if self._scopes.get(ids[0], "PROJECT") == "TEAM" else "TEAM"
            )
            if target not in SCOPES:
                raise TeamError(f"scope must be one of {', '.join(SCOPES)}")
            values = {"scope": target}
        with self._lock, hub_errors():
            results = hub_api.decide(
                self._hub(), ids, [self._bases[i] for i in ids], ACTIONS[action], values
            )
        overruled = [r for r in results if not r["applied"]]
        for r in results:
            self._bases[r["item_id"]] = int(r["last_event"])
        if overruled:
            first = overruled[0]
            raise DecisionOverruled(
                f"{len(overruled)} of {len(ids)} changed in the hub since you saw them (item"
                f" {first['item_id']} is now {first['status']}, hub event {first['last_event']}):"
                " your decision is recorded as overruled; look again"
            )
        return [self.node(i) for i in ids]

    def drafts(self, *, status: str | None = "pending", limit: int = 500) -> list[Draft]:
        """The hub's SKILL.md drafts (a queue made with `kind="draft"`) as the review screen's
        drafts pane shows them, best first; "pending" is what waits for this member."""
        where, params = self._where(status, None, None, None, "")
        rows = self._run(
            f"SELECT {_COLUMNS} FROM librarian.items i{where} ORDER BY {ORDERS['best']}"
            f" LIMIT {int(limit)}",
            params,
        )
        return [self._draft(r) for r in rows]

    def draft(self, item_id: str) -> Draft:
        rows = self._run(
            f"SELECT {_COLUMNS} FROM librarian.items i WHERE i.item_id = %s AND i.kind = 'draft'",
            [item_id],
        )
        if not rows:
            raise TeamError(f"no team draft {item_id!r} that you may read")
        return self._draft(rows[0])

    def undo_review(self) -> list[Node]:
        raise TeamError("decisions in the hub are history and are not undone: decide again instead")

    # -- helpers -----------------------------------------------------------------------

    def _where(
        self,
        status: str | None,
        type_: str | None,
        project: str | None,
        session: str | None,
        text: str,
    ) -> tuple[str, list[Any]]:
        clauses = ["i.kind = %s", "librarian.schema_version() >= %s"]
        params: list[Any] = [self.kind, READS_SCHEMA]
        if status:
            clauses.append("i.status = ANY(%s)")
            params.append(list(STATUSES.get(status, (status,))))
            if status == "pending":
                clauses.append("i.author <> session_user")
        for column, value in (("i.type", type_), ("i.project", project)):
            if value:
                clauses.append(f"{column} = %s")
                params.append(value)
        if session:
            clauses.append("i.body->>'session_id' = %s")
            params.append(session)
        for word in text.split():
            like = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append("(i.summary ILIKE %s OR i.body->>'evidence' ILIKE %s)")
            params += [like, like]
        return " WHERE " + " AND ".join(clauses), params

    def _run(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with self._lock, hub_errors():
            return self._hub().execute(sql, params).fetchall()

    def _node(self, r: tuple[Any, ...]) -> Node:
        body = r[1] if isinstance(r[1], dict) else json.loads(r[1] or "{}")
        self._bases[str(r[0])] = int(r[13])
        self._scopes[str(r[0])] = str(r[6])
        status = {"staged": "pending", "withdrawn": "rejected"}.get(r[2], r[2])
        return Node(
            node_id=str(r[0]),
            session_id=str(body.get("session_id", "")),
            project=str(r[5]),
            type=str(r[7]),
            summary=str(r[8]),
            evidence=str(body.get("evidence", body.get("content", ""))),
            file=str(body.get("file", "")),
            line_start=_int(body.get("line_start")),
            line_end=_int(body.get("line_end")),
            confidence=_float(body.get("confidence")),
            scope=str(r[6]),
            tier=str(body.get("tier", "")),
            status=status,
            developer=f"{r[4]} (team: {r[3]})",
            created_at=r[9].isoformat(timespec="microseconds"),
            decided_at=r[11].isoformat(timespec="microseconds") if r[11] else "",
            decided_by=f"team:{r[10]}" if r[10] else "",
            reason=str(r[12] or ""),
            informativeness=_float(body.get("informativeness")),
        )

    def _draft(self, r: tuple[Any, ...]) -> Draft:
        """A hub draft item as a `Draft`: its SKILL.md, citations and the hub's verdict (its
        summary, which a reviewer may edit, is the team's title for it)."""
        node = self._node(r)
        self.titles[node.node_id] = node.summary
        body = r[1] if isinstance(r[1], dict) else json.loads(r[1] or "{}")
        return Draft(
            draft_id=node.node_id,
            pattern_id=str(body.get("pattern_id", "")),
            name=str(body.get("name", "")),
            content=str(body.get("content", "")),
            citations=tuple(_citations(body.get("citations"))),
            status=node.status,
            created_at=node.created_at,
            created_by=node.developer,
            decided_at=node.decided_at,
            decided_by=node.decided_by,
            reason=node.reason,
        )


def _citations(raw: Any) -> list[Citation]:
    """The draft's citations as staged (malformed ones are left out: the hub checks only
    the SKILL.md; `store.team.validate` refuses them at pull)."""
    found: list[Citation] = []
    for c in raw if isinstance(raw, list) else []:
        try:
            found.append(
                Citation(
                    marker=str(c["marker"]),
                    node_id=str(c["node_id"]),
                    session_id=str(c["session_id"]),
                    file=str(c["file"]),
                    line_start=int(c["line_start"]),
                    line_end=int(c["line_end"]),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue
    return found


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
