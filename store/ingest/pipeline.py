"""Sessions into the library: parse, extract (warm tier), redact, dedup, record.

The cold tier reads sessions after this, whether they changed or not (`store.ingest.upgrade`).

Idempotent per session: an unchanged transcript costs a few `stat` calls and writes nothing;
a grown one (the Stop hook fires every turn) adds only nodes it has not seen. Node ids are
derived from the session and the extraction key, so the same evidence is the same node.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from store.content import erased_positions, store_text
from store.embed import EmbeddingError
from store.files import open_regular, regular_file_problem
from store.ingest import outcomes as inferred_outcomes
from store.ingest.redact import redact
from store.ingest.transcript import (
    default_project_dirs,
    find_session_files,
    parse_session,
    parse_sources,
    subagent_files,
)
from store.ingest.warm import extract_warm
from store.lifecycle.candidates import settle
from store.models import (
    ExtractedEdge,
    ExtractedNode,
    ParsedSession,
    ParseFailure,
    SkippedFile,
    TranscriptMessage,
    UpgradeReport,
)
from store.projections import store_blob
from store.skills import usage

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Cosine at or above which two nodes of one project say the same thing (DESIGN §6).
DEDUP_THRESHOLD = 0.85
#: Archived message text per message (the transcript itself ages out after 30 days).
ARCHIVE_CHARS = 4000

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class IngestReport:
    """What one `ingest` run did."""

    files: int
    ingested: int
    unchanged: int
    failed: tuple[SkippedFile, ...]
    nodes_added: int
    nodes_merged: int
    skipped_lines: dict[str, int]
    problems: tuple[str, ...]
    seconds: float
    outcomes_inferred: int = 0  # `Skill` calls whose turn gave an inferred outcome
    relations_proposed: int = 0  # new co-usage proposals (set by `Library.ingest`)
    kept_erased: int = 0  # archived messages `forget` erased that stay erased
    withheld: int = 0  # nodes not added: they quote erased messages or repeat forgotten nodes
    cold: UpgradeReport | None = None  # what the cold tier did (`ingest --llm`)


@dataclass
class _Outcome:
    ingested: bool = False
    added: int = 0
    merged: int = 0
    outcomes: int = 0
    kept_erased: int = 0
    withheld: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    failure: SkippedFile | None = None


def node_id(session_id: str, key: str) -> str:
    return "n_" + hashlib.sha256(f"{session_id}\0{key}".encode()).hexdigest()[:16]


def node_text(type_: str, summary: str) -> str:
    """What dedup compares: the node's type and summary (DESIGN §6)."""
    return f"{type_}: {summary}"


def main_files(paths: Sequence[Path] | None) -> list[Path]:
    """The session files under `paths` (default: Claude Code's projects folders)."""
    roots = list(paths) if paths else default_project_dirs(Path.home(), os.environ)
    return [f for root in roots for f in find_session_files(Path(root))]


def ingest(
    library: Kernel, paths: Sequence[Path] | None = None, *, progress: Progress | None = None
) -> IngestReport:
    """Ingest every session under `paths` (default: Claude Code's projects folders)."""
    started = time.perf_counter()
    files = main_files(paths)
    outcomes = []
    for done, main_file in enumerate(files, start=1):
        outcomes.append(ingest_file(library, main_file))
        if progress is not None:
            progress(done, len(files))
    skipped: dict[str, int] = {}
    for outcome in outcomes:
        for reason, count in outcome.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
    return IngestReport(
        files=len(files),
        ingested=sum(o.ingested for o in outcomes),
        unchanged=sum(1 for o in outcomes if not o.ingested and o.failure is None),
        failed=tuple(o.failure for o in outcomes if o.failure is not None),
        nodes_added=sum(o.added for o in outcomes),
        nodes_merged=sum(o.merged for o in outcomes),
        skipped_lines=skipped,
        problems=tuple(p for o in outcomes for p in o.problems),
        seconds=round(time.perf_counter() - started, 3),
        outcomes_inferred=sum(o.outcomes for o in outcomes),
        kept_erased=sum(o.kept_erased for o in outcomes),
        withheld=sum(o.withheld for o in outcomes),
    )


def ingest_file(library: Kernel, main_file: Path) -> _Outcome:
    """One session file; never raises for data problems (they become the outcome's failure).

    A session recorded in several main files (a transcript copied or moved, keeping its
    `sessionId`) is one session with each file a source of it: a changed or new source is
    read together with the others, and each source is unchanged on its own."""
    main_file = Path(os.path.abspath(main_file))
    problem = regular_file_problem(main_file)
    if problem:  # a FIFO or device named by a hook would block or never end
        return _Outcome(failure=SkippedFile(str(main_file), "not_regular", problem))
    locks = library.paths.spool / "locks"
    with session_lock(locks, str(main_file.resolve())):
        if _unchanged(library, main_file):
            return _Outcome()
        parsed = parse_session(main_file)
        if isinstance(parsed, ParseFailure):
            return _Outcome(failure=SkippedFile(str(main_file), parsed.code, parsed.reason))
        with session_lock(locks, "session\0" + parsed.session_id):
            return _record(library, with_other_sources(library, parsed, main_file))


def with_other_sources(library: Kernel, parsed: ParsedSession, main_file: Path) -> ParsedSession:
    """The session read from all its recorded main files (`parsed` alone when it has one, or
    when reading the others fails). Ingest calls it under the session's lock; transcripts
    only grow, so a reader needs none."""
    others = _other_sources(library, parsed.session_id, main_file)
    if not others:
        return parsed
    mains = [main_file, *others]
    every = parse_sources(mains, parsed.session_id, _labels(library, mains))
    return every if isinstance(every, ParsedSession) else parsed


@contextmanager
def session_lock(folder: Path, key: str) -> Iterator[None]:
    """An exclusive lock per session file, across processes (hook workers, manual ingest)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".lock")
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# -- unchanged? ------------------------------------------------------------------------------


def _file_record(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {
        "path": str(path),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "sha256": _sha256(path),
    }


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _unchanged(library: Kernel, main_file: Path) -> bool:
    """True when the session file and its subagent files are as last ingested (and no
    subagent file is new). Size and mtime decide first; a touched but identical file is
    confirmed by hash. A file may be recorded under another source of the same session."""
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT f.session_id, f.path, f.size, f.mtime_ns, f.sha256, f.source FROM"
            " session_files f JOIN (SELECT DISTINCT session_id FROM session_files WHERE"
            " source=?) s ON s.session_id=f.session_id",
            (str(main_file),),
        ).fetchall()
    sessions: dict[str, list[Any]] = {}
    for row in rows:
        sessions.setdefault(row[0], []).append(row)
    return any(_same_files(main_file, sid, found) for sid, found in sessions.items())


def _same_files(main_file: Path, session_id: str, rows: list[Any]) -> bool:
    known = {r[1]: r for r in rows}
    current = [str(p) for p in (main_file, *subagent_files(main_file, session_id))]
    mine = {r[1] for r in rows if r[5] == str(main_file)}
    if not mine <= set(current) or not set(current) <= set(known):
        return False
    for path in current:
        size, mtime_ns, sha = known[path][2:5]
        try:
            stat = os.stat(path)
        except OSError:
            return False
        if stat.st_size != size:
            return False
        if stat.st_mtime_ns != mtime_ns and _sha256(Path(path)) != sha:
            return False
    return True


def _other_sources(library: Kernel, session_id: str, main_file: Path) -> list[Path]:
    """The session's other recorded main files that still exist."""
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT DISTINCT source FROM session_files WHERE session_id=? AND source!=?",
            (session_id, str(main_file)),
        ).fetchall()
    return [Path(r[0]) for r in rows if os.path.isfile(r[0])]


def _labels(library: Kernel, mains: list[Path]) -> dict[Path, str]:
    """The labels main files were recorded under (messages and node keys use them)."""
    with library.db.read() as conn:
        return {
            main: row[0]
            for main in mains
            if (
                row := conn.execute(
                    "SELECT label FROM session_files WHERE path=? AND source=path LIMIT 1",
                    (str(main),),
                ).fetchone()
            )
        }


# -- recording -------------------------------------------------------------------------------


def _record(library: Kernel, parsed: ParsedSession) -> _Outcome:
    warm = extract_warm(parsed)
    nodes, edges, problems = list(warm.nodes), list(warm.edges), list(warm.problems)
    sid = parsed.session_id
    candidates = [_candidate(library, parsed, n) for n in nodes]
    with library.db.read() as conn:
        known = _known_ids(conn, [c["node_id"] for c in candidates])
        withheld = _withheld(conn, sid, [c for c in candidates if c["node_id"] not in known])
    fresh = [c for c in candidates if c["node_id"] not in known and c["node_id"] not in withheld]
    decisions, dedup_problem = _dedup(library, parsed.project, fresh)
    if dedup_problem:
        problems.append(dedup_problem)
    winners = {c["node_id"]: into or c["node_id"] for c, into, _ in decisions}
    _attach_edges(fresh, edges, sid, winners, known)
    rows = _archive(parsed.messages)
    sources = parsed.sources or (parsed.files[0],) * len(parsed.files)
    files = [
        {**_file_record(Path(f)), "source": source, "label": label}
        for f, source, label in zip(parsed.files, sources, parsed.labels, strict=True)
    ]
    inferred = inferred_outcomes.infer(parsed)
    with library.db.write() as conn:
        digest, kept_erased = _store_archive(conn, sid, rows)
        library.append_event(
            conn,
            "session.ingested",
            f"session:{sid}",
            _session_payload(library, parsed, digest, files),
        )
        merged = append_nodes(library, conn, decisions)
        recorded = inferred_outcomes.record(library, conn, sid, inferred)
        calls = usage.tally((o.skill, o.at) for o in inferred)
        for skill_id in usage.record(conn, library.append_event, sid, calls):
            settle(conn, library.append_event, library.config, skill_id)
    added = sum(1 for _, into, _ in decisions if not into)
    return _Outcome(
        ingested=True,
        added=added,
        merged=merged,
        outcomes=recorded,
        kept_erased=kept_erased,
        withheld=len(withheld),
        skipped=dict(parsed.skipped),
        problems=[f"{sid}: {p}" for p in problems],
    )


def append_nodes(
    library: Kernel,
    conn: sqlite3.Connection,
    decisions: Sequence[tuple[dict[str, Any], str, str]],
) -> int:
    """The events for dedup's decisions (`_dedup`); returns how many merges they record."""
    merged = 0
    for candidate, into, replaces in decisions:
        if into:
            library.append_event(
                conn,
                "node.merged",
                f"node:{into}",
                {"into": into, "merged": candidate["node_id"], "node": _texts(conn, candidate)},
            )
            merged += 1
            continue
        library.append_event(
            conn,
            "node.extracted",
            f"node:{candidate['node_id']}",
            {"node": _texts(conn, candidate)},
        )
        if replaces:
            library.append_event(
                conn,
                "node.merged",
                f"node:{candidate['node_id']}",
                {"into": candidate["node_id"], "merged": replaces},
            )
            merged += 1
    return merged


def _candidate(library: Kernel, parsed: ParsedSession, node: ExtractedNode) -> dict[str, Any]:
    return {
        "node_id": node_id(parsed.session_id, node.key),
        "session_id": parsed.session_id,
        "project": parsed.project,
        "type": node.type,
        "summary": redact(node.summary),
        "evidence": redact(node.evidence),
        "file": node.file,
        "line_start": node.line_start,
        "line_end": node.line_end,
        "confidence": round(float(node.confidence), 4),
        "scope": "PROJECT",
        "tier": node.tier,
        "strategy": node.strategy,
        "developer": library.actor,
        "key": node.key,
        "edges_in": [],
        "informativeness": round(float(node.informativeness), 3),
        "suppressed": node.suppressed,
    }


def _texts(conn: sqlite3.Connection, candidate: dict[str, Any]) -> dict[str, Any]:
    """The node as its event carries it: summary and evidence by blob reference."""
    owner = f"node:{candidate['node_id']}"
    return {
        **candidate,
        "summary": store_text(conn, owner, candidate["summary"]),
        "evidence": store_text(conn, owner, candidate["evidence"]),
    }


def _withheld(conn: sqlite3.Connection, sid: str, candidates: list[dict[str, Any]]) -> set[str]:
    """New candidates that would bring forgotten content back: they quote a message `forget`
    erased, or repeat a forgotten node (same lines and type). A forgotten node itself is
    known, so it is never extracted again."""
    if not candidates:
        return set()
    erased = erased_positions(conn, sid)
    forgotten = {
        tuple(r)
        for r in conn.execute(
            "SELECT file, line_start, line_end, type FROM nodes WHERE session_id=?"
            " AND status='forgotten'",
            (sid,),
        )
    }
    out: set[str] = set()
    for c in candidates:
        if (c["file"], c["line_start"], c["line_end"], c["type"]) in forgotten or any(
            f == c["file"] and start <= c["line_end"] and end >= c["line_start"]
            for f, start, end in erased
        ):
            out.add(c["node_id"])
    return out


def _known_ids(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    known: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        known |= {
            r[0]
            for r in conn.execute(f"SELECT node_id FROM nodes WHERE node_id IN ({marks})", chunk)
        }
    return known


def _attach_edges(
    fresh: list[dict[str, Any]],
    edges: list[ExtractedEdge],
    sid: str,
    winners: dict[str, str],
    known: set[str],
) -> None:
    """Edges go into the target's payload; endpoints that were merged point at the winner."""
    by_id = {c["node_id"]: c for c in fresh}
    for edge in edges:
        source = node_id(sid, edge.source)
        target = node_id(sid, edge.target)
        source = winners.get(source, source)
        target = winners.get(target, target)
        if (
            source == target
            or target not in by_id
            or (source not in winners and source not in known)
        ):
            continue
        entry = {"source": source, "type": edge.type}
        if entry not in by_id[target]["edges_in"]:
            by_id[target]["edges_in"].append(entry)


def _store_archive(conn: sqlite3.Connection, sid: str, rows: list[list[Any]]) -> tuple[str, int]:
    """The session's archive blob: each message's text in a blob of the session, referenced
    by hash. A message `forget` erased stays erased (its tombstone is referenced again), so
    a re-ingest never brings it back; returns (archive hash, messages kept erased)."""
    erased = erased_positions(conn, sid)
    owner = f"session:{sid}"
    kept = 0
    stored = []
    for r in rows:
        tombstone = erased.get((r[1], r[2], r[3]))
        kept += tombstone is not None
        text = {"blob": tombstone} if tombstone else store_text(conn, owner, r[6])
        stored.append([*r[:6], text, *r[7:]])
    return store_blob(conn, json.dumps(stored, ensure_ascii=False)), kept


def _archive(messages: Sequence[TranscriptMessage]) -> list[list[Any]]:
    return [
        [
            m.index,
            m.file,
            m.line_start,
            m.line_end,
            m.role,
            m.kind,
            redact(_message_text(m))[:ARCHIVE_CHARS],
            m.timestamp,
            int(any(r.is_error for r in m.tool_results)),
        ]
        for m in messages
    ]


def _message_text(message: TranscriptMessage) -> str:
    parts = [message.text] if message.text else []
    parts += [f"[{u.name}] {u.input_text}" for u in message.tool_uses]
    parts += [("[error] " if r.is_error else "[result] ") + r.text for r in message.tool_results]
    return "\n".join(parts)


def _session_payload(
    library: Kernel, parsed: ParsedSession, digest: str, files: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "session_id": parsed.session_id,
        "project": parsed.project,
        "branch": parsed.branch,
        "client_version": parsed.client_version,
        "started_at": parsed.started_at,
        "ended_at": parsed.ended_at,
        "turns": parsed.turns,
        "tool_calls": parsed.tool_calls,
        "errors": parsed.errors,
        "compactions": parsed.compactions,
        "skills_used": list(parsed.skills_used),
        "skipped": dict(parsed.skipped),
        "developer": library.actor,
        "messages_hash": digest,
        "files": files,
    }


# -- dedup -----------------------------------------------------------------------------------


def _dedup(
    library: Kernel,
    project: str,
    fresh: list[dict[str, Any]],
    exclude: Collection[str] = (),
) -> tuple[list[tuple[dict[str, Any], str, str]], str]:
    """(candidate, merged into (or ""), stored node it replaces (or "")) in insertion order.
    Duplicates are nodes of the same type whose texts are within the cosine threshold.
    Stored nodes in `exclude` are not compared (the cold tier supersedes them instead).

    The higher confidence wins. A stored node that a reviewer already decided always wins:
    a new, pending duplicate never overrides a human decision. Candidates below the
    knowledge bar are stored as they are (suppressed), never embedded nor merged.
    """
    kept_out = [c for c in fresh if c.get("suppressed")]  # below the bar: stored as they are
    fresh = [c for c in fresh if not c.get("suppressed")]
    if not fresh:
        return [(c, "", "") for c in kept_out], ""
    with library.db.read() as conn:
        stored = conn.execute(
            "SELECT node_id, type, summary, confidence, status FROM nodes WHERE project=?"
            " AND status IN ('pending', 'approved', 'rejected')",
            (project,),
        ).fetchall()
    stored = [r for r in stored if r[0] not in exclude]
    try:
        vectors = _node_vectors(
            library,
            [node_text(r[1], r[2]) for r in stored]
            + [node_text(c["type"], c["summary"]) for c in fresh],
        )
    except EmbeddingError as exc:
        return [(c, "", "") for c in fresh + kept_out], f"dedup skipped: {exc}"
    # Per type: a solution and the dead end it resolved name the same command, and are two
    # different lessons. Entries: id, confidence, decided.
    pools: dict[str, list[tuple[str, float, bool]]] = {}
    pool_vectors: dict[str, list[np.ndarray[Any, Any]]] = {}
    for row, vector in zip(stored, vectors[: len(stored)], strict=True):
        pools.setdefault(row[1], []).append((row[0], float(row[3]), row[4] != "pending"))
        pool_vectors.setdefault(row[1], []).append(vector)
    decisions: dict[str, tuple[str, str]] = {}
    order = sorted(range(len(fresh)), key=lambda i: (-fresh[i]["confidence"], fresh[i]["key"]))
    for i in order:
        candidate, vector = fresh[i], vectors[len(stored) + i]
        pool = pools.setdefault(candidate["type"], [])
        near = pool_vectors.setdefault(candidate["type"], [])
        match = _best_match(vector, near)
        into = replaces = ""
        if match is not None:
            other_id, other_conf, decided = pool[match]
            if decided or other_conf >= candidate["confidence"] or other_id in decisions:
                into = other_id
            else:
                replaces = other_id
                pool[match] = (candidate["node_id"], candidate["confidence"], False)
                near[match] = vector
        if not into and not replaces:
            pool.append((candidate["node_id"], candidate["confidence"], False))
            near.append(vector)
        decisions[candidate["node_id"]] = (into, replaces)
    decisions.update({c["node_id"]: ("", "") for c in kept_out})
    ordered = sorted(fresh + kept_out, key=lambda c: (c["file"], c["line_start"], c["key"]))
    return [(c, *decisions[c["node_id"]]) for c in ordered], ""


def _best_match(vector: np.ndarray[Any, Any], pool: list[np.ndarray[Any, Any]]) -> int | None:
    if not pool:
        return None
    sims = np.vstack(pool) @ vector
    best = int(np.argmax(sims))
    return best if float(sims[best]) >= DEDUP_THRESHOLD else None


def _node_vectors(library: Kernel, texts: list[str]) -> np.ndarray[Any, Any]:
    """Normalised vectors for texts, embedded once each and cached by (model, text hash)."""
    from store.skills.surface import text_hash

    hashes = [text_hash(t) for t in texts]
    library.vectors.embed_missing(dict(zip(hashes, texts, strict=True)))
    found = library.vectors.cached_vectors(set(hashes))
    return np.vstack([found[h] for h in hashes]) if hashes else np.zeros((0, 384))
