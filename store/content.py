"""Transcript-derived text in content-addressed blobs, so that `forget` can erase it.

Events written since schema 9 do not carry quoted text (message text, node summaries and
evidence, review summaries and reasons, pattern texts): they carry a reference
`{"blob": "<sha256>"}` to a row of `blobs`, and the hash chain covers the hash. Each such
blob belongs to one owner (`session:<id>`, `node:<id>`, `pattern:<id>`): its content is the
canonical JSON `{"owner": ..., "text": ...}`, so erasing one node's summary never touches a
node elsewhere that happens to say the same words.

An erased blob keeps its row as a tombstone (empty content, when, why, by which event): a
reference to it reads as `ERASED`, and writing the same content again leaves it erased.
Events from before schema 9 carry their text inline; projections read both forms.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from json.encoder import c_encode_basestring, py_encode_basestring  # type: ignore[attr-defined]
from typing import Any

from store.models import ERASED
from store.models.events import EventType

#: Payload keys that hold quoted text in node events (node records, before/after, reason).
NODE_TEXT_KEYS = ("summary", "evidence", "reason")
#: Text fields of a pattern record (plus each step's "text").
PATTERN_TEXT_KEYS = ("title", "summary", "trigger", "resolution")
#: A JSON string literal, UTF-8 kept (what `json.dumps(text, ensure_ascii=False)` gives).
_quote = py_encode_basestring if c_encode_basestring is None else c_encode_basestring
#: Every column of `blobs`, in order (a scratch replay copies the tombstones too).
BLOB_COLUMNS = "hash, text, erased_at, erased_seq, erased_reason, replaced_by"


def envelope(owner: str, text: str) -> str:
    """The canonical JSON `{"owner": owner, "text": text}` (sorted keys, no spaces, UTF-8
    kept), written out directly: `json.dumps` with options builds an encoder per call."""
    return f'{{"owner":{_quote(owner)},"text":{_quote(text)}}}'


def text_digest(owner: str, text: str) -> str:
    """The hash `store_text` would give this text (nothing is written)."""
    return hashlib.sha256(envelope(owner, text).encode("utf-8")).hexdigest()


def is_ref(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("blob"), str)


def store_text(conn: sqlite3.Connection, owner: str, text: str) -> Any:
    """A reference to `text` kept for `owner` (empty text stays inline: nothing to forget).
    An erased blob stays erased: the same content written again does not revive it."""
    if not text:
        return text
    body = envelope(owner, text)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    conn.execute("INSERT OR IGNORE INTO blobs(hash, text) VALUES (?,?)", (digest, body))
    return {"blob": digest}


#: Blobs `text_of` may answer without reading them (see `known_texts`).
_KNOWN: ContextVar[Mapping[str, str] | None] = ContextVar("known_texts", default=None)


@contextmanager
def known_texts(texts: Mapping[str, str]) -> Iterator[None]:
    """Inside the block, `text_of` answers the blobs of `texts` (digest → text) from it: blobs
    a caller has just written in this transaction and checked are not erased (a batch writes
    its texts, then its events, whose projections read them back)."""
    token = _KNOWN.set(texts)
    try:
        yield
    finally:
        _KNOWN.reset(token)


def text_of(conn: sqlite3.Connection, value: Any) -> str:
    """The text a payload value stands for: inline text as is, a reference resolved
    (`ERASED` when erased, "" when the blob is missing: `verify` reports that)."""
    if not is_ref(value):
        return "" if value is None else str(value)
    known = _KNOWN.get()
    if known is not None:
        found = known.get(value["blob"])
        if found is not None:
            return found
    row = conn.execute(
        "SELECT text, erased_at FROM blobs WHERE hash=?", (value["blob"],)
    ).fetchone()
    if row is None:
        return ""
    if row[1]:
        return ERASED
    value = _load(row[0])
    return str(value.get("text", "")) if isinstance(value, dict) else ""


def _load(text: str) -> Any:
    """A blob's JSON; {} when it is damaged (`verify` reports the hash that no longer
    matches, and a replay must not stop at it)."""
    try:
        value = json.loads(text or "null")
    except json.JSONDecodeError:
        return {}
    return value if value is not None else {}


def is_erased(conn: sqlite3.Connection, digest: str) -> bool:
    row = conn.execute("SELECT erased_at FROM blobs WHERE hash=?", (digest,)).fetchone()
    return bool(row and row[0])


def with_refs(
    conn: sqlite3.Connection, owner: str, values: dict[str, Any], keys: tuple[str, ...]
) -> dict[str, Any]:
    """`values` with the text under `keys` stored as references."""
    return {
        k: store_text(conn, owner, v) if k in keys and isinstance(v, str) else v
        for k, v in values.items()
    }


def resolved(conn: sqlite3.Connection, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with every reference replaced by its text."""
    return {k: text_of(conn, v) if is_ref(v) else v for k, v in values.items()}


def pattern_refs(conn: sqlite3.Connection, record: dict[str, Any]) -> dict[str, Any]:
    """A `pattern.consolidated` record with its texts stored as references."""
    owner = f"pattern:{record['pattern_id']}"
    out = with_refs(conn, owner, record, PATTERN_TEXT_KEYS)
    out["steps"] = [with_refs(conn, owner, dict(s), ("text",)) for s in record.get("steps", [])]
    return out


# -- the session archive ---------------------------------------------------------------------
#
# A session's messages are one archive blob: a JSON list of rows
# [idx, file, line_start, line_end, role, kind, text, ts, is_error]. Since schema 9 `text` is
# a reference to a blob of the session; before, it was inline. When `forget` erases a message
# of an old archive it writes the archive again with references and marks the old one
# `replaced_by` the new one.


def archive_rows(conn: sqlite3.Connection, digest: str) -> list[list[Any]]:
    """The rows of an archive blob (following replacements), texts as stored."""
    seen: set[str] = set()
    while digest and digest not in seen:
        seen.add(digest)
        row = conn.execute(
            "SELECT text, erased_at, replaced_by FROM blobs WHERE hash=?", (digest,)
        ).fetchone()
        if row is None:
            return []
        if not row[1]:
            rows = _load(row[0])
            return (
                [r for r in rows if isinstance(r, list) and len(r) >= 9]
                if isinstance(rows, list)
                else []
            )
        digest = row[2]
    return []


def message_rows(conn: sqlite3.Connection, digest: str) -> list[list[Any]]:
    """The archive's rows with every text resolved (erased ones as `ERASED`)."""
    return [[*r[:6], text_of(conn, r[6]), *r[7:]] for r in archive_rows(conn, digest)]


def erased_positions(conn: sqlite3.Connection, session_id: str) -> dict[tuple[str, int, int], str]:
    """(file, line_start, line_end) of the session's erased messages -> the erased blob.
    Re-ingesting the session keeps them erased, whatever the transcript says now."""
    row = conn.execute(
        "SELECT messages_hash FROM sessions WHERE session_id=?", (session_id,)
    ).fetchone()
    if row is None:
        return {}
    found: dict[tuple[str, int, int], str] = {}
    for r in archive_rows(conn, str(row[0])):
        if is_ref(r[6]) and is_erased(conn, r[6]["blob"]):
            found[(str(r[1]), int(r[2]), int(r[3]))] = r[6]["blob"]
    return found


# -- what `verify` checks -----------------------------------------------------------------------


def references(value: Any) -> list[str]:
    """Every blob reference inside a payload value."""
    if is_ref(value):
        return [value["blob"]]
    if isinstance(value, dict):
        return [h for v in value.values() for h in references(v)]
    if isinstance(value, list):
        return [h for v in value for h in references(v)]
    return []


def missing_references(conn: sqlite3.Connection) -> list[str]:
    """Blobs the log refers to (texts, session archives and their messages, drafts) that are
    not stored at all; an erased blob keeps its row, so it is never missing."""
    stored = {r[0] for r in conn.execute("SELECT hash FROM blobs")}
    wanted: dict[str, str] = {}
    cursor = conn.execute(
        "SELECT seq, type, payload FROM events WHERE type LIKE 'node.%' OR type IN"
        " ('session.ingested', 'pattern.consolidated', 'pattern.drafted') ORDER BY seq"
    )
    for seq, type_, payload in cursor:
        data = _load(payload)  # damaged JSON is the hash chain's finding
        if not isinstance(data, dict):
            continue
        found = references(data)
        if type_ == EventType.SESSION_INGESTED:
            found.append(str(data.get("messages_hash", "")))
            found += references(archive_rows(conn, str(data.get("messages_hash", ""))))
        elif type_ == EventType.PATTERN_DRAFTED:
            found.append(str(data.get("content_hash", "")))
        for digest in found:
            if digest not in stored:
                wanted.setdefault(digest, f"event {seq} ({type_})")
    return [f"blob {h[:12]} is missing (referenced by {where})" for h, where in wanted.items()]


def erase_records(conn: sqlite3.Connection) -> set[str]:
    """Blobs the log says `forget` erased (or replaced with a copy without the erased text)."""
    found: set[str] = set()
    for (payload,) in conn.execute("SELECT payload FROM events WHERE type='blob.erased'"):
        data = _load(payload)
        if isinstance(data, dict):
            found.update(str(h) for h in data.get("erased", []))
            found.update(str(pair[0]) for pair in data.get("replaced", []) if pair)
    return found
