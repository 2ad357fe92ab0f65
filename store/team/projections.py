"""Projections of the `team.*` events (see `store.projections`): the team state, the items
pushed and pulled, and what a pulled decision does to the library's nodes, audit and drafts.

`team.received` is one hub event as this library saw it, with the item's state in the hub
after everything before it: what the handler writes depends on the payload alone, so a
replay reproduces it.

- A node from another library enters `nodes` (approved when the hub approved it, else
  rejected with the hub's reason), so consolidation and graduation count it; a later
  decision updates it. A node forgotten here stays forgotten.
- This library's own node takes the hub's summary, scope and verdict (the hub's order
  decides), unless the pull found local changes not pushed yet (`keep_local`).
- Every decision, applied or overruled, is a row of `audit`, by `team:<hub user>`.
- A draft from another library becomes a `drafts` row, approved or rejected; this library's
  own draft is approved by `pattern.graduated` once its SKILL.md is written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from store.content import text_of
from store.models import Event
from store.models.events import EventType
from store.projections import Projection

projection = Projection("team")
handles = projection.handles


def _set_state(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO team_state(key, value) VALUES (?,?)",
        [(k, str(v)) for k, v in values.items()],
    )


@handles(EventType.TEAM_JOINED)
def _joined(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    _set_state(conn, {"library_id": p["library_id"], "hub": p.get("hub", "")})


@handles(EventType.TEAM_PUSHED)
def _pushed(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    values: dict[str, Any] = {"push_seq": int(p["through"]), "pushed_at": event.ts}
    if p.get("head"):
        values["anchored_events"] = int(p["head"][0])
        values["anchored_hash"] = str(p["head"][1])
    if p.get("user"):
        values["user"] = p["user"]
    _set_state(conn, values)
    # The hub's ids of this library's own ops are not what it has *received*: the pull
    # cursor and the base of the next change come from pulled events only.
    for item_id, kind, op, _hub_id in p.get("items", []):
        row = conn.execute("SELECT status FROM team_items WHERE item_id=?", (item_id,)).fetchone()
        status = {"stage": "staged", "withdraw": "withdrawn"}.get(op) or (
            row[0] if row else "staged"
        )
        conn.execute(
            "INSERT INTO team_items(item_id, kind, own, origin, author, status, updated_at)"
            " VALUES (?,?,1,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET"
            " status=excluded.status, updated_at=excluded.updated_at",
            (item_id, kind, p.get("library_id", ""), p.get("user", ""), status, event.ts),
        )


@handles(EventType.TEAM_PULLED)
def _pulled(conn: sqlite3.Connection, event: Event) -> None:
    _set_state(conn, {"pull_cursor": int(event.payload["to"]), "pulled_at": event.ts})


@handles(EventType.TEAM_RECEIVED)
def _received(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    _team_item(conn, p, event.ts)
    if p["item_kind"] == "node":
        _audit(conn, event)
        if not p.get("keep_local"):
            _node(conn, p, event.ts)
    elif p["item_kind"] == "draft" and not p["own"] and p.get("draft"):
        _draft(conn, p)


@projection.handles_many(EventType.TEAM_RECEIVED)
def _received_many(conn: sqlite3.Connection, events: Sequence[Event]) -> None:
    """`_received` on each event in order, in bulk: a statement per table for the run (each
    executes its rows in order), the nodes' current status read once and followed here."""
    conn.executemany(_TEAM_ITEM_SQL, [_team_item_row(e.payload, e.ts) for e in events])
    nodes = [e for e in events if e.payload["item_kind"] == "node"]
    conn.executemany(_AUDIT_SQL, [_audit_row(conn, e) for e in nodes])
    changing = [e for e in nodes if not e.payload.get("keep_local")]
    status = _statuses(conn, [e.payload["item_id"] for e in changing])
    writes: dict[str, list[tuple[Any, ...]]] = {"insert": [], "own": [], "other": []}
    edges: list[tuple[str, ...]] = []
    for e in changing:
        node_id = e.payload["item_id"]
        change = _node_change(conn, e.payload, e.ts, status.get(node_id))
        if change is not None:
            kind, params, status[node_id] = change
            writes[kind].append(params)
            if kind == "insert":
                edges += [tuple(edge) for edge in e.payload["node"].get("edges") or ()]
    conn.executemany(_NODE_SQL["insert"], writes["insert"])
    if edges:
        conn.executemany(_EDGE_SQL, edges)
    conn.executemany(_NODE_SQL["own"], writes["own"])
    conn.executemany(_NODE_SQL["other"], writes["other"])
    for e in events:
        p = e.payload
        if p["item_kind"] == "draft" and not p["own"] and p.get("draft"):
            _draft(conn, p)


def _statuses(conn: sqlite3.Connection, node_ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    unique = list(dict.fromkeys(node_ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            conn.execute(
                f"SELECT node_id, status FROM nodes WHERE node_id IN ({marks})", chunk
            ).fetchall()
        )
    return found


_TEAM_ITEM_SQL = (
    "INSERT INTO team_items(item_id, kind, own, origin, author, status, decided_by,"
    " decided_at, project, scope, hub_id, conflicts, updated_at)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET"
    " status=excluded.status, decided_by=excluded.decided_by,"
    " decided_at=excluded.decided_at, project=excluded.project, scope=excluded.scope,"
    " author=excluded.author, origin=excluded.origin,"
    " hub_id=max(team_items.hub_id, excluded.hub_id),"
    " conflicts=team_items.conflicts + excluded.conflicts, updated_at=excluded.updated_at"
)


def _team_item(conn: sqlite3.Connection, p: dict[str, Any], ts: str) -> None:
    conn.execute(_TEAM_ITEM_SQL, _team_item_row(p, ts))


def _team_item_row(p: dict[str, Any], ts: str) -> tuple[Any, ...]:
    return (
        p["item_id"],
        p["item_kind"],
        1 if p["own"] else 0,
        p["origin"],
        p["author"],
        p["status"],
        p.get("decided_by", ""),
        p.get("decided_at", ""),
        p.get("project", ""),
        p.get("scope", ""),
        int(p["hub_id"]),
        0 if p["applied"] else 1,
        ts,
    )


def local_status(own: bool, hub_status: str) -> str:
    """A node's status here for its item's status in the hub: approved knowledge is what
    the team approved; this library's own staged node stays approved (its author approved
    it) until the team decides otherwise."""
    if hub_status == "approved" or (own and hub_status == "staged"):
        return "approved"
    return "rejected"


_NODE_SQL = {
    "insert": "INSERT OR IGNORE INTO nodes(node_id, session_id, project, type, summary,"
    " evidence, file, line_start, line_end, confidence, scope, tier, strategy, status,"
    " developer, created_at, updated_at, decided_at, decided_by, reason, informativeness)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "own": "UPDATE nodes SET status=?, summary=?, scope=?, reason=CASE WHEN ?='' THEN reason"
    " ELSE ? END, updated_at=? WHERE node_id=?",
    "other": "UPDATE nodes SET status=?, summary=?, scope=?, reason=?, decided_by=?,"
    " decided_at=?, updated_at=? WHERE node_id=?",
}
_EDGE_SQL = "INSERT OR IGNORE INTO edges(source_id, target_id, type) VALUES (?,?,?)"


def _node(conn: sqlite3.Connection, p: dict[str, Any], ts: str) -> None:
    row = conn.execute("SELECT status FROM nodes WHERE node_id=?", (p["item_id"],)).fetchone()
    change = _node_change(conn, p, ts, row[0] if row else None)
    if change is None:
        return
    kind, params, _status = change
    conn.execute(_NODE_SQL[kind], params)
    if kind == "insert" and p["node"].get("edges"):
        conn.executemany(_EDGE_SQL, [tuple(edge) for edge in p["node"]["edges"]])


def _node_change(
    conn: sqlite3.Connection, p: dict[str, Any], ts: str, current: str | None
) -> tuple[str, tuple[Any, ...], str] | None:
    """What a pulled event does to its node, whose status here is `current` (None: no such
    node): ("insert" | "own" | "other", the statement's values, the status after), or None."""
    node_id = p["item_id"]
    status = local_status(bool(p["own"]), p["status"])
    if current is None and (p["own"] or not p.get("node")):
        return None  # an own node this library no longer has; or nothing to insert
    if current == "forgotten":
        return None  # forgotten here: it stays forgotten whatever the team does
    summary = text_of(conn, p["summary"])
    reason = "" if status == "approved" else _why(conn, p)
    decided_by = f"team:{p['decided_by']}" if p.get("decided_by") else ""
    if current is None:
        return (
            "insert",
            _insert_row(conn, node_id, p, status, summary, reason, decided_by, ts),
            status,
        )
    if p["own"]:
        return "own", (status, summary, p["scope"], reason, reason, ts, node_id), status
    values = (status, summary, p["scope"], reason, decided_by, p.get("decided_at", ""), ts, node_id)
    return "other", values, status


def _why(conn: sqlite3.Connection, p: dict[str, Any]) -> str:
    if p["status"] == "withdrawn":
        return "withdrawn by its author in the team hub"
    if p["status"] == "staged":
        return "back in review in the team hub"
    why = text_of(conn, p.get("reason", ""))
    return "rejected in the team hub" + (f": {why}" if why else "")


def _insert_row(
    conn: sqlite3.Connection,
    node_id: str,
    p: dict[str, Any],
    status: str,
    summary: str,
    reason: str,
    decided_by: str,
    ts: str,
) -> tuple[Any, ...]:
    n = p["node"]
    return (
        node_id,
        n["session_id"],
        n["project"],
        n["type"],
        summary,
        text_of(conn, n["evidence"]),
        n["file"],
        int(n["line_start"]),
        int(n["line_end"]),
        float(n["confidence"]),
        p["scope"],
        n["tier"],
        "team",
        status,
        n["developer"],
        n.get("session_started_at") or n.get("created_at") or ts,
        ts,
        p.get("decided_at", ""),
        decided_by,
        reason,
        float(n["informativeness"]),
    )


_AUDIT_SQL = (
    "INSERT INTO audit(seq, ts, actor, action, node_id, before, after, reason, batch)"
    " VALUES (?,?,?,?,?,?,?,?,?)"
)
#: The audit's `before` of a pulled decision: nothing (the hub's history has it).
_NOTHING_BEFORE = json.dumps({}, sort_keys=True)
_AFTER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)  # json.dumps' defaults


def _audit(conn: sqlite3.Connection, event: Event) -> None:
    conn.execute(_AUDIT_SQL, _audit_row(conn, event))


def _audit_row(conn: sqlite3.Connection, event: Event) -> tuple[Any, ...]:
    p = event.payload
    values = {
        k: text_of(conn, v) if k in ("summary", "reason") else v
        for k, v in p.get("values", {}).items()
    }
    reason = values.pop("reason", "")
    if not p["applied"]:
        reason = f"overruled: hub event {p['overruled_by']} came first in the hub's order" + (
            f" ({reason})" if reason else ""
        )
    return (
        event.seq,
        p["at"],
        f"team:{p['actor']}",
        f"team.{p['kind']}" + ("" if p["applied"] else ".overruled"),
        p["item_id"],
        _NOTHING_BEFORE,
        _AFTER.encode(values),
        reason,
        f"hub:{p['hub_id']}",
    )


def _draft(conn: sqlite3.Connection, p: dict[str, Any]) -> None:
    d = p["draft"]
    approved = p["status"] == "approved"
    conn.execute(
        "INSERT INTO drafts(draft_id, pattern_id, name, content_hash, citations, status,"
        " created_at, created_by, decided_at, decided_by, reason, path)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(draft_id) DO UPDATE SET"
        " status=excluded.status, decided_at=excluded.decided_at,"
        " decided_by=excluded.decided_by, reason=excluded.reason, path=excluded.path,"
        " content_hash=excluded.content_hash",
        (
            p["item_id"],
            d["pattern_id"],
            d["name"],
            d["content_hash"],
            json.dumps(d.get("citations", []), sort_keys=True, ensure_ascii=False),
            "approved" if approved else "rejected",
            d.get("staged_at", p["at"]),
            f"team:{p['author']}",
            p.get("decided_at", ""),
            f"team:{p['decided_by']}" if p.get("decided_by") else "",
            "" if approved else _why(conn, p),
            d.get("path", "") if approved else "",
        ),
    )
