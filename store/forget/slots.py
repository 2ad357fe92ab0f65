"""Where quoted text lives in a library, read from the event log: archived messages, node
texts (extraction, merges, review decisions), pattern records and drafts, outcome details and
retrieval queries. Each place is a `Slot`; places already erased are left out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from store.content import (
    NODE_TEXT_KEYS,
    PATTERN_TEXT_KEYS,
    archive_rows,
    is_erased,
    is_ref,
    text_of,
)
from store.models.events import EventType
from store.projections import blob_text

_DECISIONS = (
    EventType.NODE_APPROVED,
    EventType.NODE_REJECTED,
    EventType.NODE_EDITED,
    EventType.NODE_RESCOPED,
    EventType.NODE_REOPENED,
)

PayloadPath = tuple[str | int, ...]

#: Where a `team.received` event carries a pulled node's texts.
_RECEIVED_TEXTS: tuple[PayloadPath, ...] = (
    ("summary",),
    ("reason",),
    ("values", "summary"),
    ("values", "reason"),
    ("node", "evidence"),
)


@dataclass(frozen=True)
class Slot:
    """One place quoted text lives: a blob, a row of an old archive, or an event payload."""

    owner: str  # "node:…", "session:…", "pattern:…", "retrieval:…", "outcome:…"
    what: str  # "message", "summary", "evidence", "reason", "pattern", "draft", ...
    text: str
    seq: int  # the event that carries it (for an archive row: the event naming the archive)
    path: PayloadPath = ()  # where in that event's payload (inline text only)
    ref: str = ""  # the blob holding it
    archive: str = ""  # the old archive blob holding it inline (row index in `path`)
    lines: tuple[str, int, int] | None = None  # an archived message's (file, start, end)

    @property
    def key(self) -> tuple[Any, ...]:
        if self.ref:
            return ("blob", self.ref)
        if self.archive:
            return ("archive", self.archive, self.path)
        return ("event", self.seq, self.path)


@dataclass
class Inventory:
    """Every place quoted text lives, read from the log; erased places are left out."""

    conn: sqlite3.Connection
    _nodes: dict[str, list[Slot]] | None = None
    _patterns: tuple[dict[str, list[Slot]], dict[str, set[str]]] | None = None

    def messages(self, session: str | None = None) -> list[Slot]:
        subject = "" if session is None else f"session:{session}"
        sql = "SELECT seq, payload FROM events WHERE type='session.ingested'"
        rows = self.conn.execute(
            sql + (" AND subject=?" if subject else "") + " ORDER BY seq",
            (subject,) if subject else (),
        ).fetchall()
        found: dict[tuple[Any, ...], Slot] = {}
        for seq, payload in rows:
            data = json.loads(payload)
            for slot in _archive_slots(self.conn, seq, data):
                found.setdefault(slot.key, slot)
        return list(found.values())

    def nodes(self) -> dict[str, list[Slot]]:
        """Text slots by node id (its extraction, merges and review decisions)."""
        if self._nodes is None:
            by_node: dict[str, list[Slot]] = {}
            for seq, type_, payload in self.conn.execute(
                "SELECT seq, type, payload FROM events WHERE type LIKE 'node.%'"
                " OR type = 'team.received' ORDER BY seq"
            ):
                for slot in _node_slots(self.conn, seq, type_, json.loads(payload)):
                    by_node.setdefault(slot.owner.removeprefix("node:"), []).append(slot)
            self._nodes = by_node
        return self._nodes

    def patterns(self) -> tuple[dict[str, list[Slot]], dict[str, set[str]]]:
        """Text slots by pattern id (records and drafts), and each pattern's members ever."""
        if self._patterns is None:
            slots: dict[str, list[Slot]] = {}
            members: dict[str, set[str]] = {}
            drafts: dict[str, str] = {}
            for seq, type_, payload in self.conn.execute(
                "SELECT seq, type, payload FROM events WHERE type IN ('pattern.consolidated',"
                " 'pattern.drafted', 'pattern.draft_rejected') ORDER BY seq"
            ):
                data = json.loads(payload)
                for pid, slot in _pattern_slots(self.conn, seq, type_, data, drafts):
                    slots.setdefault(pid, []).append(slot)
                for record in (
                    data.get("patterns", []) if type_ == EventType.PATTERN_CONSOLIDATED else []
                ):
                    pid = str(record["pattern_id"])
                    members.setdefault(pid, set()).update(str(m[0]) for m in record["members"])
            self._patterns = (slots, members)
        return self._patterns

    def others(self, session: str | None = None) -> list[Slot]:
        """Outcome details (of one session's outcomes, if given) and retrieval queries."""
        found: list[Slot] = []
        for seq, type_, payload in self.conn.execute(
            "SELECT seq, type, payload FROM events WHERE type IN"
            " ('skill.outcome_recorded', 'retrieval.logged') ORDER BY seq"
        ):
            data = json.loads(payload)
            if type_ == EventType.RETRIEVAL_LOGGED:
                if session is None:
                    found += _inline(f"retrieval:{seq}", "query", seq, data, ("query",))
            elif session is None or data.get("session_id") == session:
                owner = f"outcome:{seq}"
                found += _inline(owner, "outcome", seq, data, ("detail",), ("reason",))
        return found


# -- reading slots out of events ---------------------------------------------------------------


def _value_slot(
    conn: sqlite3.Connection, owner: str, what: str, seq: int, path: PayloadPath, value: Any
) -> list[Slot]:
    if is_ref(value):
        if is_erased(conn, value["blob"]):
            return []
        return [Slot(owner, what, text_of(conn, value), seq, path, ref=value["blob"])]
    if isinstance(value, str) and value:
        return [Slot(owner, what, value, seq, path)]
    return []


def _inline(
    owner: str, what: str, seq: int, data: dict[str, Any], *paths: PayloadPath
) -> list[Slot]:
    """Text an event carries inline at `paths` (outcomes and queries are never blobs)."""
    out = []
    for path in paths:
        value = get_path(data, path)
        if isinstance(value, str) and value:
            out.append(Slot(owner, what, value, seq, path))
    return out


def _archive_slots(conn: sqlite3.Connection, seq: int, data: dict[str, Any]) -> list[Slot]:
    owner = f"session:{data['session_id']}"
    digest = _current_archive(conn, str(data.get("messages_hash", "")))
    out: list[Slot] = []
    for i, row in enumerate(archive_rows(conn, digest)):
        lines = (str(row[1]), int(row[2]), int(row[3]))
        where = ("rows", i)
        if is_ref(row[6]):
            out += [
                Slot(s.owner, s.what, s.text, seq, where, ref=s.ref, lines=lines)
                for s in _value_slot(conn, owner, "message", seq, where, row[6])
            ]
        elif isinstance(row[6], str) and row[6]:
            out.append(Slot(owner, "message", row[6], seq, where, archive=digest, lines=lines))
    return out


def _current_archive(conn: sqlite3.Connection, digest: str) -> str:
    """The archive a session event's `messages_hash` stands for now (after replacements)."""
    seen: set[str] = set()
    while digest and digest not in seen:
        seen.add(digest)
        row = conn.execute(
            "SELECT erased_at, replaced_by FROM blobs WHERE hash=?", (digest,)
        ).fetchone()
        if row is None or not row[0]:
            return digest
        digest = row[1]
    return ""


def _node_slots(conn: sqlite3.Connection, seq: int, type_: str, data: dict[str, Any]) -> list[Slot]:
    out: list[Slot] = []
    if type_ in (EventType.NODE_EXTRACTED, EventType.NODE_MERGED) and data.get("node"):
        node = data["node"]
        owner = f"node:{node['node_id']}"
        for key in ("summary", "evidence"):
            out += _value_slot(conn, owner, key, seq, ("node", key), node.get(key))
    elif type_ == EventType.TEAM_RECEIVED and data.get("item_kind") == "node":
        # A node pulled from the team hub: its texts as the hub sent them.
        owner = f"node:{data['item_id']}"
        for path in _RECEIVED_TEXTS:
            what = str(path[-1])
            out += _value_slot(conn, owner, what, seq, path, _maybe(data, path))
    elif type_ in _DECISIONS:
        owner = f"node:{data['node_id']}"
        for side in ("before", "after"):
            for key in NODE_TEXT_KEYS:
                value = data.get(side, {}).get(key)
                out += _value_slot(conn, owner, key, seq, (side, key), value)
        out += _value_slot(conn, owner, "reason", seq, ("reason",), data.get("reason"))
    return out


def _pattern_slots(
    conn: sqlite3.Connection, seq: int, type_: str, data: dict[str, Any], drafts: dict[str, str]
) -> Iterator[tuple[str, Slot]]:
    if type_ == EventType.PATTERN_CONSOLIDATED:
        for i, record in enumerate(data.get("patterns", [])):
            pid = str(record["pattern_id"])
            owner = f"pattern:{pid}"
            for key in PATTERN_TEXT_KEYS:
                for s in _value_slot(
                    conn, owner, "pattern", seq, ("patterns", i, key), record.get(key)
                ):
                    yield pid, s
            for j, step in enumerate(record.get("steps", [])):
                path: PayloadPath = ("patterns", i, "steps", j, "text")
                for s in _value_slot(conn, owner, "pattern", seq, path, step.get("text")):
                    yield pid, s
    elif type_ == EventType.PATTERN_DRAFTED:
        pid, digest = str(data["pattern_id"]), str(data["content_hash"])
        drafts[str(data["draft_id"])] = pid
        if not is_erased(conn, digest):
            yield pid, Slot(f"pattern:{pid}", "draft", blob_text(conn, digest), seq, ref=digest)
    elif str(data.get("draft_id")) in drafts:
        pid = drafts[str(data["draft_id"])]
        for s in _value_slot(
            conn, f"pattern:{pid}", "reason", seq, ("reason",), data.get("reason")
        ):
            yield pid, s


def _maybe(data: Any, path: PayloadPath) -> Any:
    """The value at `path`, or None where the payload has no such place."""
    for step in path:
        if not isinstance(data, dict) or step not in data:
            return None
        data = data[step]
    return data


def get_path(data: Any, path: PayloadPath) -> Any:
    for step in path:
        data = data[step]
    return data


def set_path(data: Any, path: PayloadPath, value: Any) -> None:
    get_path(data, path[:-1])[path[-1]] = value
