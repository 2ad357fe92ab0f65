"""The team state of this library in SQLite: its id, its cursors, and the push queue.

The push queue is not a table: it is every event after the push cursor that changes what
this library offers the team (a node approved, un-approved, edited or re-scoped; a SKILL.md
drafted or its draft rejected). It survives the hub being down because it is the event log;
pushing records the cursor (`team.pushed`) only after the hub committed the batch.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from store.config import Config
from store.content import text_of
from store.db import Database
from store.ingest.redact import redact
from store.models import ERASED, Event
from store.models.events import EventType
from store.projections import blob_text

#: Local event types that change what this library offers the team.
PUSHED_TYPES = (
    EventType.NODE_APPROVED,
    EventType.NODE_REJECTED,
    EventType.NODE_EDITED,
    EventType.NODE_RESCOPED,
    EventType.NODE_REOPENED,
    EventType.NODE_UNSUPPRESSED,
    EventType.NODE_FORGOTTEN,
    EventType.PATTERN_DRAFTED,
    EventType.PATTERN_DRAFT_REJECTED,
)
#: A node's evidence is sent up to this many characters (the hub takes 256 KB an item).
MAX_EVIDENCE = 20_000


class TeamDeps(Protocol):
    """What team operations need from an open library: the database, the config, the clock,
    who is acting, and the event writer (`append_event(conn, type, subject, payload)`)."""

    clock: Callable[[], str]

    @property
    def db(self) -> Database: ...

    @property
    def config(self) -> Config: ...

    @property
    def actor(self) -> str: ...

    def append_event(
        self, conn: sqlite3.Connection, type_: str, subject: str, payload: dict[str, Any]
    ) -> Event: ...

    def append_events(
        self, conn: sqlite3.Connection, entries: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> list[Event]: ...


@dataclass(frozen=True)
class State:
    """This library's team state (the `team_state` projection)."""

    library_id: str = ""
    hub: str = ""
    push_seq: int = 0
    pushed_at: str = ""
    pull_cursor: int = 0
    pulled_at: str = ""
    anchored_events: int = 0
    anchored_hash: str = ""
    user: str = ""


def state(conn: sqlite3.Connection) -> State:
    values = dict(conn.execute("SELECT key, value FROM team_state").fetchall())
    return State(
        library_id=values.get("library_id", ""),
        hub=values.get("hub", ""),
        push_seq=int(values.get("push_seq", 0) or 0),
        pushed_at=values.get("pushed_at", ""),
        pull_cursor=int(values.get("pull_cursor", 0) or 0),
        pulled_at=values.get("pulled_at", ""),
        anchored_events=int(values.get("anchored_events", 0) or 0),
        anchored_hash=values.get("anchored_hash", ""),
        user=values.get("user", ""),
    )


def library_id_for(deps: TeamDeps) -> tuple[str, bool]:
    """This library's team id, and whether it is recorded yet. A new one is only made up
    here: `join` records it once the hub has answered, so that a failed first contact
    changes nothing locally."""
    with deps.db.read() as conn:
        found = state(conn).library_id
    return (found, True) if found else (uuid.uuid4().hex, False)


def join(deps: TeamDeps, library_id: str, hub: str) -> str:
    """Record this library's team id (`team.joined`), unless one is recorded already."""
    with deps.db.write() as conn:
        found = state(conn).library_id
        if found:
            return found
        deps.append_event(
            conn,
            EventType.TEAM_JOINED,
            "team",
            {
                "library_id": library_id,
                "hub": hub,
                "name": f"{deps.actor} on {socket.gethostname()}",
            },
        )
    return library_id


def projects(conn: sqlite3.Connection, config: Config) -> list[str]:
    """The projects this developer works on: those of its sessions, plus `team.projects`."""
    found = {str(r[0]) for r in conn.execute("SELECT DISTINCT project FROM sessions")}
    extra = config.get("team.projects", []) or []
    found |= {str(p) for p in extra if str(p)}
    return sorted(p for p in found if p)


# -- the push queue --------------------------------------------------------------------------


class QueuePlan:
    """The push queue read at once (its events), made into ops a few at a time (`take`), so
    that a push sends one batch while it makes the next.

    Ops are made for every event after `after` that changes what this library offers the
    team. A node's changes count only once it has been approved (what was never approved is
    not the team's business); an approval stages the node as it is now, with its evidence,
    its edges and its session's start, redacted again on the way out."""

    def __init__(self, conn: sqlite3.Connection, library_id: str, after: int) -> None:
        self.library_id = library_id
        self.foreign = {r[0] for r in conn.execute("SELECT item_id FROM team_items WHERE own=0")}
        self.known = dict(
            conn.execute("SELECT item_id, hub_id FROM team_items WHERE own=1").fetchall()
        )
        self.staged = set(self.known)
        marks = ",".join("?" * len(PUSHED_TYPES))
        self._rows = conn.execute(
            f"SELECT seq, type, payload FROM events WHERE seq > ? AND type IN ({marks})"
            " ORDER BY seq",
            (after, *PUSHED_TYPES),
        ).fetchall()
        self._next = 0
        self._nodes: dict[str, dict[str, Any] | None] = {}
        #: The last event considered, and how many there are.
        self.through = int(self._rows[-1][0]) if self._rows else after
        self.events = len(self._rows)

    def __len__(self) -> int:
        """Events not made into ops yet (an upper bound of the ops to come)."""
        return len(self._rows) - self._next

    def take(self, conn: sqlite3.Connection, count: int) -> list[dict[str, Any]]:
        """Up to `count` more ops, in local order; fewer only when the queue is done."""
        ops: list[dict[str, Any]] = []
        while len(ops) < count and self._next < len(self._rows):
            seq, type_, raw = self._rows[self._next]
            self._next += 1
            op = _op(conn, type_, json.loads(raw), self.staged, self.foreign, self._nodes)
            if op is None:
                continue
            op["gid"] = f"{self.library_id}:{seq}"
            if op["item_id"] in self.known:
                op["base"] = int(self.known[op["item_id"]])
            ops.append(op)
        return ops


def queue_size(conn: sqlite3.Connection) -> int:
    """Events waiting to be pushed (before filtering out what never reached approval)."""
    cursor = state(conn).push_seq
    marks = ",".join("?" * len(PUSHED_TYPES))
    row = conn.execute(
        f"SELECT count(*) FROM events WHERE seq > ? AND type IN ({marks})",
        (cursor, *PUSHED_TYPES),
    ).fetchone()
    return int(row[0])


def _op(
    conn: sqlite3.Connection,
    type_: str,
    payload: dict[str, Any],
    staged: set[str],
    foreign: set[str],
    nodes: dict[str, dict[str, Any] | None],
) -> dict[str, Any] | None:
    if type_.startswith("pattern."):
        return _draft_op(conn, type_, payload, staged)
    node_id = str(payload.get("node_id", ""))
    if not node_id or node_id in foreign:
        return None  # a node pulled from the team is decided in the hub, not pushed back
    after = payload.get("after", {}) if isinstance(payload.get("after"), dict) else {}
    status = after.get("status")
    if type_ == EventType.NODE_APPROVED or status == "approved":
        if node_id not in nodes:
            nodes[node_id] = node_item(conn, node_id)
        item = nodes[node_id]
        if item is None:
            return None
        staged.add(node_id)
        return {"op": "stage", "kind": "node", "item_id": node_id, "item": item}
    if node_id not in staged:
        return None
    if type_ in (EventType.NODE_REJECTED, EventType.NODE_FORGOTTEN) or status in (
        "pending",
        "suppressed",
        "rejected",
    ):
        reason = (
            "forgotten"
            if type_ == EventType.NODE_FORGOTTEN
            else text_of(conn, payload.get("reason"))
        )
        return {"op": "withdraw", "item_id": node_id, "reason": redact(reason)[:2000]}
    values: dict[str, Any] = {}
    if "summary" in after:
        summary = redact(text_of(conn, after["summary"]))
        if not summary or summary == ERASED:
            return None
        values["summary"] = summary[:2000]
    if "scope" in after:
        values["scope"] = str(after["scope"])
    if not values:
        return None
    return {"op": "revise", "item_id": node_id, **values}


def _draft_op(
    conn: sqlite3.Connection, type_: str, payload: dict[str, Any], staged: set[str]
) -> dict[str, Any] | None:
    draft_id = str(payload.get("draft_id", ""))
    if type_ == EventType.PATTERN_DRAFTED:
        item = draft_item(conn, draft_id)
        if item is None:
            return None
        staged.add(draft_id)
        return {"op": "stage", "kind": "draft", "item_id": draft_id, "item": item}
    if draft_id not in staged:
        return None
    reason = redact(text_of(conn, payload.get("reason")))[:2000]
    return {"op": "withdraw", "item_id": draft_id, "reason": reason}


def node_item(conn: sqlite3.Connection, node_id: str) -> dict[str, Any] | None:
    """A node as the team sees it (None when it is gone or forgotten)."""
    row = conn.execute(
        "SELECT n.node_id, n.session_id, n.project, n.type, n.summary, n.evidence, n.file,"
        " n.line_start, n.line_end, n.confidence, n.scope, n.tier, n.developer,"
        " n.informativeness, n.status, n.created_at, coalesce(s.started_at, '')"
        " FROM nodes n LEFT JOIN sessions s USING(session_id) WHERE n.node_id=?",
        (node_id,),
    ).fetchone()
    if row is None or row[14] == "forgotten" or row[4] == ERASED:
        return None
    edges = conn.execute(
        "SELECT source_id, target_id, type FROM edges WHERE source_id=? OR target_id=?"
        " ORDER BY source_id, target_id, type",
        (node_id, node_id),
    ).fetchall()
    confidence, informativeness = float(row[9]), float(row[13])
    return {
        "session_id": row[1],
        "project": row[2],
        "type": row[3],
        "summary": redact(row[4])[:2000] or row[3],
        "evidence": redact(row[5])[:MAX_EVIDENCE],
        "file": row[6],
        "line_start": int(row[7]),
        "line_end": int(row[8]),
        "confidence": confidence,
        "scope": row[10],
        "tier": row[11],
        "developer": row[12],
        "informativeness": informativeness,
        "rank": round(confidence * informativeness, 6),
        "created_at": row[15],
        "session_started_at": row[16],
        "edges": [[str(a), str(b), str(t)] for a, b, t in edges],
    }


def draft_item(conn: sqlite3.Connection, draft_id: str) -> dict[str, Any] | None:
    """A drafted SKILL.md as the team sees it, with its pattern's title, kind and scope."""
    row = conn.execute(
        "SELECT d.pattern_id, d.name, d.content_hash, d.citations, d.created_by, p.title,"
        " p.kind, p.scope, p.project, p.confidence, p.sessions FROM drafts d"
        " LEFT JOIN patterns p USING(pattern_id) WHERE d.draft_id=?",
        (draft_id,),
    ).fetchone()
    if row is None:
        return None
    content = blob_text(conn, row[2])
    if not content or content == ERASED:
        return None
    return {
        "pattern_id": row[0],
        "name": row[1],
        "content": redact(content),
        "citations": json.loads(row[3] or "[]"),
        "developer": row[4],
        "summary": (row[5] or row[1])[:2000],
        "type": row[6] or "draft",
        "scope": row[7] if row[7] in ("PROJECT", "TEAM") else "TEAM",
        "project": row[8] or "",
        "rank": round(float(row[9] or 0.0), 6),
        "sessions": int(row[10] or 0),
    }


def unpushed_items(conn: sqlite3.Connection) -> set[str]:
    """Own items with local changes after the push cursor (a pull leaves their state alone:
    the next push carries the change, and the hub's order decides)."""
    cursor = state(conn).push_seq
    marks = ",".join("?" * len(PUSHED_TYPES))
    found: set[str] = set()
    for (raw,) in conn.execute(
        f"SELECT payload FROM events WHERE seq > ? AND type IN ({marks})", (cursor, *PUSHED_TYPES)
    ):
        payload = json.loads(raw)
        found.add(str(payload.get("node_id") or payload.get("draft_id") or ""))
    return found
