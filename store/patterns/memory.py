"""Serving knowledge back: memory search, pitfalls, diagnose, the profile, and the retrieval
log every one of them writes (DESIGN §7).

Ranking: cosine similarity of the query's embedding with each pattern (the normalised mean of
its members' vectors) and each approved node, plus a small lexical bonus for query terms that
appear in the title or summary; patterns are weighted by their (decayed) confidence. Node and
pattern vectors are loaded once per process and reloaded only when approvals or patterns
change, so a long-running MCP server answers from memory.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from store.ingest.redact import redact
from store.models import PATTERN_KINDS, MemoryHit, Pattern, Retrieval, Step
from store.patterns.consolidate import load_approved, node_vectors
from store.patterns.retrieval_log import RetrievalLog
from store.query_terms import query_terms
from store.text import one_line

if TYPE_CHECKING:
    import sqlite3

    from store.kernel import Kernel

Matrix = np.ndarray[Any, Any]

_PATTERN_COLUMNS = (
    "pattern_id, kind, polarity, title, summary, trigger, steps, resolution, severity, scope,"
    " project, classifier, base_confidence, confidence, members, sessions, developers,"
    " first_seen, last_seen, status, retrieval_count, last_retrieved_at, skill_name, flaw"
)
LIVE = ("active", "graduated")
SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2, "": 3}


def pattern_from_row(r: Sequence[Any]) -> Pattern:
    steps = tuple(
        Step(
            text=str(s.get("text", "")),
            node_id=str(s.get("node_id", "")),
            session_id=str(s.get("session_id", "")),
            file=str(s.get("file", "")),
            line_start=int(s.get("line_start", 0)),
            line_end=int(s.get("line_end", 0)),
        )
        for s in json.loads(r[6] or "[]")
    )
    return Pattern(
        pattern_id=r[0],
        kind=r[1],
        polarity=r[2],
        title=r[3],
        summary=r[4],
        trigger=r[5],
        steps=steps,
        resolution=r[7],
        severity=r[8],
        scope=r[9],
        project=r[10],
        classifier=r[11],
        base_confidence=float(r[12]),
        confidence=float(r[13]),
        members=int(r[14]),
        sessions=int(r[15]),
        developers=int(r[16]),
        first_seen=r[17],
        last_seen=r[18],
        status=r[19],
        retrieval_count=int(r[20]),
        last_retrieved_at=r[21],
        skill_name=r[22],
        flaw=r[23],
    )


def list_patterns(
    conn: sqlite3.Connection,
    *,
    kind: str | None = None,
    project: str | None = None,
    statuses: Sequence[str] = ("active", "decayed", "graduated"),
    min_confidence: float | None = None,
    served: bool = False,
) -> list[Pattern]:
    """Patterns by kind, project (or TEAM scope), status and confidence; `served`: only
    those that pass the pattern bar (what agents may be given)."""
    where = [f"status IN ({','.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    if served:
        where.append("flaw = ''")
    if kind:
        where.append("kind=?")
        params.append(kind)
    if project:
        where.append("(project=? OR scope='TEAM')")
        params.append(project)
    if min_confidence is not None:
        where.append("confidence >= ?")
        params.append(min_confidence)
    rows = conn.execute(
        f"SELECT {_PATTERN_COLUMNS} FROM patterns WHERE {' AND '.join(where)}"
        " ORDER BY kind, confidence DESC, sessions DESC, pattern_id",
        params,
    ).fetchall()
    return [pattern_from_row(r) for r in rows]


def get_pattern(conn: sqlite3.Connection, pattern_id: str) -> Pattern | None:
    row = conn.execute(
        f"SELECT {_PATTERN_COLUMNS} FROM patterns WHERE pattern_id=?", (pattern_id,)
    ).fetchone()
    return pattern_from_row(row) if row else None


def log_retrieval(
    library: Kernel,
    tool: str,
    query: str,
    hits: Sequence[tuple[str, str, int, float]],
    *,
    project: str = "",
    session_id: str = "",
) -> int:
    """Record one retrieval (kind, id, rank, score per hit) in the library's retrieval log
    (which may coalesce repeats, see `store.patterns.retrieval_log`); returns its seq."""
    return library.service(RetrievalLog).record(
        tool, query, hits, project=project, session_id=session_id
    )


def retrievals(library: Kernel, limit: int = 100) -> list[Retrieval]:
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT seq, ts, actor, tool, query, project, calls, last_at FROM retrievals"
            " ORDER BY seq DESC LIMIT ?",
            (limit,),
        ).fetchall()
        out: list[Retrieval] = []
        for r in rows:
            hits = conn.execute(
                "SELECT kind, item_id, rank, score FROM retrieval_hits WHERE seq=? ORDER BY rank",
                (r[0],),
            ).fetchall()
            out.append(
                Retrieval(
                    seq=r[0],
                    ts=r[1],
                    actor=r[2],
                    tool=r[3],
                    query=r[4],
                    project=r[5],
                    hits=tuple((h[0], h[1], int(h[2]), float(h[3])) for h in hits),
                    calls=int(r[6]),
                    last_at=r[7],
                )
            )
    return out


@dataclass
class _Loaded:
    signature: tuple[Any, ...]
    patterns: list[Pattern]
    pattern_vectors: Matrix
    node_ids: list[str]
    node_meta: list[tuple[str, str, str, str]]  # project, scope, type, summary
    node_vectors: Matrix
    pattern_texts: list[str]  # lower-cased title, summary, trigger and resolution
    pattern_weights: Matrix  # 0.7 + 0.3·confidence
    pattern_team: Matrix  # bool: TEAM scope
    pattern_projects: Matrix  # object: project
    pattern_kinds: Matrix  # object: kind
    pattern_confidence: Matrix

    def shortlist(
        self, vector: Matrix, project: str, kinds: Sequence[str], floor: float, size: int
    ) -> list[tuple[int, float]]:
        """(index, similarity) of the patterns a query may return, best dense score first:
        the lexical bonus then re-ranks this shortlist (it never reaches the long tail)."""
        if not self.patterns:
            return []
        sims = self.pattern_vectors @ vector
        allowed = np.isin(self.pattern_kinds, list(kinds)) & (self.pattern_confidence >= floor)
        if project:
            allowed &= self.pattern_team | (self.pattern_projects == project)
        idx = np.flatnonzero(allowed)
        if not len(idx):
            return []
        scores = sims[idx] * self.pattern_weights[idx]
        keep = min(len(idx), size)
        top = np.argpartition(-scores, keep - 1)[:keep] if keep < len(idx) else np.arange(keep)
        chosen = sorted(top.tolist(), key=lambda j: (-float(scores[j]), int(idx[j])))
        return [(int(idx[j]), float(sims[idx[j]])) for j in chosen]


class Memory:
    """Search over patterns and approved nodes for one library (thread-safe, cached)."""

    def __init__(self, library: Kernel) -> None:
        self.library = library
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._checked: tuple[int, int] = (-1, -1)

    # -- loading ----------------------------------------------------------------------------

    def _signature(self) -> tuple[Any, ...]:
        """Approved nodes and patterns as of now. Counting them scans an index (~60 ms at
        100k nodes), so it is only done when something may have changed: another process
        committed (`PRAGMA data_version`) or this one appended a node or pattern event."""
        with self.library.db.read() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        key = (version, self.library.memory_epoch)
        if self._loaded is not None and key == self._checked:
            return self._loaded.signature
        self._checked = key
        with self.library.db.read() as conn:
            nodes = conn.execute(
                "SELECT count(*), max(updated_at) FROM nodes WHERE status='approved'"
            ).fetchone()
            patterns = conn.execute("SELECT count(*), max(updated_at) FROM patterns").fetchone()
        return (*nodes, *patterns)

    def load(self) -> _Loaded:
        with self._lock:
            signature = self._signature()
            if self._loaded is not None and self._loaded.signature == signature:
                return self._loaded
            self._loaded = self._load(signature)
            return self._loaded

    def _load(self, signature: tuple[Any, ...]) -> _Loaded:
        nodes = load_approved(self.library)
        vectors, _ = node_vectors(self.library, nodes)
        index = {n.node_id: i for i, n in enumerate(nodes)}
        with self.library.db.read() as conn:
            patterns = list_patterns(conn, statuses=LIVE, served=True)
            members: dict[str, list[str]] = {}
            for pid, nid in conn.execute("SELECT pattern_id, node_id FROM pattern_members"):
                members.setdefault(pid, []).append(nid)
        dim = vectors.shape[1] if len(vectors) else 384
        pattern_vectors = np.zeros((len(patterns), dim), dtype=np.float32)
        for i, p in enumerate(patterns):
            rows = [index[n] for n in members.get(p.pattern_id, []) if n in index]
            if rows:
                mean = vectors[rows].mean(axis=0)
                norm = float(np.linalg.norm(mean))
                pattern_vectors[i] = mean / (norm or 1.0)
        return _Loaded(
            signature=signature,
            patterns=patterns,
            pattern_vectors=pattern_vectors,
            node_ids=[n.node_id for n in nodes],
            node_meta=[(n.project, n.scope, n.type, n.summary) for n in nodes],
            node_vectors=vectors,
            pattern_texts=[
                f"{p.title} {p.summary} {p.trigger} {p.resolution}".lower() for p in patterns
            ],
            pattern_weights=np.array(
                [0.7 + 0.3 * min(1.0, p.confidence) for p in patterns], dtype=np.float32
            ),
            pattern_team=np.array([p.scope == "TEAM" for p in patterns], dtype=bool),
            pattern_projects=np.array([p.project for p in patterns], dtype=object),
            pattern_kinds=np.array([p.kind for p in patterns], dtype=object),
            pattern_confidence=np.array([p.confidence for p in patterns], dtype=np.float64),
        )

    def _embed(self, text: str) -> Matrix:
        vector = np.asarray(self.library.embedder.embed([text])[0], dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        return vector / (norm or 1.0)

    # -- queries ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        project: str = "",
        limit: int | None = None,
        kinds: Sequence[str] = ("pattern", "node"),
        tool: str = "search",
        log: bool = True,
    ) -> list[MemoryHit]:
        """Patterns and approved nodes for a free-text query, best first; logged."""
        limit = limit or int(self.library.config.get("patterns.limit", 8))
        loaded = self.load()
        vector = self._embed(query)
        terms = _terms(query)
        scored: list[tuple[float, str, str, str, str, str]] = []
        if "pattern" in kinds:
            for i, sim in loaded.shortlist(vector, project, PATTERN_KINDS, -1.0, limit * 8 + 50):
                p = loaded.patterns[i]
                score = _blend(sim, loaded.pattern_texts[i], terms) * loaded.pattern_weights[i]
                scored.append((float(score), "pattern", p.pattern_id, p.title, "", p.kind))
        if "node" in kinds and loaded.node_ids:
            sims = loaded.node_vectors @ vector
            keep = min(len(sims), max(limit * 8, 50))
            top = np.argpartition(-sims, keep - 1)[:keep] if keep < len(sims) else np.arange(keep)
            for i in sorted(top.tolist(), key=lambda j: (-float(sims[j]), j)):
                node_project, scope, node_type, summary = loaded.node_meta[i]
                if project and scope != "TEAM" and node_project != project:
                    continue
                score = _blend(float(sims[i]), summary, terms) * 0.9
                scored.append((score, "node", loaded.node_ids[i], summary, node_type, ""))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        by_id = {p.pattern_id: p for p in loaded.patterns} if "pattern" in kinds else {}
        hits = [
            MemoryHit(
                rank=rank,
                kind=kind,
                item_id=item,
                title=title,
                detail=_pattern_detail(by_id[item]) if kind == "pattern" else detail,
                score=round(score, 4),
                pattern_kind=pkind,
            )
            for rank, (score, kind, item, title, detail, pkind) in enumerate(
                scored[:limit], start=1
            )
        ]
        if log:
            self._log(tool, query, hits, project)
        return hits

    def pitfalls(
        self, query: str = "", *, project: str = "", limit: int | None = None
    ) -> list[MemoryHit]:
        """Pitfalls above the confidence floor: ranked by relevance to `query` when given,
        else by severity, recurrence and confidence; logged."""
        limit = limit or int(self.library.config.get("patterns.limit", 8))
        if query.strip():
            return self._ranked(query, project, limit, ("pitfall",), "pitfalls")
        floor = float(self.library.config.get("patterns.min_confidence", 0.4))
        with self.library.db.read() as conn:
            found = list_patterns(
                conn,
                kind="pitfall",
                project=project or None,
                statuses=LIVE,
                min_confidence=floor,
                served=True,
            )
        found.sort(key=lambda p: (SEVERITY_RANK[p.severity], -p.sessions, -p.confidence, p.title))
        hits = [
            MemoryHit(
                rank, "pattern", p.pattern_id, p.title, _pattern_detail(p), p.confidence, p.kind
            )
            for rank, p in enumerate(found[:limit], start=1)
        ]
        self._log("pitfalls", query, hits, project)
        return hits

    def diagnose(
        self, problem: str, *, project: str = "", limit: int | None = None
    ) -> list[MemoryHit]:
        """Strategies and pitfalls that match a problem statement; logged."""
        limit = limit or int(self.library.config.get("patterns.limit", 8))
        return self._ranked(problem, project, limit, ("strategy", "pitfall"), "diagnose")

    def _ranked(
        self, query: str, project: str, limit: int, pattern_kinds: Sequence[str], tool: str
    ) -> list[MemoryHit]:
        floor = float(self.library.config.get("patterns.min_confidence", 0.4))
        loaded = self.load()
        vector = self._embed(query)
        terms = _terms(query)
        scored: list[tuple[float, Pattern]] = []
        for i, sim in loaded.shortlist(vector, project, pattern_kinds, floor, limit * 8 + 50):
            weight = float(loaded.pattern_weights[i])
            scored.append(
                (_blend(sim, loaded.pattern_texts[i], terms) * weight, loaded.patterns[i])
            )
        scored.sort(key=lambda s: (-s[0], s[1].pattern_id))
        hits = [
            MemoryHit(
                rank, "pattern", p.pattern_id, p.title, _pattern_detail(p), round(s, 4), p.kind
            )
            for rank, (s, p) in enumerate(scored[:limit], start=1)
        ]
        self._log(tool, query, hits, project)
        return hits

    def _log(self, tool: str, query: str, hits: Sequence[MemoryHit], project: str) -> None:
        log_retrieval(
            self.library,
            tool,
            query,
            [(h.kind, h.item_id, h.rank, h.score) for h in hits],
            project=project,
        )


def _terms(query: str) -> list[str]:

    return query_terms(query)


def _blend(similarity: float, text: str, terms: Sequence[str]) -> float:
    if not terms:
        return similarity
    lowered = text.lower()  # (already lower-case for patterns)
    lexical = sum(1 for t in terms if t in lowered) / len(terms)
    return 0.8 * similarity + 0.2 * lexical


def _pattern_detail(p: Pattern) -> str:
    """The detail line of a hit. Secrets are masked before the cut: masking a cut-off token
    later (as every serving path does) could no longer recognise it."""
    if p.kind == "pitfall":
        fix = p.resolution or "no recorded resolution yet"
        return one_line(redact(f"{p.severity} severity; resolution: {fix}"), 300)
    if p.kind == "strategy":
        steps = " → ".join(s.text for s in p.steps[:4])
        return one_line(redact(f"when: {p.trigger}; steps: {steps}"), 300)
    return one_line(redact(p.summary), 300)


# -- the profile ----------------------------------------------------------------------------


def profile(library: Kernel, project: str = "", *, log: bool = True) -> str:
    """The Markdown profile of a project (or of everything), logged as a retrieval of every
    pattern it includes."""
    floor = float(library.config.get("patterns.min_confidence", 0.4))
    with library.db.read() as conn:
        found = list_patterns(conn, project=project or None, statuses=LIVE, served=True)
        nodes = conn.execute(
            "SELECT count(*), count(DISTINCT session_id) FROM nodes WHERE status='approved'"
            + (" AND project=?" if project else ""),
            (project,) if project else (),
        ).fetchone()
    kept = [p for p in found if p.confidence >= floor]
    totals = f"{len(kept)} patterns over {nodes[0]} approved reasoning nodes in {nodes[1]} sessions"
    text = render_profile(
        found, project=project, floor=floor, generated=library.clock()[:10], totals=totals
    )
    if log:
        hits = [("pattern", p.pattern_id, i, p.confidence) for i, p in enumerate(kept, 1)]
        log_retrieval(library, "profile", project or "*", hits, project=project)
    return text


def render_profile(
    patterns: Sequence[Pattern], *, project: str, floor: float, generated: str, totals: str
) -> str:
    """A Markdown profile an agent can load. Untrusted text is folded to single, printable
    lines with secrets masked (`_line`); patterns below the confidence floor or below the
    pattern bar are left out."""
    kept = [p for p in patterns if p.confidence >= floor and p.status in LIVE and p.served]
    where = project or "all projects"
    out = [
        f"# Knowledge profile: {one_line(where, 200)}",
        "",
        f"Generated {generated} by skill-librarian from {totals}. Patterns below confidence"
        f" {floor:.2f}, and patterns that do not pass the pattern bar, are left out.",
        "",
    ]
    insights = [p for p in kept if p.kind == "insight"]
    pitfalls = sorted(
        (p for p in kept if p.kind == "pitfall"),
        key=lambda p: (SEVERITY_RANK[p.severity], -p.sessions, -p.confidence, p.pattern_id),
    )
    strategies = [p for p in kept if p.kind == "strategy"]
    out += ["## Architectural insights", ""]
    out += [f"- {_line(p.title)}: {_line(p.summary)} ({_stats(p)})" for p in insights] or [
        "- none yet"
    ]
    out += ["", "## Pitfalls, most severe first", ""]
    for rank, p in enumerate(pitfalls, start=1):
        out.append(f"{rank}. {_line(p.title)} ({p.severity} severity; {_stats(p)})")
        out.append(f"   - Seen when: {_line(p.trigger)}")
        out.append(f"   - Resolution: {_line(p.resolution) or 'no recorded resolution yet'}")
    if not pitfalls:
        out.append("- none yet")
    out += ["", "## Diagnostic strategies", ""]
    for p in strategies:
        out.append(f"### {_line(p.title)}")
        out.append("")
        out.append(f"Applies when: {_line(p.trigger)} ({_stats(p)})")
        out.append("")
        out += [f"{i}. {_line(s.text)}" for i, s in enumerate(p.steps, start=1)]
        out.append("")
    if not strategies:
        out += ["- none yet", ""]
    key = [p for p in kept if p.polarity == "key"]
    anti = [p for p in kept if p.polarity == "anti"]
    out += ["## Key patterns (what worked, repeatedly)", ""]
    out += [f"- {_line(p.title)} ({_stats(p)})" for p in key] or ["- none yet"]
    out += ["", "## Anti-patterns (what failed, repeatedly)", ""]
    out += [f"- {_line(p.title)} ({_stats(p)})" for p in anti] or ["- none yet"]
    return "\n".join(out).rstrip() + "\n"


def _line(text: str) -> str:
    """Secrets masked before the cut (no part of one is left), one printable line."""
    return one_line(redact(text), 400).replace("<", "‹").replace(">", "›")


def _stats(p: Pattern) -> str:
    sessions = f"{p.sessions} session{'s' if p.sessions != 1 else ''}"
    return f"{sessions}, confidence {p.confidence:.2f}, {p.pattern_id}"
