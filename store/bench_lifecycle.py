"""The issue-5 benchmark library and its measurements (`librarian bench --only lifecycle`).

A library of 50,000 skills, 200,000 relations and 1,000,000 outcomes, written through the
event log exactly as a user's library is (a real `scan` of real SKILL.md folders whose
frontmatter declares relations, `relation.added` events for hand-made ones,
`session.ingested` for sessions that used skills, `skill.outcome_recorded` for runs, a
re-scan for new versions), so `librarian verify` holds on it. No embeddings: blast radius and
health do not need the model. Built once and cached beside the other bench libraries.

Shape (deterministic for a seed):
- skills belong to areas (postgres, kafka, ...); a few global foundation skills are required
  from everywhere (a Zipf choice, so the first is the widest hub), the first skills of each
  area are its hubs, most skills require or extend one to three earlier skills of their
  area (hubs more often: diamonds appear), a few long chains cross areas (the deepest), a
  handful of `requires` cycles and dangling targets, as real libraries have;
- the remaining relations are `complements`, `enables`, `supersedes` (frontmatter) and
  hand-made `often_used_with`, which do not propagate a blast radius;
- outcomes over 60 days, Zipf over 70% of the skills (the rest stay idle); 3% fail
  normally, some skills degrade, a few drift (two wide foundation hubs among them, several
  right after their version 2 shipped, 30 days ago); then `health --apply` demotes the
  drifting skills to deprecated, as a maintainer would have.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import math
import random
import statistics
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.models import ParsedSkill
from store.skills.parser import RELATION_KEYS, split_relation_targets
from store.synthetic import AREAS, synthetic_skill

if TYPE_CHECKING:
    from store.library import Library

LIFECYCLE_VERSION = "1"
MARKER = ".bench-lifecycle"
DEPENDENCY = ("requires", "extends")
#: Non-propagating relation types and their shares of the filler relations.
RELATED = (("complements", 0.5), ("enables", 0.2), ("supersedes", 0.05), ("often_used_with", 0.25))
#: Of the relations a frontmatter could declare, the share added by hand instead.
MANUAL_SHARE = 0.2
OUTCOME_DAYS = 60
VERSION_DAY = 30  # version 2 of some skills ships this many days before "now"
BATCH = 10_000


@dataclass(frozen=True)
class Spec:
    """What a cached lifecycle library holds."""

    skills: int
    relations: int
    outcomes: int
    seed: int = 5

    def as_dict(self) -> dict[str, Any]:
        return {
            "generator": LIFECYCLE_VERSION,
            "skills": self.skills,
            "relations": self.relations,
            "outcomes": self.outcomes,
            "seed": self.seed,
        }


@dataclass
class Plan:
    """Names, relations and files of a synthetic catalog (indices are skill numbers)."""

    names: list[str]
    texts: list[str]
    frontmatter: dict[int, list[tuple[str, str]]]  # source -> [(type, target name)]
    manual: list[tuple[int, str, int]]  # (source, type, target)
    cites: dict[int, bool]  # skills citing scripts/check.sh -> whether the file exists
    versioned: set[int]  # skills that get a version 2


def area_of(name: str) -> str:
    return next(a for a in _AREAS_LONGEST_FIRST if name.startswith(a + "-"))


_AREAS_LONGEST_FIRST = sorted(AREAS, key=len, reverse=True)


def plan(spec: Spec) -> Plan:
    """The catalog: skill texts and a relation set of exactly `spec.relations` rows."""
    text_rng, rng = random.Random(spec.seed), random.Random(spec.seed + 1)
    drafts = [synthetic_skill(i, text_rng) for i in range(spec.skills)]
    names = [name for name, _ in drafts]
    edges, pinned = _dependency_edges(names, rng)
    _fill_related(edges, names, spec.relations, rng)
    frontmatter: dict[int, list[tuple[str, str]]] = defaultdict(list)
    manual: list[tuple[int, str, int]] = []
    for source, kind, target in sorted(edges):
        if target < 0:  # a dangling reference: only a file can declare one
            frontmatter[source].append((kind, f"legacy-tool-{-target}"))
        elif kind == "often_used_with" or (
            rng.random() < MANUAL_SHARE and (source, kind, target) not in pinned
        ):
            manual.append((source, kind, target))
        else:
            frontmatter[source].append((kind, names[target]))
    cites = {i: rng.random() < 0.75 for i in rng.sample(range(spec.skills), spec.skills // 25)}
    versioned = set(rng.sample(range(spec.skills), spec.skills // 50))
    texts = [
        _with_relations(text, frontmatter.get(i, []), i in cites)
        for i, (_, text) in enumerate(drafts)
    ]
    return Plan(names, texts, dict(frontmatter), manual, cites, versioned)


def _dependency_edges(
    names: list[str], rng: random.Random
) -> tuple[set[tuple[int, str, int]], set[tuple[int, str, int]]]:
    """requires/extends edges from later to earlier skills (a DAG), plus a few cycles and
    dangling targets (negative target numbers)."""
    count = len(names)
    by_area: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(names):
        by_area[area_of(name)].append(i)
    foundations = min(20, max(5, count // 2500), count)
    zipf = [1 / (k + 1) for k in range(foundations)]
    hubs = {a: [i for i in members if i >= foundations][:5] for a, members in by_area.items()}
    hub_set = {i for members in hubs.values() for i in members}
    position = {i: p for members in by_area.values() for p, i in enumerate(members)}
    edges: set[tuple[int, str, int]] = set()
    pinned: set[tuple[int, str, int]] = set()  # declared in files: `relate` refuses cycles

    def kind() -> str:
        return "requires" if rng.random() < 0.75 else "extends"

    def foundation() -> int:
        return rng.choices(range(foundations), zipf)[0]

    for i in range(foundations, count):
        members, pos = by_area[area_of(names[i])], position[i]
        if i in hub_set:
            if rng.random() < 0.3:
                edges.add((i, kind(), foundation()))
            continue
        if rng.random() < 0.12:
            edges.add((i, kind(), foundation()))
        roll = rng.random()
        wanted = 0 if roll < 0.2 else 1 if roll < 0.6 else 2 if roll < 0.9 else 3
        earlier_hubs = [h for h in hubs[area_of(names[i])] if h < i]
        for _ in range(wanted if pos else 0):
            if earlier_hubs and rng.random() < 0.55:
                edges.add((i, kind(), rng.choice(earlier_hubs)))
            else:
                edges.add((i, kind(), members[rng.randrange(pos)]))
    length = min(25, count // 80)
    for _ in range(max(2, count // 5000) if length > 1 else 0):  # long chains: the deepest
        chain = sorted(rng.sample(range(foundations, count), length))
        edges.update((b, "requires", a) for a, b in itertools.pairwise(chain))
    for members in list(by_area.values())[: 3 if count >= 200 else 0]:  # a few cycles
        low, high = members[-2], members[-1]
        edges.update({(low, "requires", high), (high, "requires", low)})
        pinned.update({(low, "requires", high), (high, "requires", low)})
    for k in range(1, max(1, count // 2000) + 1):  # dangling references
        edges.add((rng.randrange(count), "requires", -k))
    return edges, pinned


def _fill_related(
    edges: set[tuple[int, str, int]], names: list[str], total: int, rng: random.Random
) -> None:
    """Non-propagating relations (mostly within an area) until there are `total`."""
    count = len(names)
    by_area: dict[str, list[int]] = defaultdict(list)
    for i, name in enumerate(names):
        by_area[area_of(name)].append(i)
    kinds = [kind for kind, _ in RELATED]
    shares = [share for _, share in RELATED]
    while len(edges) < total:
        source = rng.randrange(count)
        if rng.random() < 0.8:
            target = rng.choice(by_area[area_of(names[source])])
        else:
            target = rng.randrange(count)
        if target != source:
            edges.add((source, rng.choices(kinds, shares)[0], target))


def _with_relations(text: str, relations: list[tuple[str, str]], cites: bool) -> str:
    """The synthetic SKILL.md with its relations in `metadata` and maybe a cited script."""
    head, separator, body = text.partition("\n---\n\n")
    grouped: dict[str, list[str]] = defaultdict(list)
    for kind, target in relations:
        grouped[kind].append(target)
    head += "".join(f"\n  {kind}: {', '.join(targets)}" for kind, targets in grouped.items())
    if cites:
        body += "\nRun `scripts/check.sh` before and after the change.\n"
    return head + separator + body


def version_two(text: str) -> str:
    return text + "\n## Changed in version 2\n\n- Retries now back off exponentially.\n"


# -- building ---------------------------------------------------------------------------


class Timeline:
    """The clock the build appends with: stepping from a start, or held at a moment."""

    def __init__(self, start: datetime) -> None:
        self.moment = start
        self.step = timedelta(milliseconds=1)

    def __call__(self) -> str:
        self.moment += self.step
        return self.moment.isoformat(timespec="microseconds")

    def hold(self, moment: datetime) -> None:
        self.moment, self.step = moment, timedelta(0)

    def walk(self, start: datetime) -> None:
        self.moment, self.step = start, timedelta(milliseconds=1)


def build(library_dir: Path, skills_dir: Path, spec: Spec, progress: Any = None) -> dict[str, Any]:
    """Write the skill folders and build the library; returns "now" and stage timings."""
    from store.library import Library

    note = progress or (lambda message: None)
    stages: dict[str, float] = {}
    started = time.perf_counter()
    catalog = plan(spec)
    write_folders(skills_dir, catalog, version=1)
    stages["plan_and_files"] = round(time.perf_counter() - started, 1)
    now = datetime.now(UTC).replace(microsecond=0)
    clock = Timeline(now - timedelta(days=120))
    with Library(library_dir, clock=clock) as lib, bulk_load(lib):
        mark = time.perf_counter()
        installed = install(lib, skills_dir)
        stages["install"] = round(time.perf_counter() - mark, 1)
        note(f"lifecycle-{spec.skills}: installed {installed} skills")
        mark = time.perf_counter()
        clock.walk(now - timedelta(days=119))
        _relations(lib, catalog)
        _sessions(lib, catalog, spec, random.Random(spec.seed + 2), now)
        stages["relations_and_sessions"] = round(time.perf_counter() - mark, 1)
        mark = time.perf_counter()
        _outcomes(lib, catalog, spec, clock, now, skills_dir, note)
        stages["outcomes_and_versions"] = round(time.perf_counter() - mark, 1)
        mark = time.perf_counter()
        clock.hold(now)
        _, changes = lib.health(apply=True)  # as `librarian health --apply`: drifts demoted
        stages["health_apply"] = round(time.perf_counter() - mark, 1)
        note(f"lifecycle-{spec.skills}: health --apply changed {len(changes)} skills")
    stages["total"] = round(time.perf_counter() - started, 1)
    return {"now": now.isoformat(timespec="microseconds"), "stages": stages}


#: Tables whose secondary indexes are dropped while the library is written, then rebuilt.
BULK_TABLES = ("events", "outcomes", "relations")


@contextlib.contextmanager
def bulk_load(lib: Library) -> Iterator[None]:
    """Write a big library fast, ending with the very same schema. A million appends land at
    random places in the secondary indexes of the event log and the outcomes (each commit
    then rewrites thousands of pages), so those indexes are dropped for the build and
    created again from their own SQL afterwards (sorted once); this connection gets a big
    page cache and skips fsync (a build that dies leaves no marker and is started over)."""
    conn = lib.db.conn
    conn.execute("PRAGMA cache_size=-262144")
    conn.execute("PRAGMA synchronous=OFF")
    marks = ",".join("?" * len(BULK_TABLES))
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"
        f" AND tbl_name IN ({marks}) ORDER BY name",
        BULK_TABLES,
    ).fetchall()
    with lib.db.write():
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
    try:
        yield
    finally:
        with lib.db.write():
            for _, sql in indexes:
                conn.execute(sql)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def install(lib: Library, skills_dir: Path, only: set[str] | None = None) -> int:
    """What `lib.scan([skills_dir], embed=False)` writes for new or changed folders (`only`
    those named), faster: the same walk, file hashes, lint and `skill.installed` /
    `skill.changed` events, but the frontmatter is read by `parsed_skill`, not by the
    pure-Python YAML parser (~5 ms a skill on a busy machine: minutes at 50,000). A sample is
    parsed both ways first; any difference and every skill goes through the real parser.
    Returns the number of versions written."""
    from store.skills import discovery
    from store.skills.lint import lint_skill
    from store.skills.parser import parse_skill_md
    from store.skills.reconcile import Candidate, Loaded, read_candidate

    root = discovery.explicit_roots([skills_dir], "extra")[0]
    found, _ = discovery.walk_root(root, max_dirs=10 * len(list(skills_dir.iterdir())) + 10)
    if only is not None:
        found = [f for f in found if f.path.parent.name in only]
    candidates = [c for c in map(read_candidate, found) if isinstance(c, Candidate)]
    sample = random.Random(1).sample(candidates, min(25, len(candidates)))
    fast = all(
        parse_skill_md(c.data, c.found.path.parent.name) == parsed_skill(c.data) for c in sample
    )
    loaded = []
    for c in candidates:
        parsed = parsed_skill(c.data) if fast else parse_skill_md(c.data, c.found.path.parent.name)
        if isinstance(parsed, ParsedSkill):
            text = c.data.decode("utf-8")
            loaded.append(Loaded(c, parsed, lint_skill([("SKILL.md", text), *c.bundle])))
    installed, changed = lib._write_versions(loaded, lib._known_by_path())
    return installed + changed


def parsed_skill(data: bytes) -> ParsedSkill:
    """What `parse_skill_md` makes of a SKILL.md `plan` wrote: flat `key: value` lines with
    one `metadata` mapping of strings (relations, tags, a quoted version)."""
    text = data.decode("utf-8")
    front, _, body = text.removeprefix("---\n").partition("\n---\n")
    top: dict[str, str] = {}
    meta: dict[str, str] = {}
    for line in front.splitlines():
        key, _, value = line.strip().partition(":")
        if line.startswith("  "):
            meta[key] = value.strip().strip('"')
        elif key != "metadata":
            top[key] = value.strip()
    return ParsedSkill(
        name=top["name"],
        declared_name=top["name"],
        description=top["description"],
        frontmatter={**top, "metadata": meta},
        body=body,
        tags=tuple(t.strip() for t in meta.get("tags", "").split(",") if t.strip()),
        version=meta.get("version", ""),
        license=top.get("license", ""),
        relations=tuple(
            (kind, target)
            for kind in RELATION_KEYS
            for target in split_relation_targets(meta.get(kind))
        ),
    )


def write_folders(root: Path, catalog: Plan, version: int) -> None:
    """One folder per skill (only `versioned` ones are rewritten for version 2)."""
    root.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(catalog.names):
        if version == 2 and i not in catalog.versioned:
            continue
        folder = root / name
        text = catalog.texts[i] if version == 1 else version_two(catalog.texts[i])
        folder.mkdir(exist_ok=True)
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        if version == 1 and catalog.cites.get(i):
            (folder / "scripts").mkdir(exist_ok=True)
            (folder / "scripts" / "check.sh").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")


def _ids(lib: Library) -> dict[str, int]:
    with lib.db.read() as conn:
        return {str(r[0]): int(r[1]) for r in conn.execute("SELECT name, skill_id FROM skills")}


def _relations(lib: Library, catalog: Plan) -> None:
    """Hand-made relations, as `librarian relate` records them (valid by construction: both
    skills exist, no self-relation, dependencies point at earlier skills)."""
    ids = _ids(lib)
    for start in range(0, len(catalog.manual), BATCH):
        with lib.db.write() as conn:
            for source, kind, target in catalog.manual[start : start + BATCH]:
                name = catalog.names[source]
                payload = {
                    "source_id": ids[name],
                    "type": kind,
                    "target_name": catalog.names[target],
                    "origin": "manual",
                }
                lib.append_event(conn, "relation.added", f"skill:{name}", payload)


def _sessions(lib: Library, catalog: Plan, spec: Spec, rng: random.Random, now: datetime) -> None:
    """Sessions that used skills (what a blast radius lists beside the dependents)."""
    from store.projections import store_blob

    count = spec.skills // 25
    weights = [1 / (k + 10) for k in range(spec.skills)]
    with lib.db.write() as conn:
        empty = store_blob(conn, "[]")
        for n in range(count):
            began = now - timedelta(days=OUTCOME_DAYS * (count - n) / max(count, 1))
            used = sorted({catalog.names[i] for i in rng.choices(range(spec.skills), weights, k=3)})
            sid = f"bench-life-{n:06d}"
            lib.append_event(
                conn,
                "session.ingested",
                f"session:{sid}",
                {
                    "session_id": sid,
                    "project": f"/work/{area_of(used[0])}",
                    "branch": "main",
                    "client_version": "2.1.39",
                    "started_at": began.isoformat(timespec="microseconds"),
                    "ended_at": (began + timedelta(hours=1)).isoformat(timespec="microseconds"),
                    "turns": 0,
                    "tool_calls": 0,
                    "errors": 0,
                    "skills_used": used,
                    "skipped": {},
                    "developer": "bench",
                    "messages_hash": empty,
                    "files": [],
                },
            )


def _outcomes(
    lib: Library,
    catalog: Plan,
    spec: Spec,
    clock: Timeline,
    now: datetime,
    skills_dir: Path,
    note: Any,
) -> None:
    """Outcomes in time order; version 2 of the versioned skills ships (a re-scan) 30 days
    ago, and later outcomes of those skills are recorded against it."""
    rng = random.Random(spec.seed + 3)
    # Two foundation skills (wide hubs) are popular and drift: a drift with many dependents.
    hubs = [1, 2]
    active = hubs + [i for i in rng.sample(range(spec.skills), int(spec.skills * 0.7)) if i > 2]
    weights = [1 / (rank + 20) ** 0.9 for rank in range(len(active))]
    popular = active[: max(10, len(active) // 20)]
    drifting = set(rng.sample(popular[2:], max(3, len(popular) // 60))) | set(hubs)
    degrading = set(rng.sample(active, max(3, len(active) // 50))) - drifting
    catalog.versioned |= set(sorted(drifting)[::2])  # half the drifts follow a new version
    picks = rng.choices(active, weights, k=spec.outcomes)
    offsets = sorted(rng.random() for _ in range(spec.outcomes))
    failed = []
    for j, skill in enumerate(picks):
        late = offsets[j] >= 1 - VERSION_DAY / OUTCOME_DAYS
        rate = 0.7 if skill in drifting and late else 0.3 if skill in degrading else 0.03
        failed.append(rng.random() < rate)
    cut = bisect.bisect_left(offsets, 1 - VERSION_DAY / OUTCOME_DAYS)
    ids = _ids(lib)
    start = now - timedelta(days=OUTCOME_DAYS)
    rows = _Outcomes(picks, offsets, failed, start, timedelta(days=OUTCOME_DAYS))
    _append_outcomes(lib, catalog, rows, range(0, cut), ids, clock, set())
    note(f"lifecycle-{spec.skills}: {cut} outcomes before version 2")
    write_folders(skills_dir, catalog, version=2)
    clock.walk(now - timedelta(days=VERSION_DAY))
    changed = install(lib, skills_dir, only={catalog.names[i] for i in catalog.versioned})
    note(f"lifecycle-{spec.skills}: version 2 of {changed} skills")
    _append_outcomes(lib, catalog, rows, range(cut, spec.outcomes), ids, clock, catalog.versioned)


@dataclass(frozen=True)
class _Outcomes:
    picks: list[int]
    offsets: list[float]  # share of the outcome period, sorted
    failed: list[bool]
    start: datetime
    span: timedelta


def _append_outcomes(
    lib: Library,
    catalog: Plan,
    rows: _Outcomes,
    which: range,
    ids: dict[str, int],
    clock: Timeline,
    versioned: set[int],
) -> None:
    """`skill.outcome_recorded` events as `librarian record-outcome` appends them."""
    for first in range(which.start, which.stop, BATCH):
        with lib.db.write() as conn:
            for j in range(first, min(first + BATCH, which.stop)):
                skill, failed = rows.picks[j], rows.failed[j]
                clock.hold(rows.start + rows.span * rows.offsets[j])
                name = catalog.names[skill]
                detail = "exit 1: the check failed" if failed else ""
                lib.append_event(
                    conn,
                    "skill.outcome_recorded",
                    f"skill:{name}",
                    {
                        "skill_id": ids[name],
                        "reason": detail,
                        "detail": detail,
                        "version_no": 2 if skill in versioned else 1,
                        "success": not failed,
                        "session_id": f"bench-run-{j // 6:07d}" if j % 3 else "",
                        "inferred": False,
                    },
                )


# -- measurements (child processes) ------------------------------------------------------


def _held(now: str) -> Callable[[], str]:
    """A clock standing still at the library's "now" (a cached library does not age)."""
    return lambda: now


def measure_blast(library_dir: Path, now: str, randoms: int = 200) -> dict[str, Any]:
    """`Library.blast` over a sample: the widest hubs (most direct dependents), the deepest
    (longest chains of dependents) and random skills; each timed three times (median), after
    one cold call on the widest hub that also loads the graph."""
    from store.library import Library

    with Library(library_dir, clock=_held(now)) as lib:
        hubs, deepest, randomly = _blast_sample(lib, randoms)
        started = time.perf_counter()
        lib.blast(hubs[0])
        cold_ms = (time.perf_counter() - started) * 1000
        measured: dict[str, tuple[float, int, int]] = {}
        for name in dict.fromkeys([*hubs, *deepest, *randomly]):
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                radius = lib.blast(name)
                runs.append((time.perf_counter() - started) * 1000)
            depth = max((d.depth for d in radius.dependents), default=0)
            measured[name] = (statistics.median(runs), len(radius.dependents), depth)
    times = sorted(ms for ms, _, _ in measured.values())
    widest = max(hubs, key=lambda n: measured[n][1])
    deep = max(deepest, key=lambda n: measured[n][2])
    return {
        "samples": len(measured),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": _nearest_rank(times, 0.95),
        "max_ms": round(times[-1], 2),
        "cold_first_call_ms": round(cold_ms, 1),
        "graph_load_ms": round(cold_ms - measured[hubs[0]][0], 1),
        "hubs_max_ms": round(max(measured[n][0] for n in hubs), 2),
        "widest": _sample_row(widest, measured[widest]),
        "deepest": _sample_row(deep, measured[deep]),
        "random_p50_dependents": statistics.median(measured[n][1] for n in randomly),
    }


def _sample_row(name: str, row: tuple[float, int, int]) -> dict[str, Any]:
    return {"skill": name, "ms": round(row[0], 2), "dependents": row[1], "depth": row[2]}


def _nearest_rank(ordered: list[float], share: float) -> float:
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 2)


def _blast_sample(lib: Library, randoms: int) -> tuple[list[str], list[str], list[str]]:
    """(10 skills with the most direct dependents, 5 with the longest chains of dependents,
    `randoms` random skills)."""
    with lib.db.read() as conn:
        names = [str(r[0]) for r in conn.execute("SELECT name FROM skills ORDER BY skill_id")]
        edges = conn.execute(
            "SELECT s.name, r.target_name FROM relations r JOIN skills s"
            " ON s.skill_id = r.source_id WHERE r.type IN ('requires', 'extends')"
        ).fetchall()
    known = set(names)
    dependents: dict[str, set[str]] = defaultdict(set)
    depends: dict[str, set[str]] = defaultdict(set)
    for source, target in edges:
        if target in known and source != target:
            dependents[target].add(source)
            depends[source].add(target)
    hubs = sorted(dependents, key=lambda n: (-len(dependents[n]), n))[:10]
    height = dict.fromkeys(names, 0)
    waiting = {n: len(dependents[n]) for n in names}
    queue = deque(n for n in names if not waiting[n])
    while queue:  # from skills nobody depends on down to the foundations (cycles stay out)
        node = queue.popleft()
        for target in depends[node]:
            height[target] = max(height[target], height[node] + 1)
            waiting[target] -= 1
            if not waiting[target]:
                queue.append(target)
    deepest = sorted(names, key=lambda n: (-height[n], n))[:5]
    return hubs, deepest, random.Random(11).sample(names, min(randoms, len(names)))


def measure_health(library_dir: Path, now: str) -> dict[str, Any]:
    """`health.compute` (flag checks included) in a fresh process, then once more."""
    from collections import Counter

    from store.library import Library
    from store.lifecycle import health

    with Library(library_dir, clock=_held(now)) as lib:
        with lib.db.read() as conn:
            outcomes = int(conn.execute("SELECT count(*) FROM outcomes").fetchone()[0])
        started = time.perf_counter()
        found = health.compute(lib.kernel)
        first = time.perf_counter() - started
        started = time.perf_counter()
        health.compute(lib.kernel)
        again = time.perf_counter() - started
    verdicts = Counter(h.verdict for h in found)
    return {
        "seconds": round(first, 2),
        "second_run_seconds": round(again, 2),
        "skills": len(found),
        "outcomes": outcomes,
        "runs_in_window": sum(h.runs for h in found),
        "verdicts": dict(sorted(verdicts.items())),
        "drifting_versions": sum(v.verdict == "DRIFTING" for h in found for v in h.versions),
        "flagged": sum(1 for h in found if h.flags),
        "worst": found[0].name if found else "",
    }
