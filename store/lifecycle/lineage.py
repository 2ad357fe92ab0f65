"""A skill's lineage (DESIGN §8, issue 5): its versions with diffs between them, its status
history (from → to, with actor and reason), where it came from (sessions → nodes → pattern →
draft → skill for a graduated skill; the sessions that used it for any other), its events,
its runbook runs and incidents, and the skills that supersede it.

Everything is read from the projections and the event log, one skill at a time, through
indexed queries (events by subject, versions by skill id), so a lineage costs the same in a
library of 50,000 skills as in one of ten. Diffs are computed on demand and bounded.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from typing import TYPE_CHECKING, Any

from store import catalog
from store.content import is_ref
from store.errors import LibrarianError
from store.lifecycle import runbook
from store.lifecycle.candidates import of_skill
from store.lifecycle.status_events import TARGET
from store.models import (
    ERASED,
    Draft,
    Event,
    Incident,
    Lineage,
    LineageVersion,
    Node,
    Pattern,
    Provenance,
    ProvenanceSession,
    Run,
    StatusChange,
)
from store.models.events import EventType
from store.models.governance import CandidateVersion
from store.patterns.graduate import get_draft
from store.patterns.memory import get_pattern
from store.projections import blob_text
from store.sessions.review import NODE_COLUMNS
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Diff lines shown at most; the rest is counted ("… N more lines").
MAX_DIFF_LINES = 400
#: Lines of each side that are compared at most (difflib is quadratic at worst).
MAX_COMPARED_LINES = 5000
#: Events in one page of a lineage.
EVENTS_PAGE = 20
#: Sessions that used a skill listed at most (the total is counted).
USED_IN_LIMIT = 50
#: Node and session ids read from a SKILL.md's metadata at most.
MAX_CITED = 500
#: Events that make up a skill's life: versions, status changes, uninstall.
LIFE_EVENTS = (
    EventType.SKILL_INSTALLED,
    EventType.SKILL_CHANGED,
    EventType.SKILL_UNINSTALLED,
    EventType.SKILL_PROPOSED,
    EventType.SKILL_PROMOTED,
    EventType.SKILL_DEPRECATED,
    EventType.SKILL_RETIRED,
    EventType.SKILL_VALIDATED,
    EventType.SKILL_CANDIDATE_PROMOTED,
    EventType.SKILL_CANDIDATE_SET_ASIDE,
)
#: What the lineage says of a candidate version's fate.
FATES = {
    "candidate": "candidate",
    "promoted": "candidate, took over",
    "set_aside": "candidate, set aside",
    "replaced": "candidate, replaced",
}
_EVENT_COLUMNS = "seq, ts, type, actor, subject, payload, prev_hash, hash"


class LineageError(LibrarianError):
    """An unknown skill or version."""


# -- the whole lineage ----------------------------------------------------------------------


def lineage(
    library: Kernel, key: str | int, *, events_limit: int = EVENTS_PAGE, events_offset: int = 0
) -> Lineage:
    """Everything about one skill's history (by name, id or path)."""
    with library.db.read() as conn:
        sid, name, status, fs_path, current = _skill(conn, key)
        changes, statuses = _life(conn, sid, name)
        served = int(
            conn.execute("SELECT served_version FROM skills WHERE skill_id=?", (sid,)).fetchone()[0]
        )
        found = of_skill(conn, sid, library.config)
        versions = _versions(conn, sid, statuses, current, served, found)
        provenance = _provenance(library, conn, sid, name, fs_path, versions)
        events, total = _events(conn, sid, name, events_limit, events_offset)
        successors, supersedes = _supersession(conn, sid, name)
    runs, incidents = _runbook(library, sid, name)
    named = [r.successor for r in runs if r.successor] + [i.successor for i in incidents]
    successors = tuple(dict.fromkeys([*successors, *(s for s in named if s and s != name)]))
    return Lineage(
        skill_id=sid,
        name=name,
        status=status,
        fs_path=fs_path,
        current_version=current,
        versions=versions,
        history=tuple(reversed(changes)),
        provenance=provenance,
        events=events,
        event_total=total,
        events_offset=max(0, events_offset),
        runs=runs,
        incidents=incidents,
        superseded_by=successors,
        supersedes=supersedes,
        served_version=served or current,
        candidates=tuple(found),
    )


def _skill(conn: sqlite3.Connection, key: str | int) -> tuple[int, str, str, str, int]:
    sid = catalog.resolve(conn, key)
    if sid is None:
        raise LineageError(f"no skill named {key!r}")
    row = conn.execute(
        "SELECT name, status, fs_path, current_version FROM skills WHERE skill_id=?", (sid,)
    ).fetchone()
    return sid, str(row[0]), str(row[1]), str(row[2]), int(row[3])


def default_skill(library: Kernel) -> str | None:
    """The skill the Lineage screen opens on: the most recently graduated one, else the most
    recently changed (or installed) one; None in an empty library."""
    with library.db.read() as conn:
        for type_ in (
            EventType.PATTERN_GRADUATED,
            EventType.SKILL_CHANGED,
            EventType.SKILL_INSTALLED,
        ):
            row = conn.execute(
                "SELECT subject, payload FROM events WHERE type=? ORDER BY seq DESC LIMIT 1",
                (type_,),
            ).fetchone()
            if row is None:
                continue
            name = (
                str(json.loads(row[1]).get("skill_name", ""))
                if type_ == EventType.PATTERN_GRADUATED
                else str(row[0]).removeprefix("skill:")
            )
            if name and catalog.resolve(conn, name) is not None:
                return name
        row = conn.execute(  # no such events (a library written without them): the catalog
            "SELECT name FROM skills"
            " ORDER BY status = 'uninstalled', updated_at DESC, skill_id LIMIT 1"
        ).fetchone()
    return str(row[0]) if row else None


# -- status history -------------------------------------------------------------------------


def _mine(event: Event, sid: int) -> bool:
    """Whether an event on `skill:<name>` is about this skill (two folders may share a name)."""
    owner = event.payload.get("skill_id", event.payload.get("source_id"))
    return owner is None or _as_int(owner) == sid


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _life(
    conn: sqlite3.Connection, sid: int, name: str
) -> tuple[list[StatusChange], dict[int, list[str]]]:
    """The skill's life events oldest first, each with from → to (walked through history when
    the payload does not say "from"), and the statuses each version went through."""
    marks = ",".join("?" * len(LIFE_EVENTS))
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE subject=? AND type IN ({marks}) ORDER BY seq",
        (f"skill:{name}", *LIFE_EVENTS),
    ).fetchall()
    changes: list[StatusChange] = []
    statuses: dict[int, list[str]] = {}
    status, version = "", 0
    for event in (_event(r) for r in rows):
        if not _mine(event, sid):
            continue
        p = event.payload
        before = status
        if event.type in (EventType.SKILL_INSTALLED, EventType.SKILL_CHANGED):
            version = _as_int(p.get("version_no")) or version
            if event.type == EventType.SKILL_INSTALLED:
                status = str(p.get("status") or status or "stable")
            else:
                status = status or "stable"
            reason = _version_reason(event, version)
        elif event.type.startswith("skill.candidate_"):
            reason = str(p.get("reason", ""))
        elif event.type == EventType.SKILL_UNINSTALLED:
            status = "uninstalled"
            reason = str(p.get("reason", ""))
        else:
            status = TARGET.get(event.type) or status
            before = str(p.get("from") or before)
            reason = str(p.get("reason", ""))
        changes.append(
            StatusChange(
                seq=event.seq,
                ts=event.ts,
                actor=event.actor,
                event=event.type,
                from_status=before,
                to_status=status,
                reason=reason,
                version_no=version,
                alert=str(p.get("alert", "") or ""),
            )
        )
        seen = statuses.setdefault(version, [])
        if not seen or seen[-1] != status:
            seen.append(status)
    return changes, statuses


def _version_reason(event: Event, version: int) -> str:
    path = str(event.payload.get("fs_path", ""))
    if event.type == EventType.SKILL_INSTALLED:
        return f"v{version} installed from {path}" if path else f"v{version} installed"
    base = _as_int(event.payload.get("candidate"))
    if base:
        return f"SKILL.md changed: v{version} is a candidate, v{base} stays served"
    return f"SKILL.md changed: v{version}"


def _event(row: Any) -> Event:
    seq, ts, type_, actor, subject, payload, prev, digest = row
    try:
        data = json.loads(payload)
    except json.JSONDecodeError:
        data = {}
    data = data if isinstance(data, dict) else {}
    # Skill events carry their text inline: a reference there is a redaction by `forget`.
    data = {k: ERASED if is_ref(v) else v for k, v in data.items()}
    return Event(int(seq), ts, type_, actor, subject, data, prev, digest)


# -- versions and diffs ---------------------------------------------------------------------


def _versions(
    conn: sqlite3.Connection,
    sid: int,
    statuses: dict[int, list[str]],
    current: int,
    served: int,
    candidates: list[CandidateVersion],
) -> tuple[LineageVersion, ...]:
    fate = {c.version_no: FATES.get(c.status, c.status) for c in candidates}
    rows = conn.execute(
        "SELECT v.version_no, v.created_at, v.event_type, v.event_seq, e.actor, v.content_hash,"
        " v.source_hash, v.description, v.version_label, v.warning_count, v.finding_count,"
        " v.max_severity FROM skill_versions v LEFT JOIN events e ON e.seq = v.event_seq"
        " WHERE v.skill_id=? ORDER BY v.version_no DESC",
        (sid,),
    ).fetchall()
    return tuple(
        LineageVersion(
            version_no=int(r[0]),
            created_at=str(r[1]),
            event=str(r[2]),
            event_seq=int(r[3]),
            actor=str(r[4] or ""),
            content_hash=str(r[5]),
            source_hash=str(r[6]),
            description=str(r[7]),
            version_label=str(r[8]),
            warning_count=int(r[9]),
            finding_count=int(r[10]),
            max_severity=str(r[11]),
            statuses=tuple(statuses.get(int(r[0]), ())),
            served=int(r[0]) == (served or current),
            fate=fate.get(int(r[0]), ""),
        )
        for r in rows
    )


def version_diff(library: Kernel, key: str | int, a: int, b: int) -> str:
    """A unified diff of the SKILL.md between versions `a` and `b` (`a` = 0: from nothing),
    at most `MAX_DIFF_LINES` lines, then "… N more lines"."""
    with library.db.read() as conn:
        sid, name, *_ = _skill(conn, key)
        texts = [_source(conn, sid, name, number) for number in (a, b)]
    before, after = (t.splitlines() for t in texts)
    notes = []
    if max(len(before), len(after)) > MAX_COMPARED_LINES:
        notes.append(f"(only the first {MAX_COMPARED_LINES} lines of each version are compared)")
        before, after = before[:MAX_COMPARED_LINES], after[:MAX_COMPARED_LINES]
    lines = list(
        difflib.unified_diff(
            before,
            after,
            fromfile=f"{name} v{a}" if a else "/dev/null",
            tofile=f"{name} v{b}" if b else "/dev/null",
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"… {more} more line{'s' if more != 1 else ''}"]
    return "\n".join([*lines, *notes])


def _source(conn: sqlite3.Connection, sid: int, name: str, number: int) -> str:
    if number == 0:
        return ""
    row = conn.execute(
        "SELECT source_hash FROM skill_versions WHERE skill_id=? AND version_no=?", (sid, number)
    ).fetchone()
    if row is None:
        raise LineageError(f"skill {name!r} has no version {number}")
    return blob_text(conn, str(row[0]))


# -- events ---------------------------------------------------------------------------------


def events_page(
    library: Kernel, key: str | int, limit: int = EVENTS_PAGE, offset: int = 0
) -> tuple[tuple[Event, ...], int]:
    """One page of the skill's events, newest first, and how many there are."""
    with library.db.read() as conn:
        sid, name, *_ = _skill(conn, key)
        return _events(conn, sid, name, limit, offset)


def _events(
    conn: sqlite3.Connection, sid: int, name: str, limit: int, offset: int
) -> tuple[tuple[Event, ...], int]:
    # Events carry the skill's id in `skill_id` (relations: `source_id`); a name shared by
    # two folders is told apart by it. Events without either belong to the name.
    owner = "coalesce(json_extract(payload, '$.skill_id'), json_extract(payload, '$.source_id'))"
    where = f"subject=? AND ({owner} IS NULL OR {owner} = ?)"
    args = (f"skill:{name}", sid)
    total = int(conn.execute(f"SELECT count(*) FROM events WHERE {where}", args).fetchone()[0])
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS} FROM events WHERE {where} ORDER BY seq DESC LIMIT ? OFFSET ?",
        (*args, max(0, int(limit)), max(0, int(offset))),
    ).fetchall()
    return tuple(_event(r) for r in rows), total


# -- provenance -----------------------------------------------------------------------------


def _provenance(
    library: Kernel,
    conn: sqlite3.Connection,
    sid: int,
    name: str,
    fs_path: str,
    versions: tuple[LineageVersion, ...],
) -> Provenance:
    metadata = _metadata(conn, sid, versions)
    pattern = _pattern(conn, name, metadata.get("librarian-pattern", ""))
    draft = _draft(library, conn, name, pattern.pattern_id if pattern else "")
    used_in, used_total = _used_in(conn, name)
    if pattern is None and draft is None and not metadata.get("librarian-pattern"):
        return Provenance(
            origin="installed",
            note=f"installed from {fs_path}; not graduated from a pattern",
            pattern=None,
            draft=None,
            sessions=(),
            missing_nodes=(),
            metadata=metadata,
            used_in=used_in,
            used_in_total=used_total,
        )
    members: list[tuple[str, str]] = []
    if pattern is not None:
        members = [
            (str(r[0]), str(r[1]))
            for r in conn.execute(
                "SELECT node_id, session_id FROM pattern_members WHERE pattern_id=?",
                (pattern.pattern_id,),
            )
        ]
    cited_nodes = _split(metadata.get("librarian-nodes", ""))
    cited_sessions = _split(metadata.get("librarian-sessions", ""))
    node_ids = list(dict.fromkeys([n for n, _ in members] + cited_nodes))
    nodes = _nodes(conn, node_ids)
    missing = tuple(n for n in node_ids if n not in nodes)
    session_ids = list(
        dict.fromkeys(
            [s for _, s in members] + [n.session_id for n in nodes.values()] + cited_sessions
        )
    )
    by_session: dict[str, list[Node]] = {}
    for node in nodes.values():
        by_session.setdefault(node.session_id, []).append(node)
    sessions = [
        _session(conn, s, tuple(sorted(by_session.get(s, []), key=_node_order)))
        for s in session_ids
    ]
    sessions.sort(key=lambda s: (s.started_at or "~", s.session_id))
    pattern_id = pattern.pattern_id if pattern else metadata.get("librarian-pattern", "")
    return Provenance(
        origin="graduated",
        note=_graduated_note(pattern_id, draft, len(sessions), len(nodes)),
        pattern=pattern,
        draft=draft,
        sessions=tuple(sessions),
        missing_nodes=missing,
        metadata=metadata,
        used_in=used_in,
        used_in_total=used_total,
    )


def _graduated_note(pattern_id: str, draft: Draft | None, sessions: int, nodes: int) -> str:
    note = f"graduated from pattern {pattern_id or '?'}"
    if draft is not None:
        note += f" (draft {draft.draft_id}, {draft.status}"
        if draft.decided_by:
            note += f" by {draft.decided_by} on {draft.decided_at[:10]}"
        note += ")"
    return (
        f"{note}; learned from {nodes} node{'s' if nodes != 1 else ''} in"
        f" {sessions} session{'s' if sessions != 1 else ''}"
    )


def _node_order(node: Node) -> tuple[str, int, str]:
    return (node.file, node.line_start, node.node_id)


def _split(value: str) -> list[str]:
    """Comma-separated ids from a SKILL.md (untrusted: bounded)."""
    return [part.strip() for part in value.split(",") if part.strip()][:MAX_CITED]


def _metadata(
    conn: sqlite3.Connection, sid: int, versions: tuple[LineageVersion, ...]
) -> dict[str, str]:
    """The librarian's provenance keys in the SKILL.md `metadata` of the oldest version that
    has them (a later edit may drop them; the origin stays)."""
    for version in reversed(versions):
        row = conn.execute(
            "SELECT frontmatter FROM skill_versions WHERE skill_id=? AND version_no=?",
            (sid, version.version_no),
        ).fetchone()
        try:
            front = json.loads(row[0]) if row else {}
        except json.JSONDecodeError:
            front = {}
        meta = front.get("metadata") if isinstance(front, dict) else None
        if isinstance(meta, dict):
            found = {
                str(k)[:100]: str(v)[:20000]
                for k, v in meta.items()
                if str(k).startswith("librarian-") or str(k) == "generated-by"
            }
            if found:
                return found
    return {}


def _pattern(conn: sqlite3.Connection, name: str, cited: str) -> Pattern | None:
    row = conn.execute(
        "SELECT pattern_id FROM patterns WHERE skill_name=? AND status='graduated'"
        " ORDER BY updated_at DESC, pattern_id LIMIT 1",
        (name,),
    ).fetchone()
    pattern_id = str(row[0]) if row else cited
    return get_pattern(conn, pattern_id) if pattern_id else None


def _draft(library: Kernel, conn: sqlite3.Connection, name: str, pattern_id: str) -> Draft | None:
    """The approved draft the skill was written from (the newest, if several)."""
    row = conn.execute(
        "SELECT draft_id FROM drafts WHERE name=? AND status='approved' AND (pattern_id=? OR ?='')"
        " ORDER BY created_at DESC, draft_id LIMIT 1",
        (name, pattern_id, pattern_id),
    ).fetchone()
    return get_draft(library, str(row[0])) if row else None


def _nodes(conn: sqlite3.Connection, node_ids: list[str]) -> dict[str, Node]:
    found: dict[str, Node] = {}
    cursor = conn.cursor()
    cursor.row_factory = None
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in cursor.execute(
            f"SELECT {NODE_COLUMNS} FROM nodes WHERE node_id IN ({marks})", chunk
        ):
            found[str(row[0])] = Node(*row)
    return {n: found[n] for n in node_ids if n in found}


def _session(
    conn: sqlite3.Connection, session_id: str, nodes: tuple[Node, ...]
) -> ProvenanceSession:
    row = conn.execute(
        "SELECT project, started_at FROM sessions WHERE session_id=?", (session_id,)
    ).fetchone()
    if row is None:
        project = nodes[0].project if nodes else ""
        return ProvenanceSession(session_id, project, "", "", nodes, known=False)
    prompt = conn.execute(
        "SELECT text FROM session_messages WHERE session_id=? AND kind='prompt'"
        " ORDER BY idx LIMIT 1",
        (session_id,),
    ).fetchone()
    title = one_line(str(prompt[0]), 160) if prompt else ""
    return ProvenanceSession(session_id, str(row[0]), str(row[1]), title, nodes)


def _used_in(conn: sqlite3.Connection, name: str) -> tuple[tuple[ProvenanceSession, ...], int]:
    total = int(
        conn.execute("SELECT count(*) FROM skill_uses WHERE skill_name=?", (name,)).fetchone()[0]
    )
    rows = conn.execute(
        "SELECT u.session_id FROM skill_uses u LEFT JOIN sessions s USING(session_id)"
        " WHERE u.skill_name=? ORDER BY s.started_at DESC, u.session_id LIMIT ?",
        (name, USED_IN_LIMIT),
    ).fetchall()
    return tuple(_session(conn, str(r[0]), ()) for r in rows), total


# -- succession and the runbook ---------------------------------------------------------------


def _supersession(
    conn: sqlite3.Connection, sid: int, name: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(skills that supersede this one, skills this one supersedes)."""
    successors = tuple(
        dict.fromkeys(
            str(r[0])
            for r in conn.execute(
                "SELECT s.name FROM relations r JOIN skills s ON s.skill_id = r.source_id"
                " WHERE r.type='supersedes' AND r.target_name=? AND s.status != 'uninstalled'"
                " ORDER BY s.name",
                (name,),
            )
        )
    )
    supersedes = tuple(
        dict.fromkeys(
            str(r[0])
            for r in conn.execute(
                "SELECT target_name FROM relations WHERE source_id=? AND type='supersedes'"
                " ORDER BY target_name",
                (sid,),
            )
        )
    )
    return successors, supersedes


def _runbook(library: Kernel, sid: int, name: str) -> tuple[tuple[Run, ...], tuple[Incident, ...]]:
    runs = sorted(
        (r for r in runbook.runs(library, skill=name) if r.skill_id == sid),
        key=lambda r: (r.started_at, r.run_id),
        reverse=True,
    )
    incidents = [i for i in runbook.incidents(library, skill=name) if i.skill_id == sid]
    return tuple(runs), tuple(incidents)
