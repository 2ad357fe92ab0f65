"""Projections for patterns, the retrieval log and graduation drafts (see `store.projections`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from store.content import resolved, text_of
from store.models import Event
from store.projections import Projection

projection = Projection("patterns")
handles = projection.handles

_PATTERN_COLUMNS = (
    "pattern_id, kind, polarity, title, summary, trigger, steps, resolution, severity, scope,"
    " project, classifier, base_confidence, confidence, members, sessions, developers,"
    " first_seen, last_seen, status, retrieval_count, last_retrieved_at, skill_name,"
    " fingerprint, created_at, updated_at, flaw"
)


@handles("pattern.consolidated")
def _consolidated(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    for pattern_id in p.get("dissolved", []):
        conn.execute(
            "UPDATE patterns SET status='dissolved', updated_at=? WHERE pattern_id=?"
            " AND status != 'graduated'",
            (event.ts, pattern_id),
        )
    for record in p.get("patterns", []):
        _upsert_pattern(conn, record, event.ts)


def _upsert_pattern(conn: sqlite3.Connection, record: dict[str, Any], ts: str) -> None:
    r = resolved(conn, record)  # texts are blob references since schema 9
    steps = [resolved(conn, s) for s in record.get("steps", [])]
    old = conn.execute(
        "SELECT status, retrieval_count, last_retrieved_at, skill_name, created_at"
        " FROM patterns WHERE pattern_id=?",
        (r["pattern_id"],),
    ).fetchone()
    status = r["status"]
    if old is not None and old[0] == "graduated":
        status = "graduated"
    conn.execute(
        f"INSERT OR REPLACE INTO patterns({_PATTERN_COLUMNS})"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            r["pattern_id"],
            r["kind"],
            r["polarity"],
            r["title"],
            r["summary"],
            r["trigger"],
            json.dumps(steps, sort_keys=True, ensure_ascii=False),
            r["resolution"],
            r["severity"],
            r["scope"],
            r["project"],
            r["classifier"],
            float(r["base_confidence"]),
            float(r["confidence"]),
            len(r["members"]),
            int(r["sessions"]),
            int(r["developers"]),
            r["first_seen"],
            r["last_seen"],
            status,
            old[1] if old else 0,
            old[2] if old else "",
            old[3] if old else "",
            r.get("fingerprint", ""),
            old[4] if old else ts,
            ts,
            str(r.get("flaw", "")),  # since schema 12; earlier records were never judged
        ),
    )
    conn.execute("DELETE FROM pattern_members WHERE pattern_id=?", (r["pattern_id"],))
    conn.executemany(
        "INSERT INTO pattern_members(pattern_id, node_id, session_id) VALUES (?,?,?)",
        [(r["pattern_id"], node_id, session_id) for node_id, session_id in r["members"]],
    )


@handles("pattern.decayed")
def _decayed(conn: sqlite3.Connection, event: Event) -> None:
    for update in event.payload["updates"]:
        conn.execute(
            "UPDATE patterns SET confidence=?, status=CASE WHEN status IN ('active', 'decayed')"
            " THEN ? ELSE status END, updated_at=? WHERE pattern_id=?",
            (float(update["confidence"]), update["status"], event.ts, update["pattern_id"]),
        )


@handles("retrieval.logged")
def _retrieval(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "INSERT OR REPLACE INTO retrievals(seq, ts, actor, tool, query, project, session_id)"
        " VALUES (?,?,?,?,?,?,?)",
        (
            event.seq,
            event.ts,
            event.actor,
            p["tool"],
            text_of(conn, p["query"]),  # a reference once `forget` redacted it
            p.get("project", ""),
            p.get("session_id", ""),
        ),
    )
    hits = [
        (event.seq, int(rank), kind, item, float(score)) for kind, item, rank, score in p["hits"]
    ]
    conn.executemany(
        "INSERT OR REPLACE INTO retrieval_hits(seq, rank, kind, item_id, score) VALUES (?,?,?,?,?)",
        hits,
    )
    nodes = [(event.ts, h[3]) for h in hits if h[2] == "node"]
    conn.executemany(
        "UPDATE nodes SET retrieval_count=retrieval_count+1, last_retrieved_at=? WHERE node_id=?",
        nodes,
    )
    # A retrieval restarts the decay clock: the pattern is back at its base confidence.
    patterns = [(event.ts, h[3]) for h in hits if h[2] == "pattern"]
    conn.executemany(
        "UPDATE patterns SET retrieval_count=retrieval_count+1, last_retrieved_at=?1,"
        " confidence=base_confidence,"
        " status=CASE WHEN status='decayed' THEN 'active' ELSE status END WHERE pattern_id=?2",
        patterns,
    )


@handles("retrieval.repeated")
def _repeated(conn: sqlite3.Connection, event: Event) -> None:
    """Repeats of logged retrievals (a roll-up, see `store.patterns.retrieval_log`): each
    counts as the retrieval it repeats, made at `last`."""
    for seq, calls, last in event.payload["repeats"]:
        conn.execute(
            "UPDATE retrievals SET calls=calls+?1, last_at=max(last_at, ?2) WHERE seq=?3",
            (int(calls), last, int(seq)),
        )
        hits = conn.execute(
            "SELECT kind, item_id FROM retrieval_hits WHERE seq=? ORDER BY rank", (int(seq),)
        ).fetchall()
        conn.executemany(
            "UPDATE nodes SET retrieval_count=retrieval_count+?1,"
            " last_retrieved_at=max(last_retrieved_at, ?2) WHERE node_id=?3",
            [(int(calls), last, item) for kind, item in hits if kind == "node"],
        )
        conn.executemany(
            "UPDATE patterns SET retrieval_count=retrieval_count+?1,"
            " last_retrieved_at=max(last_retrieved_at, ?2), confidence=base_confidence,"
            " status=CASE WHEN status='decayed' THEN 'active' ELSE status END"
            " WHERE pattern_id=?3",
            [(int(calls), last, item) for kind, item in hits if kind == "pattern"],
        )


@handles("pattern.drafted")
def _drafted(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    # Since schema 15 a draft also records its write gate: the text before its transient
    # literals became parameters, the replacements, and its regression cases.
    conn.execute(
        "INSERT OR REPLACE INTO drafts(draft_id, pattern_id, name, content_hash, citations,"
        " status, created_at, created_by, literal_hash, parameters, kept, regressions)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,'[]',?)",
        (
            p["draft_id"],
            p["pattern_id"],
            p["name"],
            p["content_hash"],
            json.dumps(p["citations"], sort_keys=True, ensure_ascii=False),
            "pending",
            event.ts,
            event.actor,
            p.get("literal_hash", ""),  # "" (before schema 15): the content is as learned
            json.dumps(p.get("parameters", []), sort_keys=True, ensure_ascii=False),
            json.dumps(p.get("regressions", []), sort_keys=True, ensure_ascii=False),
        ),
    )


@handles("pattern.draft_rejected")
def _draft_rejected(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "UPDATE drafts SET status='rejected', decided_at=?, decided_by=?, reason=?"
        " WHERE draft_id=?",
        (event.ts, event.actor, text_of(conn, p.get("reason", "")), p["draft_id"]),
    )


@handles("pattern.graduated")
def _graduated(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    conn.execute(
        "UPDATE drafts SET status='approved', decided_at=?, decided_by=?, path=? WHERE draft_id=?",
        (event.ts, event.actor, p["path"], p["draft_id"]),
    )
    conn.execute(
        "UPDATE patterns SET status='graduated', skill_name=?, updated_at=? WHERE pattern_id=?",
        (p["skill_name"], event.ts, p["pattern_id"]),
    )
    if p.get("skill_id"):  # since schema 15: the manifest names who approved it
        conn.execute(
            "UPDATE skills SET approved_by=? WHERE skill_id=?", (event.actor, int(p["skill_id"]))
        )


@handles("skill.outcome_recorded")
def _outcome(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    # An outcome inferred from a transcript happened when the skill ran (`at`), not when
    # the session was ingested: health windows count it then.
    ts = str(p.get("at") or event.ts)
    conn.execute(
        "INSERT OR REPLACE INTO outcomes(seq, ts, actor, skill_id, version_no, success,"
        " session_id, detail, inferred) VALUES (?,?,?,?,?,?,?,?,?)",
        (
            event.seq,
            ts,
            event.actor,
            int(p["skill_id"]),
            int(p.get("version_no", 0)),
            1 if p["success"] else 0,
            p.get("session_id", ""),
            text_of(conn, p.get("detail", "")),
            1 if p.get("inferred") else 0,
        ),
    )
    column = "success" if p["success"] else "failure"
    conn.execute(
        f"UPDATE skills SET {column}_count={column}_count+1, last_{column}_at=CASE WHEN"
        f" last_{column}_at IS NULL OR last_{column}_at < ?1 THEN ?1 ELSE last_{column}_at END"
        " WHERE skill_id=?2",
        (ts, int(p["skill_id"])),
    )
