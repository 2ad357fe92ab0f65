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
from typing import Any

from store.content import text_of
from store.models import Event
from store.projections import Projection

projection = Projection("team")
handles = projection.handles


def _set_state(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO team_state(key, value) VALUES (?,?)",
        [(k, str(v)) for k, v in values.items()],
    )


@handles("team.joined")
def _joined(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    _set_state(conn, {"library_id": p["library_id"], "hub": p.get("hub", "")})


@handles("team.pushed")
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


@handles("team.pulled")
def _pulled(conn: sqlite3.Connection, event: Event) -> None:
    _set_state(conn, {"pull_cursor": int(event.payload["to"]), "pulled_at": event.ts})


@handles("team.received")
def _received(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    _team_item(conn, p, event.ts)
    if p["item_kind"] == "node":
        _audit(conn, event)
        if not p.get("keep_local"):
            _node(conn, p, event.ts)
    elif p["item_kind"] == "draft" and not p["own"] and p.get("draft"):
        _draft(conn, p)


def _team_item(conn: sqlite3.Connection, p: dict[str, Any], ts: str) -> None:
    conn.execute(
        "INSERT INTO team_items(item_id, kind, own, origin, author, status, decided_by,"
        " decided_at, project, scope, hub_id, conflicts, updated_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(item_id) DO UPDATE SET"
        " status=excluded.status, decided_by=excluded.decided_by,"
        " decided_at=excluded.decided_at, project=excluded.project, scope=excluded.scope,"
        " author=excluded.author, origin=excluded.origin,"
        " hub_id=max(team_items.hub_id, excluded.hub_id),"
        " conflicts=team_items.conflicts + excluded.conflicts, updated_at=excluded.updated_at",
        (
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
        ),
    )


def local_status(own: bool, hub_status: str) -> str:
    """A node's status here for its item's status in the hub: approved knowledge is what
    the team approved; this library's own staged node stays approved (its author approved
    it) until the team decides otherwise."""
    if hub_status == "approved" or (own and hub_status == "staged"):
        return "approved"
    return "rejected"


def _node(conn: sqlite3.Connection, p: dict[str, Any], ts: str) -> None:
    node_id = p["item_id"]
    row = conn.execute("SELECT status FROM nodes WHERE node_id=?", (node_id,)).fetchone()
    status = local_status(bool(p["own"]), p["status"])
    summary = text_of(conn, p["summary"])
    reason = "" if status == "approved" else _why(conn, p)
    decided_by = f"team:{p['decided_by']}" if p.get("decided_by") else ""
    if row is None:
        if p["own"] or not p.get("node"):
            return  # an own node this library no longer has; or nothing to insert
        _insert(conn, node_id, p, status, summary, reason, decided_by, ts)
        return
    if row[0] == "forgotten":
        return  # forgotten here: it stays forgotten whatever the team does
    if p["own"]:
        conn.execute(
            "UPDATE nodes SET status=?, summary=?, scope=?, reason=CASE WHEN ?='' THEN reason"
            " ELSE ? END, updated_at=? WHERE node_id=?",
            (status, summary, p["scope"], reason, reason, ts, node_id),
        )
        return
    conn.execute(
        "UPDATE nodes SET status=?, summary=?, scope=?, reason=?, decided_by=?, decided_at=?,"
        " updated_at=? WHERE node_id=?",
        (status, summary, p["scope"], reason, decided_by, p.get("decided_at", ""), ts, node_id),
    )


def _why(conn: sqlite3.Connection, p: dict[str, Any]) -> str:
    if p["status"] == "withdrawn":
        return "withdrawn by its author in the team hub"
    if p["status"] == "staged":
        return "back in review in the team hub"
    why = text_of(conn, p.get("reason", ""))
    return "rejected in the team hub" + (f": {why}" if why else "")


def _insert(
    conn: sqlite3.Connection,
    node_id: str,
    p: dict[str, Any],
    status: str,
    summary: str,
    reason: str,
    decided_by: str,
    ts: str,
) -> None:
    n = p["node"]
    conn.execute(
        "INSERT OR IGNORE INTO nodes(node_id, session_id, project, type, summary, evidence,"
        " file, line_start, line_end, confidence, scope, tier, strategy, status, developer,"
        " created_at, updated_at, decided_at, decided_by, reason, informativeness)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
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
        ),
    )
    if n.get("edges"):
        conn.executemany(
            "INSERT OR IGNORE INTO edges(source_id, target_id, type) VALUES (?,?,?)",
            [tuple(edge) for edge in n["edges"]],
        )


def _audit(conn: sqlite3.Connection, event: Event) -> None:
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
    conn.execute(
        "INSERT INTO audit(seq, ts, actor, action, node_id, before, after, reason, batch)"
        " VALUES (?,?,?,?,?,?,?,?,?)",
        (
            event.seq,
            p["at"],
            f"team:{p['actor']}",
            f"team.{p['kind']}" + ("" if p["applied"] else ".overruled"),
            p["item_id"],
            json.dumps({}, sort_keys=True),
            json.dumps(values, sort_keys=True, ensure_ascii=False),
            reason,
            f"hub:{p['hub_id']}",
        ),
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
