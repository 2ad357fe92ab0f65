"""Read queries over the skill projections; rows become frozen dataclasses here."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from store.db import Database
from store.models import (
    LintFinding,
    Relation,
    SkillDetail,
    SkillSummary,
    SkillVersion,
    SpecWarning,
)
from store.skills.usage import ImportanceRule

ACTIVE = "s.status != 'uninstalled'"
#: Relations whose cycles are a real problem (you cannot require your own dependent).
CYCLE_TYPES = ("requires", "extends")
CyclesOf = Callable[[str], tuple[tuple[str, ...], ...]]

#: Columns in `SkillSummary` field order, so rows build positionally (fast at 10k+ rows).
#: The warning count leaves out `license_missing`: information, not a warning (the spec
#: makes `license` optional), so it does not drown the warnings that matter.
_SUMMARY_SQL = """
SELECT s.skill_id, s.name, s.status, s.root, s.scope, {description},
       v.warning_count - (instr(v.warnings, '"license_missing"') > 0),
       v.finding_count, v.max_severity, s.current_version,
       CASE WHEN s.status = 'uninstalled' THEN 0 ELSE
         (SELECT count(*) FROM skills o WHERE o.name = s.name AND o.status != 'uninstalled'
            AND (o.scope_rank, o.root_rank, o.fs_path) < (s.scope_rank, s.root_rank, s.fs_path))
       > 0 END AS shadowed, s.fs_path
FROM skills s JOIN skill_versions v ON v.skill_id = s.skill_id AND v.version_no = s.current_version
"""
#: The list shows one line of description; the detail reads the whole manifest.
LIST_DESCRIPTION_CHARS = 300


def _summaries(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[SkillSummary]:
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: sqlite3.Row costs ~3 µs a row
    summaries = []
    for row in cursor.execute(sql, params).fetchall():
        values = list(row)
        values[10] = bool(values[10])  # shadowed
        summaries.append(SkillSummary(*values))
    return summaries


def count(db: Database, include_uninstalled: bool = False) -> int:
    where = "" if include_uninstalled else f" WHERE {ACTIVE}"
    with db.read() as conn:
        return int(conn.execute(f"SELECT count(*) FROM skills s{where}").fetchone()[0])


def list_skills(
    db: Database,
    text: str = "",
    include_uninstalled: bool = False,
    limit: int | None = None,
    offset: int = 0,
) -> list[SkillSummary]:
    """Skills by name; `text` filters on name, status, root and description (substring)."""
    clauses: list[str] = [] if include_uninstalled else [ACTIVE]
    params: list[Any] = []
    for word in text.split():
        clauses.append(
            "(s.name LIKE ? ESCAPE '\\' OR s.status LIKE ? ESCAPE '\\'"
            " OR s.root LIKE ? ESCAPE '\\' OR v.description LIKE ? ESCAPE '\\')"
        )
        params += [f"%{_escape_like(word)}%"] * 4
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    page = f" LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
    select = _SUMMARY_SQL.format(description=f"substr(v.description, 1, {LIST_DESCRIPTION_CHARS})")
    with db.read() as conn:
        return _summaries(
            conn,
            f"{select}{where} ORDER BY s.name, s.scope_rank, s.root_rank, s.fs_path{page}",
            params,
        )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def resolve(conn: sqlite3.Connection, key: str | int) -> int | None:
    """A skill id from an id, a path, or a name (the effective skill for that name)."""
    if isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
        row = conn.execute("SELECT skill_id FROM skills WHERE skill_id=?", (int(key),)).fetchone()
        if row:
            return int(row[0])
    text = str(key)
    order = " ORDER BY status = 'uninstalled', scope_rank, root_rank, fs_path LIMIT 1"
    if "/" not in text and os.sep not in text:
        # Stored paths are absolute: a key without a separator can only be a name, and the
        # name index answers it (an OR over the unindexed `dir` scans every skill).
        row = conn.execute("SELECT skill_id FROM skills WHERE name=?" + order, (text,)).fetchone()
    else:
        row = (
            conn.execute(
                "SELECT skill_id FROM skills WHERE fs_path=? OR name=?" + order, (text, text)
            ).fetchone()
            or conn.execute("SELECT skill_id FROM skills WHERE dir=?" + order, (text,)).fetchone()
        )
    return int(row[0]) if row else None


def get_skill(
    db: Database,
    key: str | int,
    now: datetime,
    cycles_of: CyclesOf | None = None,
    rule: ImportanceRule | None = None,
) -> SkillDetail | None:
    """One skill in full; `cycles_of(name)` finds the dependency cycles through it (default:
    a search of the whole graph); `now` is the library's clock and `rule` the importance
    rule (importance depends on both)."""
    with db.read() as conn:
        sid = resolve(conn, key)
        if sid is None:
            return None
        select = _SUMMARY_SQL.format(description="v.description")
        summary = _summaries(conn, f"{select} WHERE s.skill_id=?", (sid,))[0]
        version = conn.execute(
            "SELECT * FROM skill_versions WHERE skill_id=? AND version_no=?",
            (sid, summary.version_no),
        ).fetchone()
        body = conn.execute(
            "SELECT text FROM blobs WHERE hash=?", (version["body_hash"],)
        ).fetchone()
        versions = conn.execute(
            "SELECT version_no, content_hash, created_at, event_type FROM skill_versions"
            " WHERE skill_id=? ORDER BY version_no",
            (sid,),
        ).fetchall()
        relations = _relations_from(conn, sid, summary.name)
        dependents = _relations_to(conn, summary.name)
        winner = _winner(conn, summary) if summary.shadowed else ""
        record = conn.execute("SELECT * FROM skills WHERE skill_id=?", (sid,)).fetchone()
    cycles = _cycles_through(db, summary.name, relations, dependents, cycles_of)
    return SkillDetail(
        summary=summary,
        manifest={
            **_manifest(version),
            **_record(record, relations, version, now, rule or ImportanceRule()),
        },
        frontmatter=json.loads(version["frontmatter"]),
        body=body[0] if body else "",
        warnings=_warnings(version["warnings"]),
        findings=_findings(version["findings"]),
        relations=relations,
        dependents=dependents,
        versions=tuple(SkillVersion(r[0], r[1], r[2], r[3]) for r in versions),
        shadowed_by=winner,
        cycles=cycles,
    )


def _manifest(version: sqlite3.Row) -> dict[str, Any]:
    return {
        "name": version["name"],
        "declared_name": version["declared_name"],
        "description": version["description"],
        "when_to_use": version["when_to_use"],
        "triggers": json.loads(version["triggers"]),
        "tags": json.loads(version["tags"]),
        "role": version["role"],
        "version": version["version_label"],
        "license": version["license"],
        "compatibility": version["compatibility"],
        "allowed_tools": json.loads(version["allowed_tools"]),
        "content_hash": version["content_hash"],
    }


def _record(
    row: sqlite3.Row,
    relations: tuple[Relation, ...],
    version: sqlite3.Row,
    now: datetime,
    rule: ImportanceRule,
) -> dict[str, Any]:
    """The librarian's own fields of the manifest (DESIGN §5), beside the frontmatter ones."""
    metadata = json.loads(version["frontmatter"]).get("metadata")
    tests = metadata.get("tests", []) if isinstance(metadata, dict) else []
    return {
        "skill_id": row["skill_id"],
        "status": row["status"],
        "version_no": row["current_version"],
        "fs_path": row["fs_path"],
        "relations": [{"type": r.type, "target": r.target, "source": r.origin} for r in relations],
        "depends_on": sorted({r.target for r in relations if r.type == "requires"}),
        "provenance": {"sessions": [], "nodes": [], "patterns": []},
        "tests": tests if isinstance(tests, list) else [tests],
        "success_count": row["success_count"],
        "failure_count": row["failure_count"],
        "last_success_at": row["last_success_at"],
        "last_failure_at": row["last_failure_at"],
        "owner_scope": row["owner_scope"],
        "approved_by": row["approved_by"],
        "installed_at": row["installed_at"],
        "last_used_at": row["last_used_at"],
        "use_count": row["use_count"],
        "importance": round(
            rule.score(row["last_used_at"], row["installed_at"], row["use_count"], now), 4
        ),
    }


def _cycles_through(
    db: Database,
    name: str,
    relations: tuple[Relation, ...],
    dependents: tuple[Relation, ...],
    cycles_of: CyclesOf | None = None,
) -> tuple[tuple[str, ...], ...]:
    """Dependency cycles through one skill; only computed when one is possible."""
    if not (
        any(r.type in CYCLE_TYPES for r in relations)
        and any(r.type in CYCLE_TYPES for r in dependents)
    ):
        return ()
    if cycles_of is not None:
        return cycles_of(name)
    return tuple(c for c in graph_report(db).cycles if name in c)


def _warnings(raw: str) -> tuple[SpecWarning, ...]:
    return tuple(SpecWarning(code, message) for code, message in json.loads(raw))


def _findings(raw: str) -> tuple[LintFinding, ...]:
    return tuple(LintFinding(**item) for item in json.loads(raw))


def _active_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute(f"SELECT name FROM skills s WHERE {ACTIVE}")}


def _relations_from(conn: sqlite3.Connection, sid: int, name: str) -> tuple[Relation, ...]:
    rows = conn.execute(
        "SELECT r.type, r.target_name, r.origin, NOT EXISTS (SELECT 1 FROM skills t"
        " WHERE t.name = r.target_name AND t.status != 'uninstalled'), r.pin FROM relations r"
        " WHERE r.source_id=? ORDER BY r.type, r.target_name, r.origin",
        (sid,),
    ).fetchall()
    return tuple(
        Relation(name, t, target, origin, bool(gone), int(pin))
        for t, target, origin, gone, pin in rows
    )


def _relations_to(conn: sqlite3.Connection, name: str) -> tuple[Relation, ...]:
    rows = conn.execute(
        f"SELECT s.name, r.type, r.origin, r.pin FROM relations r JOIN skills s"
        f" ON s.skill_id=r.source_id WHERE r.target_name=? AND {ACTIVE}"
        " ORDER BY r.type, s.name, r.origin, s.skill_id",
        (name,),
    ).fetchall()
    return tuple(Relation(src, t, name, origin, False, int(pin)) for src, t, origin, pin in rows)


def _winner(conn: sqlite3.Connection, summary: SkillSummary) -> str:
    row = conn.execute(
        f"SELECT fs_path FROM skills s WHERE name=? AND {ACTIVE}"
        " ORDER BY scope_rank, root_rank, fs_path LIMIT 1",
        (summary.name,),
    ).fetchone()
    return str(row[0]) if row else ""


def collisions(db: Database) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Names held by more than one active skill: (name, paths with the winner first)."""
    with db.read() as conn:
        rows = conn.execute(
            f"SELECT name, fs_path FROM skills s WHERE {ACTIVE} AND name IN"
            f" (SELECT name FROM skills s WHERE {ACTIVE} GROUP BY name HAVING count(*) > 1)"
            " ORDER BY name, scope_rank, root_rank, fs_path"
        ).fetchall()
    grouped: dict[str, list[str]] = {}
    for name, path in rows:
        grouped.setdefault(name, []).append(path)
    return tuple((name, tuple(paths)) for name, paths in grouped.items())


@dataclass(frozen=True)
class GraphReport:
    dangling: tuple[Relation, ...]
    cycles: tuple[tuple[str, ...], ...]


def graph_report(db: Database, max_cycles: int = 50) -> GraphReport:
    """Dangling references and dependency cycles among active skills."""
    with db.read() as conn:
        names = _active_names(conn)
        rows = conn.execute(
            f"SELECT s.name, r.type, r.target_name, r.origin FROM relations r"
            f" JOIN skills s ON s.skill_id = r.source_id WHERE {ACTIVE}"
            " ORDER BY s.name, r.type, r.target_name"
        ).fetchall()
    dangling = tuple(
        Relation(s, t, target, o, True) for s, t, target, o in rows if target not in names
    )
    import networkx as nx  # imported here: ~140 ms that start-up should not pay

    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_edges_from(
        (s, target)
        for s, t, target, _ in rows
        if t in CYCLE_TYPES and target in names and s != target
    )
    cycles: list[tuple[str, ...]] = []
    for cycle in nx.simple_cycles(graph, length_bound=12):
        cycles.append(_rotate(cycle))
        if len(cycles) >= max_cycles:
            break
    return GraphReport(dangling, tuple(sorted(cycles)))


def _rotate(cycle: list[str]) -> tuple[str, ...]:
    start = cycle.index(min(cycle))
    return tuple(cycle[start:] + cycle[:start])
