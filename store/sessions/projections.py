"""Projections for sessions, the reasoning DAG and review decisions (see `store.projections`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from store.content import message_rows, resolved, text_of
from store.models import ERASED, Event
from store.projections import Projection

projection = Projection("sessions")
handles = projection.handles


@handles("session.ingested")
def _session_ingested(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    sid = p["session_id"]
    previous = conn.execute(
        "SELECT ingest_count FROM sessions WHERE session_id=?", (sid,)
    ).fetchone()
    conn.execute(
        "INSERT OR REPLACE INTO sessions(session_id, project, branch, client_version, started_at,"
        " ended_at, turns, tool_calls, errors, compactions, skills_used, skipped, developer,"
        " messages_hash, ingested_at, ingest_count) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            sid,
            p["project"],
            p["branch"],
            p["client_version"],
            p["started_at"],
            p["ended_at"],
            p["turns"],
            p["tool_calls"],
            p["errors"],
            p.get("compactions", 0),
            json.dumps(p["skills_used"]),
            json.dumps(p["skipped"], sort_keys=True),
            p["developer"],
            p["messages_hash"],
            event.ts,
            (previous[0] if previous else 0) + 1,
        ),
    )
    conn.execute("DELETE FROM session_files WHERE session_id=?", (sid,))
    conn.executemany(
        "INSERT INTO session_files(session_id, path, size, mtime_ns, sha256, source, label)"
        " VALUES (?,?,?,?,?,?,?)",
        [(sid, *_file_row(f, p["files"][0]["path"])) for f in p["files"]],
    )
    conn.execute("DELETE FROM skill_uses WHERE session_id=?", (sid,))
    conn.executemany(
        "INSERT OR IGNORE INTO skill_uses(session_id, skill_name) VALUES (?,?)",
        [(sid, name) for name in p["skills_used"]],
    )
    _replace_messages(conn, sid, p["messages_hash"])


def _file_row(f: dict[str, Any], first: str) -> tuple[Any, ...]:
    """A session file's row. Events from before a session could have several main files
    (schema 7) name neither source nor label: their main file was the first, and every file
    was labelled by its path from the main file's folder (as migration 7 fills them in)."""
    folder = first[: first.rfind("/") + 1]
    label = f["path"][len(folder) :] if f["path"].startswith(folder) else f["path"]
    source, label = f.get("source", first), f.get("label", label)
    return f["path"], f["size"], f["mtime_ns"], f["sha256"], source, label


def _replace_messages(conn: sqlite3.Connection, sid: str, digest: str) -> None:
    conn.execute("DELETE FROM session_messages WHERE session_id=?", (sid,))
    rows = message_rows(conn, digest)
    conn.executemany(
        "INSERT INTO session_messages(session_id, idx, file, line_start, line_end, role, kind,"
        " text, ts, is_error) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(sid, *row) for row in rows],
    )


def _insert_node(
    conn: sqlite3.Connection, node: dict[str, Any], status: str, ts: str, merged_into: str = ""
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO nodes(node_id, session_id, project, type, summary, evidence, file,"
        " line_start, line_end, confidence, scope, tier, strategy, status, developer, created_at,"
        " updated_at, merged_into, informativeness, suppressed_reason)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            node["node_id"],
            node["session_id"],
            node["project"],
            node["type"],
            text_of(conn, node["summary"]),
            text_of(conn, node["evidence"]),
            node["file"],
            node["line_start"],
            node["line_end"],
            node["confidence"],
            node["scope"],
            node["tier"],
            node["strategy"],
            status,
            node["developer"],
            ts,
            ts,
            merged_into,
            float(node.get("informativeness", 0.0)),
            str(node.get("suppressed", "")),
        ),
    )
    conn.executemany(
        "INSERT OR IGNORE INTO edges(source_id, target_id, type) VALUES (?,?,?)",
        [(e["source"], node["node_id"], e["type"]) for e in node.get("edges_in", [])],
    )


@handles("node.extracted")
def _node_extracted(conn: sqlite3.Connection, event: Event) -> None:
    """A new node: pending, or suppressed when it did not pass the knowledge bar."""
    node = event.payload["node"]
    _insert_node(conn, node, "suppressed" if node.get("suppressed") else "pending", event.ts)


@handles("node.merged")
def _node_merged(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    if p.get("node"):  # the merged node was never stored: keep it on record as merged
        _insert_node(conn, p["node"], "merged", event.ts, merged_into=p["into"])
    else:
        conn.execute(
            "UPDATE nodes SET status='merged', merged_into=?, updated_at=? WHERE node_id=?",
            (p["into"], event.ts, p["merged"]),
        )


@handles("node.superseded")
def _node_superseded(conn: sqlite3.Connection, event: Event) -> None:
    """A pending or suppressed warm node a cold-tier node restated: kept, out of the queue,
    pointing at its successor. A node a reviewer decided in the meantime stays as it is."""
    p = event.payload
    conn.execute(
        "UPDATE nodes SET status='superseded', superseded_by=?, updated_at=? WHERE node_id=?"
        " AND status IN ('pending', 'suppressed')",
        (p["by"], event.ts, p["node_id"]),
    )


@handles("session.cold_extracted")
def _session_cold_extracted(conn: sqlite3.Connection, event: Event) -> None:
    """Which model and prompt version last read a session's transcript (which content)."""
    p = event.payload
    previous = conn.execute(
        "SELECT runs FROM cold_extractions WHERE session_id=?", (p["session_id"],)
    ).fetchone()
    conn.execute(
        "INSERT OR REPLACE INTO cold_extractions(session_id, digest, model, prompt_version,"
        " extracted_at, windows, failed_windows, nodes_added, superseded, runs)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            p["session_id"],
            p["digest"],
            p["model"],
            p["prompt_version"],
            event.ts,
            p["windows"],
            p["failed_windows"],
            p["nodes_added"],
            p["superseded"],
            (previous[0] if previous else 0) + 1,
        ),
    )


@handles(
    "node.approved",
    "node.rejected",
    "node.edited",
    "node.rescoped",
    "node.reopened",
    "node.unsuppressed",
)
def _node_decided(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    after = resolved(conn, p["after"])
    sets = ", ".join(f"{field}=?" for field in after)
    decided = event.type in ("node.approved", "node.rejected")
    conn.execute(
        f"UPDATE nodes SET {sets}, updated_at=?, decided_at=?, decided_by=? WHERE node_id=?",
        (
            *after.values(),
            event.ts,
            event.ts if decided else _kept(conn, p, "decided_at"),
            event.actor if decided else _kept(conn, p, "decided_by"),
            p["node_id"],
        ),
    )
    conn.execute(
        "INSERT INTO audit(seq, ts, actor, action, node_id, before, after, reason, batch)"
        " VALUES (?,?,?,?,?,?,?,?,?)",
        (
            event.seq,
            event.ts,
            event.actor,
            event.type.split(".", 1)[1],
            p["node_id"],
            json.dumps(resolved(conn, p["before"]), sort_keys=True),
            json.dumps(after, sort_keys=True),
            text_of(conn, p.get("reason", "")),
            p.get("batch", ""),
        ),
    )


def _kept(conn: sqlite3.Connection, payload: dict[str, Any], field: str) -> str:
    if payload["after"].get("status") in ("pending", "suppressed"):
        return ""  # reopened (or back below the bar): no longer decided
    row = conn.execute(
        f"SELECT {field} FROM nodes WHERE node_id=?", (payload["node_id"],)
    ).fetchone()
    return str(row[0]) if row else ""


@handles("node.forgotten")
def _node_forgotten(conn: sqlite3.Connection, event: Event) -> None:
    """Out of every queue and pattern for good; its texts read as erased (their blobs are
    tombstones by now). Recorded in the audit like a decision, with the reason."""
    p = event.payload
    row = conn.execute("SELECT status FROM nodes WHERE node_id=?", (p["node_id"],)).fetchone()
    if row is None:
        return
    conn.execute(
        "UPDATE nodes SET status='forgotten', summary=?, evidence=?, reason=?, updated_at=?,"
        " decided_at=?, decided_by=? WHERE node_id=?",
        (ERASED, ERASED, p.get("reason", ""), event.ts, event.ts, event.actor, p["node_id"]),
    )
    conn.execute(
        "INSERT INTO audit(seq, ts, actor, action, node_id, before, after, reason, batch)"
        " VALUES (?,?,?,?,?,?,?,?,?)",
        (
            event.seq,
            event.ts,
            event.actor,
            "forgotten",
            p["node_id"],
            json.dumps({"status": row[0]}),
            json.dumps({"status": "forgotten"}),
            p.get("reason", ""),
            p.get("batch", ""),
        ),
    )
