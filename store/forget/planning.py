"""What a forget takes: the node, session or text asked for, then the rules that leave
nothing half-forgotten (see `store.forget`)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from store.errors import LibrarianError
from store.forget.slots import Inventory, Slot
from store.models import ErasureItem, ForgetPlan
from store.projections import blob_text
from store.text import one_line

SCOPES = ("node", "session", "text")
PREVIEW_CHARS = 72
MASK = "[match]"


class ForgetError(LibrarianError):
    """Nothing to forget by that name, or a pattern that would match everything."""


@dataclass
class _Selection:
    """What a forget touches, before the closure rules run."""

    messages: list[Slot] = field(default_factory=list)
    nodes: set[str] = field(default_factory=set)
    patterns: set[str] = field(default_factory=set)
    extra: list[Slot] = field(default_factory=list)
    skills: set[str] = field(default_factory=set)  # SKILL.md files that contain the text


@dataclass(frozen=True)
class Found:
    """A plan, and the places its text lives (what `erasing` works on)."""

    plan: ForgetPlan
    slots: tuple[Slot, ...]


def matcher(text: str, *, regex: bool = False, ignore_case: bool = False) -> re.Pattern[str]:
    """A search for `text` (literal unless `regex`); refuses one that matches empty text."""
    if not text:
        raise ForgetError("forget text needs a non-empty TEXT")
    flags = re.IGNORECASE if ignore_case else 0
    try:
        compiled = re.compile(text if regex else re.escape(text), flags)
    except re.error as exc:
        raise ForgetError(f"not a valid regex: {exc}") from exc
    if compiled.search(""):
        raise ForgetError("that pattern matches empty text, so it would erase everything")
    return compiled


def plan(
    conn: sqlite3.Connection,
    scope: str,
    target: str,
    *,
    regex: bool = False,
    ignore_case: bool = False,
    with_messages: bool = False,
) -> Found:
    """What forgetting `target` (a node id, a session id or a text) would erase."""
    inventory = Inventory(conn)
    search = None
    if scope == "node":
        selection = _select_node(conn, inventory, target, with_messages)
    elif scope == "session":
        selection = _select_session(conn, inventory, target)
    elif scope == "text":
        search = matcher(target, regex=regex, ignore_case=ignore_case)
        selection = _select_text(conn, inventory, search)
    else:
        raise ForgetError(f"unknown scope {scope!r} (one of {', '.join(SCOPES)})")
    return _close(conn, inventory, scope, "" if scope == "text" else target, selection, search)


def _select_node(
    conn: sqlite3.Connection, inventory: Inventory, node_id: str, with_messages: bool
) -> _Selection:
    row = conn.execute(
        "SELECT session_id, file, line_start, line_end FROM nodes WHERE node_id=?", (node_id,)
    ).fetchone()
    if row is None:
        raise ForgetError(f"no node {node_id!r}")
    selection = _Selection(nodes=_with_merged(conn, {node_id}))
    if with_messages:
        sid, file, start, end = row
        selection.messages = [
            m
            for m in inventory.messages(sid)
            if m.lines and m.lines[0] == file and m.lines[1] <= end and m.lines[2] >= start
        ]
        selection.nodes |= _quoting(conn, selection.messages)
    return selection


def _select_session(conn: sqlite3.Connection, inventory: Inventory, session_id: str) -> _Selection:
    if conn.execute("SELECT 1 FROM sessions WHERE session_id=?", (session_id,)).fetchone() is None:
        raise ForgetError(f"no session {session_id!r}")
    nodes = {
        r[0] for r in conn.execute("SELECT node_id FROM nodes WHERE session_id=?", (session_id,))
    }
    return _Selection(
        messages=inventory.messages(session_id), nodes=nodes, extra=inventory.others(session_id)
    )


def _select_text(
    conn: sqlite3.Connection, inventory: Inventory, pattern: re.Pattern[str]
) -> _Selection:
    search = pattern.search
    messages = [m for m in inventory.messages() if search(m.text)]
    nodes = {n for n, slots in inventory.nodes().items() if any(search(s.text) for s in slots)}
    slots, _ = inventory.patterns()
    patterns = {
        p for p, found in slots.items() if any(search(s.text) for s in found if s.what != "reason")
    }
    reasons = [
        s for found in slots.values() for s in found if s.what == "reason" and search(s.text)
    ]
    extra = [s for s in inventory.others() if search(s.text)] + reasons
    skills = {
        str(name)
        for name, digest in conn.execute(
            "SELECT s.name, v.source_hash FROM skill_versions v JOIN skills s USING(skill_id)"
        )
        if search(blob_text(conn, digest))
    }
    return _Selection(messages, nodes | _quoting(conn, messages), patterns, extra, skills)


def _quoting(conn: sqlite3.Connection, messages: Iterable[Slot]) -> set[str]:
    """Nodes whose evidence came from these messages (same session, file, overlapping lines)."""
    found: set[str] = set()
    for m in messages:
        if m.lines is None:
            continue
        file, start, end = m.lines
        found |= {
            r[0]
            for r in conn.execute(
                "SELECT node_id FROM nodes WHERE session_id=? AND file=? AND line_start<=?"
                " AND line_end>=?",
                (m.owner.removeprefix("session:"), file, end, start),
            )
        }
    return found


def _close(
    conn: sqlite3.Connection,
    inventory: Inventory,
    scope: str,
    target: str,
    selection: _Selection,
    search: re.Pattern[str] | None,
) -> Found:
    """Apply the rules: whole nodes, whole patterns, SKILL.md files left alone."""
    nodes = {
        n
        for n in selection.nodes
        if conn.execute(
            "SELECT 1 FROM nodes WHERE node_id=? AND status != 'forgotten'", (n,)
        ).fetchone()
    }
    pattern_slots, members = inventory.patterns()
    patterns = set(selection.patterns) | {p for p, ids in members.items() if ids & nodes}
    node_slots = inventory.nodes()
    chosen: dict[tuple[Any, ...], Slot] = {}
    for slot in [
        *selection.messages,
        *(s for n in sorted(nodes) for s in node_slots.get(n, [])),
        *(s for p in sorted(patterns) for s in pattern_slots.get(p, [])),
        *selection.extra,
    ]:
        chosen.setdefault(slot.key, slot)
    skills = sorted(set(_skills_quoting(conn, patterns)) | selection.skills)
    kept = {("blob", d) for d in _skill_blobs(conn)}  # a SKILL.md is a file: never erased
    slots = tuple(s for k, s in chosen.items() if k not in kept)
    sessions = sorted({s.owner.removeprefix("session:") for s in slots if s.what == "message"})
    result = ForgetPlan(
        scope=scope,
        target=target,
        items=tuple(dict.fromkeys(_item(conn, s, search) for s in slots)),
        nodes=tuple(sorted(nodes)),
        sessions=tuple(sessions),
        patterns=tuple(sorted(patterns)),
        skills=tuple(skills),
        redactions=len({s.seq for s in slots if not s.ref and not s.archive}),
    )
    return Found(result, slots)


def _with_merged(conn: sqlite3.Connection, nodes: set[str]) -> set[str]:
    """The nodes and every node merged into one of them (a duplicate is the same memory)."""
    found, frontier = set(nodes), set(nodes)
    while frontier:
        more = {
            r[0]
            for n in sorted(frontier)
            for r in conn.execute("SELECT node_id FROM nodes WHERE merged_into=?", (n,))
        }
        frontier = more - found
        found |= more
    return found


def _skills_quoting(conn: sqlite3.Connection, patterns: set[str]) -> list[str]:
    """Skills graduated from these patterns: their SKILL.md may quote what is forgotten."""
    names: set[str] = set()
    for pid in patterns:
        row = conn.execute("SELECT skill_name FROM patterns WHERE pattern_id=?", (pid,)).fetchone()
        if row and row[0]:
            names.add(str(row[0]))
    return sorted(names)


def _skill_blobs(conn: sqlite3.Connection) -> set[str]:
    return {
        h for row in conn.execute("SELECT source_hash, body_hash FROM skill_versions") for h in row
    }


def _item(conn: sqlite3.Connection, slot: Slot, search: re.Pattern[str] | None) -> ErasureItem:
    kind, _, ident = slot.owner.partition(":")
    where = f"{kind} {ident}"
    if slot.lines is not None:
        file, start, end = slot.lines
        lines = f"line {start}" if start == end else f"lines {start}–{end}"
        where += f" ({lines} of {file.rsplit('/', 1)[-1]})"
    elif kind == "node":
        row = conn.execute("SELECT type FROM nodes WHERE node_id=?", (ident,)).fetchone()
        where += f" ({row[0]})" if row else ""
    return ErasureItem(slot.what, where, _preview(slot.text, search))


def _preview(text: str, search: re.Pattern[str] | None) -> str:
    """One line of the text; around the first match, with every match masked."""
    masked = search.sub(MASK, text) if search is not None else text
    at = masked.find(MASK) if search is not None else -1
    start = 0 if at + len(MASK) < PREVIEW_CHARS * 2 // 3 else at - PREVIEW_CHARS // 3
    if start:  # the match would be cut off: begin a little before it, at a word
        space = masked.find(" ", start, at)
        start = space + 1 if space != -1 else start
    return ("…" if start else "") + one_line(masked[start:], PREVIEW_CHARS)
