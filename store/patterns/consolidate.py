"""Consolidation: approved nodes -> clusters -> classified patterns (DESIGN §7).

Each approved node is embedded as "{type}: {summary}" (the same text dedup embeds, so the
vectors are usually cached already), clustered with average linkage at cosine distance 0.4
(`store.patterns.cluster`), and every cluster of two or more nodes becomes a pattern.

Incremental: the last clustering is kept in `cluster_cache` (a cache, not a projection). When
the only change is a modest number of newly approved nodes, they join existing clusters by the
average-linkage criterion (`cluster.assign`) and the rest are clustered among themselves; any
other change (an edit, a reopened node, a first run) re-clusters everything. Pattern ids are
stable: a new cluster keeps the id of the old pattern it overlaps most.

Writes one `pattern.consolidated` event with only the patterns that changed (nothing when
nothing did), then a decay pass (`pattern.decayed`).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from store.content import pattern_refs
from store.ingest.pipeline import node_text
from store.models import ConsolidationReport
from store.patterns import decay as decay_mod
from store.patterns.classify import (
    NodeRow,
    SessionGraph,
    ToolCaller,
    classify_llm,
    classify_rules,
    flaw_of,
)
from store.skills.surface import text_hash

if TYPE_CHECKING:
    from store.kernel import Kernel

log = logging.getLogger(__name__)

Matrix = np.ndarray[Any, Any]

#: Part of every fingerprint: when the classification rules change, every pattern classified
#: by rules is classified again at the next consolidation (an LLM's reading is kept).
RULES_VERSION = "2"
#: Up to this many new nodes (or this share of the clustered ones) join incrementally.
INCREMENTAL_MIN = 64
INCREMENTAL_SHARE = 0.10

_NODE_COLUMNS = (
    "n.node_id, n.session_id, n.project, n.type, n.summary, n.evidence, n.file, n.line_start,"
    " n.line_end, n.confidence, n.scope, n.status, n.developer,"
    " COALESCE(NULLIF(s.started_at, ''), n.created_at)"
)


def load_approved(library: Kernel) -> list[NodeRow]:
    with library.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_NODE_COLUMNS} FROM nodes n LEFT JOIN sessions s USING(session_id)"
            " WHERE n.status='approved' ORDER BY n.node_id"
        ).fetchall()
    return [_row(r) for r in rows]


def _row(r: Sequence[Any]) -> NodeRow:
    return NodeRow(
        node_id=r[0],
        session_id=r[1],
        project=r[2],
        type=r[3],
        summary=r[4],
        evidence=r[5],
        file=r[6],
        line_start=int(r[7]),
        line_end=int(r[8]),
        confidence=float(r[9]),
        scope=r[10],
        status=r[11],
        developer=r[12],
        seen=str(r[13] or ""),
    )


def node_vectors(library: Kernel, nodes: Sequence[NodeRow]) -> tuple[Matrix, list[str]]:
    """Normalised vectors (embedding what is missing) and the text hashes, in node order."""
    texts = [node_text(n.type, n.summary) for n in nodes]
    hashes = [text_hash(t) for t in texts]
    if not nodes:
        return np.zeros((0, 384), dtype=np.float32), hashes
    library.vectors.embed_missing(dict(zip(hashes, texts, strict=True)))
    found = library.vectors.cached_vectors(set(hashes))
    matrix = np.vstack([found[h] for h in hashes]).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms, hashes


def consolidate(
    library: Kernel,
    *,
    full: bool = False,
    llm: ToolCaller | None = None,
    progress: Callable[[str], None] | None = None,
) -> ConsolidationReport:
    """Cluster approved nodes into patterns and record what changed."""
    from store.patterns import cluster as clustering  # scipy: only consolidation loads it

    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    threshold = float(library.config.get("patterns.distance", 0.4))
    nodes = load_approved(library)
    say(f"{len(nodes)} approved nodes")
    vectors, hashes = node_vectors(library, nodes)
    cached = _cache(library)
    current = {n.node_id: h for n, h in zip(nodes, hashes, strict=True)}
    method, labels = "none", np.zeros(len(nodes), dtype=np.int64)
    stale = full or any(current.get(node_id) != h for node_id, (h, _) in cached.items())
    new = [i for i, n in enumerate(nodes) if n.node_id not in cached]
    incremental_cap = max(INCREMENTAL_MIN, int(INCREMENTAL_SHARE * len(cached)))
    if nodes and (stale or not cached or len(new) > incremental_cap):
        say("clustering")
        labels, stats = clustering.cluster(vectors, threshold=threshold)
        method = stats.method
    elif nodes:
        old_idx = [i for i, n in enumerate(nodes) if n.node_id in cached]
        old_labels = np.array([cached[nodes[i].node_id][1] for i in old_idx], dtype=np.int64)
        labels[old_idx] = old_labels
        if new:
            method = "incremental"
            joined = clustering.assign(
                vectors[new], vectors[old_idx], old_labels, threshold=threshold
            )
            rest = [i for i, j in zip(new, joined, strict=True) if j < 0]
            for i, j in zip(new, joined, strict=True):
                if j >= 0:
                    labels[i] = j
            if rest:
                sub, _ = clustering.cluster(vectors[rest], threshold=threshold)
                base = int(old_labels.max()) + 1 if len(old_labels) else 0
                labels[rest] = sub + base
    groups: dict[int, list[int]] = defaultdict(list)
    for i, label in enumerate(labels.tolist()):
        groups[label].append(i)
    clusters = [
        _medoid_first(idx, vectors, nodes) for idx in groups.values() if len(idx) >= 2 and nodes
    ]
    clusters.sort(key=lambda idx: nodes[idx[0]].node_id)
    say(f"{len(clusters)} clusters of two or more")
    records, dissolved, unchanged, notes = _records(library, nodes, hashes, clusters, llm)
    created = changed = 0
    with library.db.write() as conn:
        existing = {r[0] for r in conn.execute("SELECT pattern_id FROM patterns")}
        created = sum(1 for r in records if r["pattern_id"] not in existing)
        changed = len(records) - created
        if records or dissolved:
            library.append_event(
                conn,
                "pattern.consolidated",
                "patterns",
                {
                    "patterns": [pattern_refs(conn, r) for r in records],
                    "dissolved": dissolved,
                    "method": method,
                    "nodes": len(nodes),
                },
            )
        _save_cache(conn, nodes, hashes, labels)
    decayed = decay_mod.apply_decay(library)
    classifier = "llm" if llm is not None else "rules"
    return ConsolidationReport(
        nodes=len(nodes),
        clusters=len(clusters),
        patterns=len(clusters),
        created=created,
        changed=changed,
        dissolved=len(dissolved),
        unchanged=unchanged,
        method=method,
        classifier=classifier,
        decayed=decayed,
        seconds=round(time.perf_counter() - started, 3),
        notes=tuple(notes),
    )


def _medoid_first(idx: list[int], vectors: Matrix, nodes: Sequence[NodeRow]) -> list[int]:
    """The members with the most central one first (highest mean similarity), the rest in
    index order. Scores are compared at 4 decimals, and ties (a pair is always one: both
    members are equally central) go to the more confident member, then the lower node id,
    so the choice never rests on float noise that differs between CPUs."""
    if len(idx) > 400:  # big clusters: closeness to the centroid is the same idea, O(n)
        centroid = vectors[idx].mean(axis=0)
        scores = vectors[idx] @ centroid
    else:
        sub = vectors[idx]
        scores = (sub @ sub.T).mean(axis=1)
    rounded = [round(float(x), 4) for x in scores]
    best = min(
        range(len(idx)),
        key=lambda j: (-rounded[j], -nodes[idx[j]].confidence, nodes[idx[j]].node_id),
    )
    return [idx[best], *sorted(i for j, i in enumerate(idx) if j != best)]


def _cache(library: Kernel) -> dict[str, tuple[str, int]]:
    with library.db.read() as conn:
        return {
            r[0]: (r[1], int(r[2]))
            for r in conn.execute("SELECT node_id, text_hash, label FROM cluster_cache")
        }


def _save_cache(conn: Any, nodes: Sequence[NodeRow], hashes: Sequence[str], labels: Matrix) -> None:
    conn.execute("DELETE FROM cluster_cache")
    conn.executemany(
        "INSERT INTO cluster_cache(node_id, text_hash, label) VALUES (?,?,?)",
        [
            (n.node_id, h, int(lab))
            for n, h, lab in zip(nodes, hashes, labels.tolist(), strict=True)
        ],
    )


def _fingerprint(members: Sequence[NodeRow], hashes: dict[str, str]) -> str:
    """`{RULES_VERSION}:{digest of the members}`."""
    digest = hashlib.sha256()
    for m in sorted(members, key=lambda n: n.node_id):
        digest.update(
            f"{m.node_id}\0{hashes[m.node_id]}\0{m.confidence:.4f}\0{m.scope}\0{m.seen}\n".encode()
        )
    return f"{RULES_VERSION}:{digest.hexdigest()[:16]}"


def _unchanged(before: tuple[str, str] | None, fingerprint: str, llm: ToolCaller | None) -> bool:
    """Nothing to classify again: the same members and rules (unless an LLM is to replace
    the rules' reading), or the same members read by an LLM with none given now."""
    if before is None:
        return False
    old, classifier = before
    if old == fingerprint:
        return not (llm and classifier == "rules")
    same_members = old.rsplit(":", 1)[-1] == fingerprint.rsplit(":", 1)[-1]
    return same_members and classifier == "llm" and llm is None


def _records(
    library: Kernel,
    nodes: Sequence[NodeRow],
    hashes: Sequence[str],
    clusters: list[list[int]],
    llm: ToolCaller | None,
) -> tuple[list[dict[str, Any]], list[str], int, list[str]]:
    """Records for new or changed clusters, ids of dissolved patterns, unchanged count, notes."""
    by_id = {n.node_id: h for n, h in zip(nodes, hashes, strict=True)}
    with library.db.read() as conn:
        old_members: dict[str, set[str]] = defaultdict(set)
        for pid, nid in conn.execute(
            "SELECT m.pattern_id, m.node_id FROM pattern_members m JOIN patterns p"
            " USING(pattern_id) WHERE p.status != 'dissolved'"
        ):
            old_members[pid].add(nid)
        known = {
            r[0]: (r[1], r[2])
            for r in conn.execute("SELECT pattern_id, fingerprint, classifier FROM patterns")
        }
    owner: dict[str, str] = {nid: pid for pid, ids in old_members.items() for nid in ids}
    claims: list[tuple[int, int, str, int]] = []  # (-overlap, cluster, pattern, cluster index)
    for ci, idx in enumerate(clusters):
        overlap = Counter(owner[nodes[i].node_id] for i in idx if nodes[i].node_id in owner)
        for pid, count in overlap.items():
            if count * 2 >= min(len(idx), len(old_members[pid])):
                claims.append((-count, ci, pid, ci))
    claims.sort()
    assigned: dict[int, str] = {}
    taken: set[str] = set()
    for _neg, ci, pid, _ in claims:
        if ci not in assigned and pid not in taken:
            assigned[ci] = pid
            taken.add(pid)
    graph = _session_graph(library, {nodes[i].session_id for idx in clusters for i in idx})
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    unchanged = 0
    for ci, idx in enumerate(clusters):
        members = [nodes[i] for i in idx]
        pid = (
            assigned.get(ci)
            or "p_"
            + hashlib.sha256("\n".join(sorted(m.node_id for m in members)).encode()).hexdigest()[
                :12
            ]
        )
        fingerprint = _fingerprint(members, by_id)
        if _unchanged(known.get(pid), fingerprint, llm):
            unchanged += 1
            continue
        records.append(_record(library, pid, members, graph, llm, fingerprint, notes))
    dissolved = sorted(set(old_members) - set(assigned.values()))
    return records, dissolved, unchanged, notes


def _session_graph(library: Kernel, sessions: set[str]) -> SessionGraph:
    graph = SessionGraph()
    wanted = sorted(sessions)
    with library.db.read() as conn:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in conn.execute(
                f"SELECT {_NODE_COLUMNS} FROM nodes n LEFT JOIN sessions s USING(session_id)"
                f" WHERE n.session_id IN ({marks}) AND n.status IN ('approved', 'pending')"
                " ORDER BY n.session_id, n.line_start, n.node_id",
                chunk,
            ):
                node = _row(r)
                graph.nodes[node.node_id] = node
                graph.by_session.setdefault(node.session_id, []).append(node)
            for source, target, kind in conn.execute(
                "SELECT e.source_id, e.target_id, e.type FROM edges e JOIN nodes n"
                f" ON n.node_id = e.source_id WHERE n.session_id IN ({marks})",
                chunk,
            ):
                graph.forward.setdefault(source, []).append((target, kind))
    for targets in graph.forward.values():
        targets.sort()
    return graph


def _record(
    library: Kernel,
    pattern_id: str,
    members: list[NodeRow],
    graph: SessionGraph,
    llm: ToolCaller | None,
    fingerprint: str,
    notes: list[str],
) -> dict[str, Any]:
    classified: dict[str, Any] | None = None
    if llm is not None:
        try:
            classified = classify_llm(llm, members, graph)
        except Exception as exc:  # an LLM problem never stops consolidation
            notes.append(f"{pattern_id}: LLM classification failed ({exc}); rules used")
    if classified is None:
        classified = classify_rules(members, graph)
    classified["flaw"] = flaw_of(classified, members)
    sessions = {m.session_id for m in members}
    projects = Counter(m.project for m in members)
    project = min(projects, key=lambda p: (-projects[p], p))
    team = sum(1 for m in members if m.scope == "TEAM")
    scope = "TEAM" if team * 2 > len(members) or len(projects) > 1 else "PROJECT"
    seen = sorted(m.seen for m in members)
    mean_conf = sum(m.confidence for m in members) / len(members)
    base = round(mean_conf * (1 - 0.5 ** (len(sessions) + 1)), 4)
    return {
        "pattern_id": pattern_id,
        **classified,
        "scope": scope,
        "project": project,
        "base_confidence": base,
        "confidence": base,
        "members": [[m.node_id, m.session_id] for m in sorted(members, key=lambda n: n.node_id)],
        "sessions": len(sessions),
        "developers": len({m.developer for m in members}),
        "first_seen": seen[0],
        "last_seen": seen[-1],
        "status": "active",
        "fingerprint": fingerprint,
    }
