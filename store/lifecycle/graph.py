"""The skill dependency graph: relations added by hand (checked) and the blast radius of a
skill — every skill that transitively depends on it, plus the sessions, patterns and drafts
that rely on it (DESIGN §8).

A skill *depends on* another when it `requires` or `extends` it (the frontmatter's and the
hand-made relations alike); `complements`, `enables` and `often_used_with` are reported as
related at depth 1 but do not propagate. The reverse adjacency is built once per catalog state
(one query) and kept, so a blast radius is a breadth-first walk over dictionaries.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from store import catalog
from store.errors import LibrarianError
from store.lifecycle.gcpause import paused_gc
from store.lifecycle.health import settings
from store.lifecycle.requirements import pins_on, unproven
from store.models import (
    RELATION_TYPES,
    BlastRadius,
    Dependency,
    Dependent,
    GraphFocus,
    GraphProblems,
    Relation,
)
from store.models.events import EventType
from store.models.governance import UnprovenRequirement

if TYPE_CHECKING:
    from store.kernel import Kernel

from store.models import DEPENDENCY_TYPES

RELATED_TYPES = ("complements", "enables", "often_used_with")
_QUOTED = re.compile(r"'(\w+)'")
#: Events that change the graph (a skill's relations or status, a relation by hand).
GRAPH_EVENTS = (
    EventType.RELATION_ADDED,
    EventType.RELATION_REMOVED,
    EventType.SKILL_INSTALLED,
    EventType.SKILL_CHANGED,
    EventType.SKILL_UNINSTALLED,
    EventType.SKILL_PROPOSED,
    EventType.SKILL_PROMOTED,
    EventType.SKILL_DEPRECATED,
    EventType.SKILL_RETIRED,
)


class RelationError(LibrarianError):
    """A relation that cannot be added or removed."""


class Reach(NamedTuple):
    """A walk up the reverse graph from one skill."""

    dependents: list[Dependent]  # nearest first; only the first `limit` when one was given
    related: list[Dependent]  # complements/enables/often_used_with pointing at it, by name
    total: int  # every transitive dependent
    direct: int  # those at depth 1
    names: frozenset[str] = frozenset()  # every transitive dependent's name
    pinned: tuple[Dependent, ...] = ()  # direct dependents pinned to another version: not hit


class DependencyGraph:
    """Both adjacencies of active skills by name, rebuilt when the catalog changes.

    `_dependents` (target -> [(source, type)]) serves the blast radius, `_forward`
    (source -> [(target, type, origin)]) the problems around one skill; the rows they came
    from are kept for the problems of the whole graph (dangling references, cycles,
    self-relations), which are found once per catalog state.
    """

    def __init__(self, library: Kernel) -> None:
        self.library = library
        self._lock = threading.Lock()
        self._signature: tuple[Any, ...] = ()
        self._rows: list[tuple[str, str, str, str]] = []  # (source, type, target, origin)
        self._dependents: dict[str, list[tuple[str, str]]] = {}
        self._requirers: dict[str, list[tuple[str, str]]] = {}  # requires/extends only
        self._forward: dict[str, list[tuple[str, str, str]]] = {}
        self._pins: dict[tuple[str, str, str], int] = {}  # (source, type, target) -> version
        self._status: dict[str, str] = {}
        self._problems: GraphProblems | None = None

    def _current_signature(self, conn: Any) -> tuple[Any, ...]:
        """What the graph depends on, in a few index seeks: the last event of each type
        that touches skills or relations (this tells a change apart even when the clock
        stands still: remove one relation, add another in the same second), and the last
        row of both tables."""
        last = tuple(
            conn.execute("SELECT max(seq) FROM events WHERE type=?", (kind,)).fetchone()[0]
            for kind in GRAPH_EVENTS
        )
        rows = conn.execute(
            "SELECT (SELECT max(rowid) FROM relations), (SELECT max(skill_id) FROM skills)"
        ).fetchone()
        return (*last, *rows)

    def _load(self) -> None:
        with paused_gc():
            self._read()

    def _read(self) -> None:
        # Plain scans, no join and no ORDER BY: the names are mapped and the rows sorted
        # here, which is cheaper than SQLite's sorter at 200,000 relations.
        with self.library.db.read() as conn:
            signature = self._current_signature(conn)
            if signature == self._signature:
                return
            skills = conn.execute(
                "SELECT skill_id, name, status FROM skills WHERE status != 'uninstalled'"
            ).fetchall()
            relations = conn.execute(
                "SELECT source_id, type, target_name, origin, pin FROM relations"
            ).fetchall()
        names = {sid: name for sid, name, _ in skills}
        status = {name: st for _, name, st in skills}
        rows = sorted(
            (names[sid], kind, target, origin)
            for sid, kind, target, origin, _pin in relations
            if sid in names
        )
        pins: dict[tuple[str, str, str], int] = {}
        for sid, kind, target, _origin, pin in relations:
            if pin and sid in names:  # a hand-made pin and a declared one: the higher
                key = (names[sid], kind, target)
                pins[key] = max(pins.get(key, 0), int(pin))
        self._pins = pins
        dependents: dict[str, list[tuple[str, str]]] = defaultdict(list)
        requirers: dict[str, list[tuple[str, str]]] = defaultdict(list)
        forward: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for source, kind, target, origin in rows:
            forward[source].append((target, kind, origin))
            if source != target:
                dependents[target].append((source, kind))
                if kind in DEPENDENCY_TYPES:
                    requirers[target].append((source, kind))
        self._rows, self._dependents, self._status = rows, dict(dependents), status
        self._requirers = dict(requirers)
        self._forward = dict(forward)
        self._signature, self._problems = signature, None

    def walk(self, name: str, limit: int | None = None, version: int = 0) -> Reach:
        """Every skill that transitively requires or extends `name` (breadth first, so each
        at its nearest depth, with one shortest path), and the related skills at depth 1.
        With `limit`, only the nearest `limit` dependents are built, but all are counted.
        With `version`, the walk is that version's: a direct dependent pinned to another
        version is not hit (it is listed in `pinned`, and nothing is reached through it)."""
        with self._lock:
            self._load()
        with paused_gc():
            return self._walk(name, limit, version)

    def _walk(self, name: str, limit: int | None, version: int = 0) -> Reach:
        dependents, requirers, status = self._dependents, self._requirers, self._status
        pins = self._pins
        # Only requires/extends propagate, so the walk follows those edges alone (a hub's
        # complements would triple it), and each path is its predecessor's plus one name.
        paths: dict[str, tuple[str, ...]] = {name: (name,)}
        reached: list[tuple[str, str, int]] = []  # (name, type, depth), nearest first
        away: dict[str, Dependent] = {}  # pinned to another version than `version`
        queue = deque([(name, 1)])
        while queue:
            current, depth = queue.popleft()
            path = paths[current]
            for source, kind in requirers.get(current, ()):
                pin = pins.get((source, kind, current), 0) if depth == 1 else 0
                if version and pin and pin != version:
                    away.setdefault(
                        source, Dependent(source, status.get(source, "?"), kind, 1, path, pin)
                    )
                    continue
                if source not in paths:
                    paths[source] = (source, *path)
                    reached.append((source, kind, depth))
                    queue.append((source, depth + 1))
        direct = sum(1 for _, _, depth in reached if depth == 1)
        shown = reached if limit is None else reached[:limit]
        found = [
            Dependent(
                n, status.get(n, "?"), k, d, paths[n], pins.get((n, k, name), 0) if d == 1 else 0
            )
            for n, k, d in shown
        ]
        related = {s: k for s, k in dependents.get(name, ()) if k not in DEPENDENCY_TYPES}
        near = [
            Dependent(n, status.get(n, "?"), kind, 1, (n, name))
            for n, kind in sorted(related.items())
            if n not in paths
        ]
        pinned = tuple(away[n] for n in sorted(away) if n not in paths)
        return Reach(found, near, len(reached), direct, frozenset(n for n, _, _ in reached), pinned)

    def problems_of(self, name: str, dependents: frozenset[str]) -> GraphProblems:
        """The problems that touch one skill, without searching the whole graph: its
        dangling references, its self-relations, and its knot — the skills it depends on
        that also depend on it. Every such skill is among its transitive `dependents` (so
        the forward search never leaves them)."""
        with self._lock:
            self._load()
            forward, status = self._forward, self._status
        outgoing = forward.get(name, [])
        dangling = [Relation(name, k, t, o, True) for t, k, o in outgoing if t not in status]
        loops = [Relation(name, k, t, o) for t, k, o in outgoing if t == name]
        edges: dict[str, list[str]] = {}
        knot = {name}
        queue = deque([name])
        while queue:
            node = queue.popleft()
            for target, kind, _ in forward.get(node, ()):
                if kind in DEPENDENCY_TYPES and target in dependents and target != node:
                    edges.setdefault(node, []).append(target)
                    if target not in knot:
                        knot.add(target)
                        queue.append(target)
        members = tuple(sorted(knot))
        cycles = (_cycle_in(members, edges),) if len(members) > 1 else ()
        unproven = self._unproven(name)
        return GraphProblems(
            dangling=tuple(dangling),
            cycles=cycles,
            knots=(members,) if cycles else (),
            self_loops=(*loops, *_ignored_self_relations(self.library, name)),
            unproven=unproven,
        )

    def _unproven(self, name: str | None = None) -> tuple[UnprovenRequirement, ...]:
        """Stable skills that require or extend a proposed one (those touching `name`)."""
        status = self._status
        if name is None:
            rows = self._rows
        else:
            rows = [(name, kind, target, o) for target, kind, o in self._forward.get(name, ())]
            rows += [(source, kind, name, "") for source, kind in self._requirers.get(name, ())]
        found = {
            (source, kind, target)
            for source, kind, target, _ in rows
            if kind in DEPENDENCY_TYPES
            and source != target
            and status.get(source) == "stable"
            and status.get(target) == "proposed"
        }
        return tuple(
            unproven(source, kind, target, "proposed") for source, kind, target in sorted(found)
        )

    def cycles_through(self, name: str) -> tuple[tuple[str, ...], ...]:
        """The shortest `requires`/`extends` cycle through `name` (starting at its smallest
        member, as the scan reports cycles), or none; for the skill detail."""
        found = self.problems_of(name, self.walk(name, 0).names)
        if not found.knots:
            return ()
        members = found.knots[0]
        with self._lock:
            forward = self._forward
        edges = {
            n: [t for t, kind, _ in forward.get(n, ()) if kind in DEPENDENCY_TYPES and t != n]
            for n in members
        }
        cycle = list(_cycle_in((name, *members), edges))
        start = cycle.index(min(cycle))
        return (tuple(cycle[start:] + cycle[:start]),)

    def blast(self, name: str) -> tuple[list[Dependent], list[Dependent]]:
        """(transitive dependents with depth and path, related skills at depth 1)."""
        reach = self.walk(name)
        return reach.dependents, reach.related

    def problems(self) -> GraphProblems:
        """Dangling references, dependency cycles and self-relations (cached per state)."""
        with self._lock:
            self._load()
            if self._problems is None:
                found = _find_problems(self._rows, self._status)
                ignored = _ignored_self_relations(self.library)
                self._problems = replace(
                    found, self_loops=(*found.self_loops, *ignored), unproven=self._unproven()
                )
            return self._problems


def _find_problems(rows: list[tuple[str, str, str, str]], status: dict[str, str]) -> GraphProblems:
    dangling: list[Relation] = []
    self_loops: list[Relation] = []
    edges: dict[str, list[str]] = {}
    for source, kind, target, origin in rows:
        if target not in status:
            dangling.append(Relation(source, kind, target, origin, True))
        elif target == source:
            self_loops.append(Relation(source, kind, target, origin))
        elif kind in DEPENDENCY_TYPES:
            edges.setdefault(source, []).append(target)
    knots = [tuple(sorted(c)) for c in strongly_connected(edges) if len(c) > 1]
    knots.sort()
    cycles = [_cycle_in(knot, edges) for knot in knots]
    return GraphProblems(
        dangling=tuple(dangling),
        cycles=tuple(cycles),
        knots=tuple(knots),
        self_loops=tuple(self_loops),
    )


def _ignored_self_relations(library: Kernel, name: str | None = None) -> list[Relation]:
    """Self-relations the parser dropped from a SKILL.md (with a `relation_self` warning),
    of every installed skill or of the one called `name`."""
    where = "" if name is None else " AND s.name = :name"
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT s.name, v.warnings FROM skills s JOIN skill_versions v"
            " ON v.skill_id = s.skill_id AND v.version_no = s.current_version"
            " WHERE s.status != 'uninstalled' AND v.warnings LIKE :code ESCAPE '\\'"
            f"{where} ORDER BY s.name, s.skill_id",
            {"code": "%relation\\_self%", "name": name},
        ).fetchall()
    found = []
    for source, raw in rows:
        for code, message in json.loads(raw):
            kind = _QUOTED.match(message)
            if code == "relation_self" and kind:
                found.append(Relation(source, kind.group(1), source, "extracted"))
    return found


def strongly_connected(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit at 50,000
    skills); every node appears in exactly one component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    nodes = set(edges)
    for targets in edges.values():
        nodes.update(targets)
    for root in sorted(nodes):
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work: list[tuple[str, Iterator[str]]] = [(root, iter(edges.get(root, ())))]
        while work:
            node, children = work[-1]
            pushed = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                    pushed = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if pushed:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _cycle_in(knot: tuple[str, ...], edges: dict[str, list[str]]) -> tuple[str, ...]:
    """A shortest cycle through the knot's smallest name, within the knot."""
    members = set(knot)
    start = knot[0]
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges.get(node, ())):
            if nxt not in members:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return tuple(reversed(path))
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    return knot  # unreachable for a strongly connected knot


def blast_radius(library: Kernel, key: str | int, version: int = 0) -> BlastRadius:
    """Everything that relies on a skill: dependents, related skills, sessions, patterns,
    drafts. With `version`, the blast radius of that version: a dependent pinned to another
    version is not hit (it is listed in `pinned`); every other dependent is."""
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RelationError(f"no skill named {key!r}")
        name, status = conn.execute(
            "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        if (
            version
            and not conn.execute(
                "SELECT 1 FROM skill_versions WHERE skill_id=? AND version_no=?", (sid, version)
            ).fetchone()
        ):
            raise RelationError(f"{name} has no version {version}")
        pins = pins_on(conn, name)
    reach = library.service(DependencyGraph).walk(name, version=version)
    radius = _with_uses(library, name, status, reach.dependents, reach.related)
    return replace(radius, version_no=version, pinned=reach.pinned, pins=tuple(pins))


def _with_uses(
    library: Kernel,
    name: str,
    status: str,
    dependents: list[Dependent],
    related: list[Dependent],
) -> BlastRadius:
    """The blast radius with the sessions that used the skill, their patterns and drafts."""
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


def dependencies(library: Kernel, key: str | int) -> list[Dependency]:
    """A skill's outgoing relations (every type and origin), each with its target's status,
    or "missing" when no installed skill has the target's name (a dangling reference)."""
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RelationError(f"no skill named {key!r}")
        return _dependencies(conn, sid)


def _dependencies(conn: Any, sid: int) -> list[Dependency]:
    rows = conn.execute(
        "SELECT r.type, r.target_name, r.origin, (SELECT t.status FROM skills t"
        " WHERE t.name = r.target_name AND t.status != 'uninstalled'"
        " ORDER BY t.scope_rank, t.root_rank, t.fs_path LIMIT 1), r.pin"
        " FROM relations r WHERE r.source_id=? ORDER BY r.target_name, r.type, r.origin",
        (sid,),
    ).fetchall()
    merged: dict[tuple[str, str], list[Any]] = {}
    for kind, target, origin, status, pin in rows:
        entry = merged.setdefault((kind, target), [[], status or "missing", 0])
        entry[0].append(origin)
        entry[2] = max(entry[2], int(pin))
    found = [
        Dependency(target, kind, tuple(origins), status, pin)
        for (kind, target), (origins, status, pin) in merged.items()
    ]
    order = {t: i for i, t in enumerate(RELATION_TYPES)}
    return sorted(found, key=lambda d: (order.get(d.relation, len(order)), d.name))


def problems(library: Kernel) -> GraphProblems:
    """Dangling references, `requires`/`extends` cycles (from the frontmatter too, which
    `relate` cannot refuse) and self-relations, among installed skills."""
    return library.service(DependencyGraph).problems()


#: The dependents a focus lists (all are counted).
FOCUS_LIMIT = 500
NO_PROBLEMS = GraphProblems((), (), (), ())


def focus(
    library: Kernel, key: str | int, *, limit: int = FOCUS_LIMIT, whole: bool = True
) -> GraphFocus:
    """One skill with its dependencies, its blast radius (the nearest `limit` dependents
    listed, all counted) and the problems that touch it.

    `whole=False` reads only what SQL answers at once — the skill, its dependencies and its
    direct dependents — without loading the whole graph (the first, quick half of a screen;
    `complete` is False and the problems are left empty)."""
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise RelationError(f"no skill named {key!r}")
        name, status, version, description = conn.execute(
            "SELECT s.name, s.status, s.current_version, v.description FROM skills s"
            " JOIN skill_versions v ON v.skill_id = s.skill_id"
            " AND v.version_no = s.current_version WHERE s.skill_id=?",
            (sid,),
        ).fetchone()
        found = _dependencies(conn, sid)
        if not whole:
            reach = _direct(conn, name, limit)
    touching = NO_PROBLEMS
    if whole:
        graph = library.service(DependencyGraph)
        reach = graph.walk(name, limit)
        touching = graph.problems_of(name, reach.names)
    return GraphFocus(
        skill_id=sid,
        name=name,
        status=status,
        version_no=int(version),
        description=description,
        dependencies=tuple(found),
        radius=_with_uses(library, name, status, reach.dependents, reach.related),
        dependent_count=reach.total,
        direct_count=reach.direct,
        problems=touching if whole else NO_PROBLEMS,
        complete=whole,
    )


def _direct(conn: Any, name: str, limit: int) -> Reach:
    """The skills pointing at `name` (one index range), as a walk of depth 1."""
    rows = conn.execute(
        "SELECT DISTINCT s.name, s.status, r.type FROM relations r JOIN skills s"
        " ON s.skill_id = r.source_id WHERE r.target_name=? AND s.status != 'uninstalled'"
        " AND s.name != r.target_name ORDER BY s.name, r.type, s.status",
        (name,),
    ).fetchall()
    close: dict[str, Dependent] = {}
    near: dict[str, Dependent] = {}
    for source, status, kind in rows:
        item = Dependent(source, status, kind, 1, (source, name))
        if kind in DEPENDENCY_TYPES:
            close.setdefault(source, item)
        else:
            near[source] = item
    listed = list(close.values())
    related = [d for n, d in near.items() if n not in close]
    return Reach(listed[:limit], related, len(listed), len(listed))


#: How many deprecated skills (those with the most direct dependents) `default_focus`
#: weighs by their whole blast radius.
DEFAULT_CANDIDATES = 3


def default_focus(library: Kernel) -> str | None:
    """The skill a graph opens on: among the deprecated skills (drift demotes to deprecated),
    those drifting still undemoted and those whose candidate version drifted (set aside), the
    one with the largest blast radius; else the first installed skill by name (None: no
    skills).

    Cheap without the loaded graph or the health window: "drifting" is judged on the
    catalog's all-time counts (failures above the fail threshold over enough runs), SQL
    shortlists the candidates with the most direct dependents, and a recursive query counts
    the whole radius of those few."""
    s = settings(library)
    marks = ",".join("?" * len(DEPENDENCY_TYPES))
    with library.db.read() as conn:
        shortlist = [
            str(r[0])
            for r in conn.execute(
                "SELECT d.name, (SELECT count(DISTINCT s.name) FROM relations r JOIN skills s"
                f" ON s.skill_id = r.source_id WHERE r.target_name = d.name AND r.type IN ({marks})"
                " AND s.status != 'uninstalled' AND s.name != d.name) AS n"
                " FROM skills d WHERE d.status = 'deprecated' OR (d.status IN ('stable',"
                " 'proposed') AND d.success_count + d.failure_count >= ? AND d.failure_count"
                " > ? * (d.success_count + d.failure_count)) OR d.skill_id IN (SELECT skill_id"
                " FROM skill_candidates WHERE status = 'set_aside')"
                " ORDER BY n DESC, d.name LIMIT ?",
                (*DEPENDENCY_TYPES, s["min_runs"], s["fail"], DEFAULT_CANDIDATES),
            )
        ]
        if shortlist:
            sizes = {n: _radius_size(conn, n) for n in shortlist}
            return max(shortlist, key=lambda n: sizes[n])  # the first of equals: more direct
        row = conn.execute(
            "SELECT name FROM skills WHERE status != 'uninstalled' ORDER BY name LIMIT 1"
        ).fetchone()
    return str(row[0]) if row else None


#: Radii are counted up to this size when choosing the default (beyond it: a tie, which the
#: number of direct dependents breaks), so a hub of 50,000 skills costs no more than this.
DEFAULT_COUNT_CAP = 2000


def _radius_size(conn: Any, name: str) -> int:
    marks = ",".join("?" * len(DEPENDENCY_TYPES))
    row = conn.execute(
        "WITH RECURSIVE up(name) AS (SELECT ? UNION SELECT s.name FROM up JOIN relations r"
        f" ON r.target_name = up.name AND r.type IN ({marks}) JOIN skills s"
        " ON s.skill_id = r.source_id AND s.status != 'uninstalled' LIMIT ?)"
        " SELECT count(*) FROM up",
        (name, *DEPENDENCY_TYPES, DEFAULT_COUNT_CAP + 1),
    ).fetchone()
    return int(row[0]) - 1
