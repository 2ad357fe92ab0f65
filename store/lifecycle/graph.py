"""The skill dependency graph: relations added by hand (checked) and the blast radius of a
skill — every skill that transitively depends on it, plus the sessions, patterns and drafts
that rely on it (DESIGN §8).

A skill *depends on* another when it `requires` or `extends` it (the frontmatter's and the
hand-made relations alike); `complements`, `enables` and `often_used_with` are reported as
related at depth 1 but do not propagate. The reverse adjacency is built once per catalog state
(one query) and kept, so a blast radius is a breadth-first walk over dictionaries.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from store.errors import LibrarianError
from store.models import RELATION_TYPES, BlastRadius, Dependent

if TYPE_CHECKING:
    from store.library import Library

DEPENDENCY_TYPES = ("requires", "extends")
RELATED_TYPES = ("complements", "enables", "often_used_with")


class RelationError(LibrarianError):
    """A relation that cannot be added or removed."""


class DependencyGraph:
    """Reverse adjacency of active skills by name, rebuilt when the catalog changes."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._lock = threading.Lock()
        self._signature: tuple[Any, ...] = ()
        self._dependents: dict[str, list[tuple[str, str]]] = {}
        self._status: dict[str, str] = {}

    def _load(self) -> None:
        with self.library.db.read() as conn:
            relations = conn.execute("SELECT count(*), max(added_at) FROM relations").fetchone()
            skills = conn.execute("SELECT count(*), max(updated_at) FROM skills").fetchone()
            signature = (*relations, *skills)
            if signature == self._signature:
                return
            status = dict(
                conn.execute("SELECT name, status FROM skills WHERE status != 'uninstalled'")
            )
            rows = conn.execute(
                "SELECT s.name, r.type, r.target_name FROM relations r JOIN skills s"
                " ON s.skill_id = r.source_id WHERE s.status != 'uninstalled'"
                " ORDER BY s.name, r.type, r.target_name"
            ).fetchall()
        dependents: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for source, kind, target in rows:
            if source != target:
                dependents[target].append((source, kind))
        self._dependents, self._status, self._signature = dict(dependents), status, signature

    def blast(self, name: str) -> tuple[list[Dependent], list[Dependent]]:
        """(transitive dependents with depth and path, related skills at depth 1)."""
        with self._lock:
            self._load()
            dependents, status = self._dependents, self._status
        found: list[Dependent] = []
        related: list[Dependent] = []
        seen = {name}
        queue: deque[tuple[str, int, tuple[str, ...]]] = deque([(name, 0, (name,))])
        while queue:
            current, depth, path = queue.popleft()
            for source, kind in dependents.get(current, []):
                if kind not in DEPENDENCY_TYPES:
                    if depth == 0 and source not in seen:
                        related.append(
                            Dependent(source, status.get(source, "?"), kind, 1, (source, name))
                        )
                    continue
                if source in seen:
                    continue
                seen.add(source)
                via = (source, *path)
                found.append(Dependent(source, status.get(source, "?"), kind, depth + 1, via))
                queue.append((source, depth + 1, via))
        related = [r for r in related if r.name not in seen]
        return found, sorted({r.name: r for r in related}.values(), key=lambda r: r.name)


def blast_radius(library: Library, key: str | int) -> BlastRadius:
    from store import catalog

    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RelationError(f"no skill named {key!r}")
        name, status = conn.execute(
            "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
    dependents, related = library.dependency_graph.blast(name)
    with library.db.read() as conn:
        sessions = tuple(
            r[0]
            for r in conn.execute(
                "SELECT u.session_id FROM skill_uses u JOIN sessions s USING(session_id)"
                " WHERE u.skill_name=? ORDER BY s.started_at DESC, u.session_id",
                (name,),
            )
        )
        patterns = tuple(
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT p.pattern_id FROM patterns p"
                " JOIN pattern_members m USING(pattern_id) JOIN skill_uses u"
                " ON u.session_id = m.session_id WHERE u.skill_name=?"
                " AND p.status != 'dissolved' ORDER BY p.pattern_id",
                (name,),
            )
        )
        marks = ",".join("?" * len(patterns))
        drafts = tuple(
            r[0]
            for r in conn.execute(
                f"SELECT draft_id FROM drafts WHERE pattern_id IN ({marks})"
                " ORDER BY created_at, draft_id",
                patterns,
            )
        )
    return BlastRadius(name, status, tuple(dependents), tuple(related), sessions, patterns, drafts)


def relate(library: Library, source: str, kind: str, target: str, *, remove: bool = False) -> str:
    """Add (or remove) a hand-made relation, checked: both skills exist, not a self-relation,
    no dependency cycle. Returns a one-line description."""
    from store import catalog

    if kind not in RELATION_TYPES:
        raise RelationError(f"unknown relation {kind!r} (one of: {', '.join(RELATION_TYPES)})")
    with library.db.write() as conn:
        ids = {}
        for key in (source, target):
            sid = catalog.resolve(conn, key)
            if sid is None:
                raise RelationError(f"no skill named {key!r}")
            ids[key] = sid
        names = {
            key: conn.execute("SELECT name FROM skills WHERE skill_id=?", (sid,)).fetchone()[0]
            for key, sid in ids.items()
        }
        src, dst = names[source], names[target]
        if src == dst:
            raise RelationError(f"a skill cannot be related to itself ({src} {kind} {src})")
        exists = conn.execute(
            "SELECT 1 FROM relations WHERE source_id=? AND type=? AND target_name=?"
            " AND origin='manual'",
            (ids[source], kind, dst),
        ).fetchone()
        payload = {"source_id": ids[source], "type": kind, "target_name": dst, "origin": "manual"}
        if remove:
            if not exists:
                raise RelationError(f"no hand-made relation {src} {kind} {dst}")
            library.append_event(conn, "relation.removed", f"skill:{src}", payload)
            return f"removed: {src} {kind} {dst}"
        if exists:
            return f"already there: {src} {kind} {dst}"
        if kind in DEPENDENCY_TYPES:
            cycle = _path(conn, dst, src)
            if cycle:
                raise RelationError(
                    f"{src} {kind} {dst} would close a cycle: " + " -> ".join([src, *cycle])
                )
        library.append_event(conn, "relation.added", f"skill:{src}", payload)
    return f"added: {src} {kind} {dst}"


def _path(conn: Any, start: str, goal: str) -> list[str]:
    """A dependency path start -> ... -> goal, if any (start depends on ... on goal)."""
    marks = ",".join("?" * len(DEPENDENCY_TYPES))
    rows = conn.execute(
        f"SELECT s.name, r.target_name FROM relations r JOIN skills s ON s.skill_id = r.source_id"
        f" WHERE s.status != 'uninstalled' AND r.type IN ({marks})",
        DEPENDENCY_TYPES,
    ).fetchall()
    forward: dict[str, list[str]] = defaultdict(list)
    for a, b in rows:
        forward[a].append(b)
    previous: dict[str, str] = {start: ""}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [node]
            while previous[path[-1]]:
                path.append(previous[path[-1]])
            return list(reversed(path))
        for nxt in sorted(forward.get(node, [])):
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return []
