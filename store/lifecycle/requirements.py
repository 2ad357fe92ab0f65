"""What a skill requires, and at which version: pins, and the rule that a stable skill
cannot depend on a proposed one.

A dependent may pin the version it was written against — `requires: base-deploy@3` in its
metadata, or `librarian relate app requires base-deploy@3` — where the number is the
librarian's version number (`v3` in `show` and `lineage`), not the frontmatter's own
`version`. A pinned dependent is not hit by another version of its requirement: the blast
radius of a bad version leaves out dependents pinned to another one, health warns only the
dependents whose version of a requirement is drifting, and the runbook lists who is pinned to
what.

A *stable* skill is one that others can compose with safely, so it may not `requires` or
`extends` a skill that is only *proposed*: `relate` refuses such a relation with the reason,
a scan that finds one in frontmatter warns, and a candidate version that adds one cannot take
over until the required skill is proven.
"""

from __future__ import annotations

import re
import sqlite3

from store.errors import LibrarianError
from store.models import DEPENDENCY_TYPES
from store.models.governance import Pin, UnprovenRequirement

_PINNED = re.compile(r"^(?P<name>.+?)@v?(?P<version>\d{1,9})$")
#: The active skill of a name (the first by precedence), as a correlated subquery.
_ACTIVE_STATUS = (
    "(SELECT t.status FROM skills t WHERE t.name = {target} AND t.status != 'uninstalled'"
    " ORDER BY t.scope_rank, t.root_rank, t.fs_path LIMIT 1)"
)


class PinError(LibrarianError):
    """A version pin that cannot be used."""


def split_pin(target: str) -> tuple[str, int]:
    """("base-deploy", 3) for "base-deploy@3" (or "@v3"); (target, 0) when unpinned."""
    if "@" not in target:
        return target, 0
    found = _PINNED.match(target)
    if found is None or int(found["version"]) < 1:
        raise PinError(f"{target!r}: a pin is name@N with N a version number (v1, v2, …)")
    return found["name"], int(found["version"])


def unproven_requirements(conn: sqlite3.Connection, sid: int) -> list[UnprovenRequirement]:
    """Skill `sid`'s `requires`/`extends` targets that are proposed (whatever its own
    status: callers apply the rule to stable skills)."""
    rows = conn.execute(
        "SELECT s.name, r.type, r.target_name, "
        + _ACTIVE_STATUS.format(target="r.target_name")
        + " FROM relations r JOIN skills s ON s.skill_id = r.source_id"
        " WHERE r.source_id=? AND r.type IN ('requires', 'extends')"
        " ORDER BY r.target_name, r.type",
        (sid,),
    ).fetchall()
    return [unproven(*r) for r in rows if r[3] == "proposed" and r[0] != r[2]]


def all_unproven(conn: sqlite3.Connection) -> list[UnprovenRequirement]:
    """Every stable skill's requirement on a proposed skill, by source then target."""
    return all_unproven_of(conn, "stable")


def all_unproven_of(conn: sqlite3.Connection, status: str) -> list[UnprovenRequirement]:
    """Every requirement on a proposed skill from skills with `status`."""
    rows = conn.execute(
        "SELECT DISTINCT s.name, r.type, r.target_name, "
        + _ACTIVE_STATUS.format(target="r.target_name")
        + " AS target_status FROM relations r JOIN skills s ON s.skill_id = r.source_id"
        " WHERE s.status = ? AND r.type IN ('requires', 'extends')"
        " AND r.target_name != s.name ORDER BY s.name, r.target_name, r.type",
        (status,),
    ).fetchall()
    return [unproven(*r) for r in rows if r[3] == "proposed"]


def unproven(source: str, relation: str, target: str, status: str) -> UnprovenRequirement:
    return UnprovenRequirement(
        source=source,
        relation=relation,
        target=target,
        target_status=status,
        reason=(
            f"{source} is stable and {relation} {target}, which is only {status}: a stable"
            " skill cannot depend on a proposed one (promote the requirement first, or"
            " depend on it from a proposed skill)"
        ),
    )


def refuse_unproven(source_status: str, source: str, kind: str, target: str, status: str) -> None:
    """Raise when a stable `source` would come to depend on a proposed `target`."""
    if kind in DEPENDENCY_TYPES and source_status == "stable" and status == "proposed":
        raise PinError(unproven(source, kind, target, status).reason)


def pins_on(conn: sqlite3.Connection, target: str) -> list[Pin]:
    """Every dependent pinned to a version of `target` (active dependents only)."""
    served = conn.execute(
        "SELECT skill_id, served_version FROM skills WHERE name=? AND status != 'uninstalled'"
        " ORDER BY scope_rank, root_rank, fs_path LIMIT 1",
        (target,),
    ).fetchone()
    rows = conn.execute(
        "SELECT s.name, r.type, r.pin, r.origin FROM relations r"
        " JOIN skills s ON s.skill_id = r.source_id"
        " WHERE r.target_name=? AND r.pin > 0 AND r.type IN ('requires', 'extends')"
        " AND s.status != 'uninstalled' ORDER BY s.name, r.type, r.origin",
        (target,),
    ).fetchall()
    found: list[Pin] = []
    for dependent, relation, pin, origin in rows:
        exists = served is not None and bool(
            conn.execute(
                "SELECT 1 FROM skill_versions WHERE skill_id=? AND version_no=?",
                (served[0], int(pin)),
            ).fetchone()
        )
        found.append(
            Pin(
                dependent=str(dependent),
                relation=str(relation),
                target=target,
                version_no=int(pin),
                origin=str(origin),
                target_served=int(served[1]) if served else 0,
                exists=exists,
            )
        )
    return found


def pins_of(conn: sqlite3.Connection, source: str) -> dict[tuple[str, str], int]:
    """A skill's pinned requirements: (relation, target) -> version."""
    rows = conn.execute(
        "SELECT r.type, r.target_name, max(r.pin) FROM relations r"
        " JOIN skills s ON s.skill_id = r.source_id WHERE s.name=? AND r.pin > 0"
        " AND s.status != 'uninstalled' GROUP BY r.type, r.target_name",
        (source,),
    ).fetchall()
    return {(str(kind), str(target)): int(pin) for kind, target, pin in rows}
