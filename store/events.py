"""The append-only, hash-chained event log: the source of truth for every projection."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from store.models import Event
from store.projectors import apply_event

GENESIS_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def event_hash(
    prev_hash: str, ts: str, type_: str, actor: str, subject: str, payload_json: str
) -> str:
    """SHA-256 over the previous hash and the canonical JSON of the rest of the event."""
    body = canonical_json(
        {
            "ts": ts,
            "type": type_,
            "actor": actor,
            "subject": subject,
            "payload": json.loads(payload_json),
        }
    )
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def _hash_canonical(
    prev_hash: str, ts: str, type_: str, actor: str, subject: str, payload_json: str
) -> str:
    """`event_hash` for a payload already in canonical JSON, without parsing it again: the
    canonical body is the sorted keys actor, payload, subject, ts, type."""
    dump = json.dumps
    body = (
        f'{{"actor":{dump(actor, ensure_ascii=False)},"payload":{payload_json},'
        f'"subject":{dump(subject, ensure_ascii=False)},"ts":{dump(ts, ensure_ascii=False)},'
        f'"type":{dump(type_, ensure_ascii=False)}}}'
    )
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def append(
    conn: sqlite3.Connection,
    type_: str,
    subject: str,
    payload: dict[str, Any],
    actor: str,
    ts: str | None = None,
) -> Event:
    """Append one event and update the projections; call inside a write transaction."""
    row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    seq = (row[0] + 1) if row else 1
    prev = row[1] if row else GENESIS_HASH
    stamp = ts or now_iso()
    payload_json = canonical_json(payload)
    digest = _hash_canonical(prev, stamp, type_, actor, subject, payload_json)
    conn.execute(
        "INSERT INTO events(seq, ts, type, actor, subject, payload, prev_hash, hash)"
        " VALUES (?,?,?,?,?,?,?,?)",
        (seq, stamp, type_, actor, subject, payload_json, prev, digest),
    )
    event = Event(seq, stamp, type_, actor, subject, payload, prev, digest)
    apply_event(conn, event)
    return event


def iter_events(conn: sqlite3.Connection, after: int = 0) -> Iterator[Event]:
    cursor = conn.execute(
        "SELECT seq, ts, type, actor, subject, payload, prev_hash, hash FROM events"
        " WHERE seq > ? ORDER BY seq",
        (after,),
    )
    for seq, ts, type_, actor, subject, payload, prev, digest in cursor:
        yield Event(seq, ts, type_, actor, subject, json.loads(payload), prev, digest)


def redactions(conn: sqlite3.Connection) -> dict[int, tuple[str, str]]:
    """Events redacted by `forget`: seq -> (hash as appended, hash over the redacted payload),
    as recorded by a later `blob.erased` event, itself a link of the chain."""
    found: dict[int, tuple[str, str]] = {}
    cursor = conn.execute("SELECT seq, payload FROM events WHERE type='blob.erased' ORDER BY seq")
    for by_seq, payload in cursor:
        try:
            records = json.loads(payload).get("redacted", [])
            found.update(
                {
                    int(r["seq"]): (str(r["hash"]), str(r["redacted_hash"]))
                    for r in records
                    if int(r["seq"]) < by_seq
                }
            )
        except (json.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
            continue  # a damaged record vouches for nothing (and breaks its own link)
    return found


def check_chain(conn: sqlite3.Connection) -> list[str]:
    """Problems with the hash chain; empty when every link holds. An event `forget` redacted
    keeps its original hash (the links stay); its payload must hash as the redaction says."""
    redacted = redactions(conn)
    problems: list[str] = []
    prev = GENESIS_HASH
    expected_seq = 1
    cursor = conn.execute(
        "SELECT seq, ts, type, actor, subject, payload, prev_hash, hash FROM events ORDER BY seq"
    )
    for seq, ts, type_, actor, subject, payload, prev_hash, digest in cursor:
        if seq != expected_seq:
            problems.append(f"event {seq}: sequence gap (expected {expected_seq})")
        if prev_hash != prev:
            problems.append(f"event {seq}: prev_hash does not match event {seq - 1}")
        try:
            recomputed = event_hash(prev_hash, ts, type_, actor, subject, payload)
        except json.JSONDecodeError:
            problems.append(f"event {seq}: payload is not valid JSON")
            recomputed = ""
        if recomputed != digest and redacted.get(seq) != (digest, recomputed):
            problems.append(f"event {seq} ({type_}): hash does not match its content")
        prev = digest
        expected_seq = seq + 1
        if len(problems) >= 20:
            problems.append("… more problems not listed")
            break
    return problems


def stepping_clock(
    start: str = "2026-11-02T09:00:00+00:00", step_seconds: float = 60.0
) -> Callable[[], str]:
    """A deterministic clock for tests and screenshots: each call is `step_seconds` later."""
    moment = datetime.fromisoformat(start)
    calls = itertools.count()

    def tick() -> str:
        return (moment + timedelta(seconds=step_seconds * next(calls))).isoformat(
            timespec="microseconds"
        )

    return tick


def retrieval_payload(
    tool: str,
    query: str,
    hits: Sequence[tuple[str, str, int, float]],
    project: str = "",
    session_id: str = "",
) -> dict[str, Any]:
    """The payload of a `retrieval.logged` event: the query and (kind, id, rank, score) hits."""
    return {
        "tool": tool,
        "query": query[:2000],
        "project": project,
        "session_id": session_id,
        "hits": [[k, i, int(r), round(float(s), 4)] for k, i, r, s in hits],
    }
