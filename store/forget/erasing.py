"""Doing a forget: tombstones, redactions of old events, the `blob.erased` and
`node.forgotten` events, a replay of every projection, and a scrub of the database files (see
`store.forget`)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections import Counter
from typing import TYPE_CHECKING, Any

from store.content import archive_rows, is_ref, store_text, text_digest
from store.events import canonical_json, event_hash, iter_events
from store.forget.planning import Found, plan
from store.forget.slots import PayloadPath, set_path
from store.ingest.redact import redact
from store.migrations import PROJECTION_TABLES
from store.models import ForgetReport
from store.projections import store_blob
from store.projectors import apply_event
from store.skills.surface import text_hash

if TYPE_CHECKING:
    from store.kernel import Kernel


def forget(
    library: Kernel,
    scope: str,
    target: str,
    *,
    reason: str = "",
    regex: bool = False,
    ignore_case: bool = False,
    with_messages: bool = False,
) -> ForgetReport:
    """Erase what `plan` finds in one transaction and record it, rebuild the projections
    from the log, and scrub the database files."""
    options = {"regex": regex, "ignore_case": ignore_case, "with_messages": with_messages}
    with library.db.lock:
        library.db.conn.execute("PRAGMA secure_delete=ON")  # freed space is zeroed
        try:
            with library.db.write() as conn:
                found = plan(conn, scope, target, **options)
                if found.plan.empty:
                    return ForgetReport(found.plan, 0, 0, 0, 0, False)
                seq, blobs, redacted = _erase(library, conn, found, reason)
                vectors = _drop_vectors(conn, found)
                _replay(conn)
        finally:
            library.db.conn.execute("PRAGMA secure_delete=OFF")
        library.memory_epoch += 1
        scrubbed, notes = scrub(library)
    # The report says what went and where, never what it said.
    items = tuple(dataclasses.replace(i, preview="") for i in found.plan.items)
    done = dataclasses.replace(found.plan, items=items)
    return ForgetReport(done, seq, blobs, redacted, vectors, scrubbed, notes)


def _erase(
    library: Kernel, conn: sqlite3.Connection, found: Found, reason: str
) -> tuple[int, int, int]:
    """Tombstones and redactions, recorded by one `blob.erased` event, then one
    `node.forgotten` per node; returns (event seq, blobs erased, events redacted)."""
    erased, replaced, edits = _targets(conn, found)
    payloads, redactions = _redact(conn, edits)
    reason = redact(reason)  # the secret being forgotten, quoted in the reason by mistake
    plan_ = found.plan
    subject = {"node": "node:", "session": "session:"}.get(plan_.scope, "forget:text")
    event = library.append_event(
        conn,
        "blob.erased",
        subject + plan_.target,
        {
            "scope": plan_.scope,
            "target": plan_.target,
            "reason": reason,
            "erased": sorted(erased),
            "replaced": sorted([old, new] for old, new in replaced.items()),
            "redacted": redactions,
            "nodes": list(plan_.nodes),
            "sessions": list(plan_.sessions),
            "patterns": list(plan_.patterns),
            "counts": dict(Counter(item.what for item in plan_.items)),
        },
    )
    for seq, payload in payloads.items():  # allowed now that `redactions` records them
        conn.execute("UPDATE events SET payload=? WHERE seq=?", (payload, seq))
    for node_id in plan_.nodes:
        library.append_event(
            conn,
            "node.forgotten",
            f"node:{node_id}",
            {"node_id": node_id, "reason": reason, "batch": f"forget:{event.seq}"},
        )
    return event.seq, len(erased) + len(replaced), len(payloads)


def _targets(
    conn: sqlite3.Connection, found: Found
) -> tuple[set[str], dict[str, str], dict[int, list[tuple[PayloadPath, str]]]]:
    """(blobs to erase, old archives -> their rewrite, inline text to redact by event)."""
    erased = {s.ref for s in found.slots if s.ref}
    replaced: dict[str, str] = {}
    for archive in sorted({s.archive for s in found.slots if s.archive}):
        rows = [s for s in found.slots if s.archive == archive]
        replaced[archive], refs = _rewrite_archive(conn, archive, rows[0].owner)
        erased |= {refs[int(s.path[1])] for s in rows}
    edits: dict[int, list[tuple[PayloadPath, str]]] = {}
    for s in found.slots:
        if not s.ref and not s.archive:
            digest = text_digest(s.owner, s.text)  # the tombstone a reference will name
            erased.add(digest)
            edits.setdefault(s.seq, []).append((s.path, digest))
    return erased, replaced, edits


def _rewrite_archive(
    conn: sqlite3.Connection, archive: str, owner: str
) -> tuple[str, dict[int, str]]:
    """An old archive (texts inline) again, each text in a blob of the session."""
    rows = archive_rows(conn, archive)
    refs: dict[int, str] = {}
    stored = []
    for i, row in enumerate(rows):
        value = store_text(conn, owner, row[6]) if isinstance(row[6], str) else row[6]
        if is_ref(value):
            refs[i] = value["blob"]
        stored.append([*row[:6], value, *row[7:]])
    return store_blob(conn, json.dumps(stored, ensure_ascii=False)), refs


def _redact(
    conn: sqlite3.Connection, edits: dict[int, list[tuple[PayloadPath, str]]]
) -> tuple[dict[int, str], list[dict[str, Any]]]:
    """New payloads for old events (text replaced by tombstone references) and the records
    that let the chain accept them."""
    payloads: dict[int, str] = {}
    records: list[dict[str, Any]] = []
    for seq in sorted(edits):
        ts, type_, actor, subject, payload, prev, digest = conn.execute(
            "SELECT ts, type, actor, subject, payload, prev_hash, hash FROM events WHERE seq=?",
            (seq,),
        ).fetchone()
        data = json.loads(payload)
        for path, blob in edits[seq]:
            set_path(data, path, {"blob": blob})
        text = canonical_json(data)
        payloads[seq] = text
        records.append(
            {
                "seq": seq,
                "hash": digest,
                "redacted_hash": event_hash(prev, ts, type_, actor, subject, text),
            }
        )
    return payloads, records


def _drop_vectors(conn: sqlite3.Connection, found: Found) -> int:
    """Cached embeddings of forgotten node texts (dedup and memory embed "TYPE: summary").
    A live node with the very same text simply has its vector computed again."""
    hashes = set()
    for slot in found.slots:
        if slot.owner.startswith("node:") and slot.what == "summary":
            row = conn.execute(
                "SELECT type FROM nodes WHERE node_id=?", (slot.owner.removeprefix("node:"),)
            ).fetchone()
            if row:
                hashes.add(text_hash(f"{row[0]}: {slot.text}"))
    dropped = 0
    for digest in sorted(hashes):
        dropped += conn.execute("DELETE FROM embeddings WHERE text_hash=?", (digest,)).rowcount
    return dropped


def _replay(conn: sqlite3.Connection) -> None:
    """Every projection again from the log: the live tables are what a replay gives."""
    for table in PROJECTION_TABLES:
        conn.execute(f"DELETE FROM {table}")
    for event in list(iter_events(conn)):
        apply_event(conn, event)


def scrub(library: Kernel) -> tuple[bool, tuple[str, ...]]:
    """Leave no erased bytes in the database files: checkpoint and truncate the WAL, vacuum,
    and truncate again. False (with a note) when another process held the WAL open."""
    notes: list[str] = []
    conn = library.db.conn
    with library.db.lock:
        busy = int(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
        try:
            conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            notes.append(f"VACUUM failed ({exc}); freed pages were zeroed by secure_delete")
            busy = 1
        busy |= int(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
    if busy:
        notes.append(
            "another process has the library open, so the write-ahead log may still hold old"
            " pages: close it and run `librarian forget scrub`"
        )
    return not busy, tuple(notes)
