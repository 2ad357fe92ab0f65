"""The append-only, hash-chained event log: the source of truth for every projection."""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from json.encoder import c_encode_basestring, py_encode_basestring  # type: ignore[attr-defined]
from typing import Any

from store.models import Event
from store.projectors import apply_event, apply_events

GENESIS_HASH = "0" * 64


#: `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` made once
#: (`json.dumps` builds an encoder on every call with options: the same output, less work).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
#: A JSON string literal, UTF-8 kept (what `json.dumps(text, ensure_ascii=False)` gives).
_quote = py_encode_basestring if c_encode_basestring is None else c_encode_basestring


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no spaces, UTF-8 kept."""
    return _CANONICAL.encode(value)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def running_clock(start: str) -> Callable[[], str]:
    """A clock that reads `start` now and moves on in real time from there (monotonic): a
    library that lives at its own date (the demo, see `tooling.demo.build`) keeps its story's "now"
    whatever today's date is."""
    moment = datetime.fromisoformat(start)
    began = time.monotonic()

    def tick() -> str:
        elapsed = timedelta(seconds=time.monotonic() - began)
        return (moment + elapsed).isoformat(timespec="microseconds")

    return tick


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
    body = (
        f'{{"actor":{_quote(actor)},"payload":{payload_json},"subject":{_quote(subject)},'
        f'"ts":{_quote(ts)},"type":{_quote(type_)}}}'
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


def append_many(
    conn: sqlite3.Connection,
    entries: Sequence[tuple[str, str, dict[str, Any]]],
    actor: str,
    clock: Callable[[], str] | None = None,
) -> list[Event]:
    """Append (type, subject, payload) entries in order, as `append` one by one would (the
    same sequence numbers, stamps from `clock` and hashes), with one read of the chain's tail
    and one INSERT for all; then the projections, in order. Call inside a write transaction;
    no projection reads the log, so it makes no difference that they run after the rows."""
    row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    seq, prev = (int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)
    rows: list[tuple[int, str, str, str, str, str, str, str]] = []
    made: list[Event] = []
    for type_, subject, payload in entries:
        seq += 1
        stamp = clock() if clock is not None else now_iso()
        payload_json = canonical_json(payload)
        digest = _hash_canonical(prev, stamp, type_, actor, subject, payload_json)
        rows.append((seq, stamp, type_, actor, subject, payload_json, prev, digest))
        made.append(Event(seq, stamp, type_, actor, subject, payload, prev, digest))
        prev = digest
    conn.executemany(
        "INSERT INTO events(seq, ts, type, actor, subject, payload, prev_hash, hash)"
        " VALUES (?,?,?,?,?,?,?,?)",
        rows,
    )
    apply_events(conn, made)
    return made


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
