"""Hand-made relations between skills (`librarian relate`), checked before they are
recorded: no self-relation, no dependency cycle, no stable skill on a proposed one, and a
pinned version that exists and has proven itself."""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from store import catalog
from store.kernel import Kernel
from store.lifecycle.graph import RelationError
from store.lifecycle.requirements import PinError, refuse_unproven, split_pin
from store.models import DEPENDENCY_TYPES, RELATION_TYPES
from store.models.events import EventType


def relate(
    library: Kernel,
    source: str,
    kind: str,
    target: str,
    *,
    remove: bool = False,
    version: int = 0,
) -> str:
    """Add (or remove) a hand-made relation, checked: both skills exist, not a self-relation,
    no dependency cycle, a stable skill never depends on a proposed one, a pinned version
    (`target@N` or `version`) exists. Returns a one-line description."""
    if kind not in RELATION_TYPES:
        raise RelationError(f"unknown relation {kind!r} (one of: {', '.join(RELATION_TYPES)})")
    try:
        target, written_pin = split_pin(target)
    except PinError as exc:
        raise RelationError(str(exc)) from exc
    pin = version or written_pin
    if pin and kind not in DEPENDENCY_TYPES:
        raise RelationError(f"only requires and extends can pin a version, not {kind}")
    with library.db.write() as conn:
        ids = {}
        for key in (source, target):
            sid = catalog.resolve(conn, key)
            if sid is None:
                raise RelationError(f"no skill named {key!r}")
            ids[key] = sid
        rows = {
            key: conn.execute("SELECT name, status FROM skills WHERE skill_id=?", (sid,)).fetchone()
            for key, sid in ids.items()
        }
        (src, src_status), (dst, dst_status) = rows[source], rows[target]
        if src == dst:
            raise RelationError(f"a skill cannot be related to itself ({src} {kind} {src})")
        exists = conn.execute(
            "SELECT pin FROM relations WHERE source_id=? AND type=? AND target_name=?"
            " AND origin='manual'",
            (ids[source], kind, dst),
        ).fetchone()
        payload = {"source_id": ids[source], "type": kind, "target_name": dst, "origin": "manual"}
        shown = f"{src} {kind} {dst}" + (f"@{pin}" if pin else "")
        if remove:
            if not exists:
                raise RelationError(f"no hand-made relation {src} {kind} {dst}")
            library.append_event(conn, EventType.RELATION_REMOVED, f"skill:{src}", payload)
            return f"removed: {src} {kind} {dst}"
        if exists and int(exists[0]) == pin:
            return f"already there: {shown}"
        _check_dependency(conn, (src, src_status), kind, (dst, dst_status, ids[target]), pin)
        if pin:
            payload["pin"] = pin
        library.append_event(conn, EventType.RELATION_ADDED, f"skill:{src}", payload)
    return f"{'re-pinned' if exists else 'added'}: {shown}"


def _check_dependency(
    conn: Any, source: tuple[str, str], kind: str, target: tuple[str, str, int], pin: int
) -> None:
    """Refuse what a dependency may not be: a cycle, a stable skill on a proposed one, a pin
    on a version that does not exist (or, from a stable skill, one still proving itself)."""
    (src, src_status), (dst, dst_status, dst_id) = source, target
    if kind not in DEPENDENCY_TYPES:
        return
    cycle = _path(conn, dst, src)
    if cycle:
        raise RelationError(
            f"{src} {kind} {dst} would close a cycle: " + " -> ".join([src, *cycle])
        )
    try:
        refuse_unproven(src_status, src, kind, dst, dst_status)
    except PinError as exc:
        raise RelationError(str(exc)) from exc
    if not pin:
        return
    known = conn.execute(
        "SELECT 1 FROM skill_versions WHERE skill_id=? AND version_no=?", (dst_id, pin)
    ).fetchone()
    if known is None:
        raise RelationError(f"{dst} has no version {pin} to pin (see `librarian lineage {dst}`)")
    fate = conn.execute(
        "SELECT status FROM skill_candidates WHERE skill_id=? AND version_no=?", (dst_id, pin)
    ).fetchone()
    if src_status == "stable" and fate is not None and fate[0] in ("candidate", "set_aside"):
        what = "still proving itself" if fate[0] == "candidate" else "set aside (it drifted)"
        raise RelationError(
            f"v{pin} of {dst} is a candidate {what}: a stable skill pins only a proven version"
        )


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
