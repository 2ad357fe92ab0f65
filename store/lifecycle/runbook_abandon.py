"""Abandoning a runbook run: what it leaves behind, and putting back the statuses it changed.

A run changes statuses as it goes (step 1 retires the skill and puts it on the denylist,
step 3 deprecates its dependents, step 6 re-proposes some). Every one of those is a status
event carrying the run's id, so the changes are read back from the log: per skill, the
status before its first change and after its last. Abandoning restores by default: each
skill still in the status the run left it in goes back to its status before the run, as one
status event per skill (`restored: true`, the run's id) in the abandon's transaction. A
skill changed since by someone else is left as it is, and said so.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from store.lifecycle.runbook_read import RunbookError, get_locked
from store.lifecycle.status_events import RESTORE_EVENT, TARGET
from store.models import LeftBehind, Run, RunChange
from store.models.events import EventType
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

#: The status changes a run can make (not the check mark, which changes no status).
_STATUS_EVENTS = tuple(RESTORE_EVENT.values())


def left_behind(library: Kernel, run_id: str) -> LeftBehind:
    """What abandoning the open run `run_id` would leave behind; nothing is changed."""
    with library.db.read() as conn:
        run = get_locked(conn, run_id)
        return left_behind_locked(conn, run)


def restore(library: Kernel, conn: sqlite3.Connection, run: Run, reason: str) -> LeftBehind:
    """Put back the statuses the run changed and remove the relations it added (inside the
    abandon's write transaction); returns what was found, before the restore."""
    found = left_behind_locked(conn, run)
    for source_id, source, kind, target in found.relations:
        library.append_event(
            conn,
            EventType.RELATION_REMOVED,
            f"skill:{source}",
            {
                "source_id": source_id,
                "type": kind,
                "target_name": target,
                "origin": "runbook",
                "run_id": run.run_id,
                "restored": True,
            },
        )
    for change in found.restorable:
        library.append_event(
            conn,
            RESTORE_EVENT[change.before],
            f"skill:{change.name}",
            {
                "skill_id": change.skill_id,
                "reason": one_line(f"runbook {run.run_id} abandoned: {reason}", 500),
                "from": change.now,
                "run_id": run.run_id,
                "restored": True,
            },
        )
    return found


def left_behind_locked(conn: sqlite3.Connection, run: Run) -> LeftBehind:
    if run.status != "open":
        raise RunbookError(f"run {run.run_id} is {run.status}")
    return LeftBehind(
        run.run_id, run.skill_name, run.step, _changes(conn, run), _other(run), _added(conn, run)
    )


def _added(conn: sqlite3.Connection, run: Run) -> tuple[tuple[int, str, str, str], ...]:
    """The relations the run added (step 5's successor) that are still there."""
    found = []
    for (payload,) in conn.execute(
        "SELECT payload FROM events WHERE type='relation.added'"
        " AND json_extract(payload, '$.run_id') = ? ORDER BY seq",
        (run.run_id,),
    ):
        p = json.loads(payload)
        row = conn.execute(
            "SELECT s.name FROM relations r JOIN skills s ON s.skill_id = r.source_id"
            " WHERE r.source_id=? AND r.type=? AND r.target_name=? AND r.origin='runbook'",
            (int(p["source_id"]), p["type"], p["target_name"]),
        ).fetchone()
        if row is not None:
            found.append((int(p["source_id"]), str(row[0]), str(p["type"]), str(p["target_name"])))
    return tuple(found)


def _changes(conn: sqlite3.Connection, run: Run) -> tuple[RunChange, ...]:
    """Per skill, its status before the run's first change and after its last."""
    marks = ",".join("?" * len(_STATUS_EVENTS))
    rows = conn.execute(
        f"SELECT type, payload FROM events WHERE type IN ({marks})"
        " AND json_extract(payload, '$.run_id') = ? ORDER BY seq",
        (*_STATUS_EVENTS, run.run_id),
    ).fetchall()
    spans: dict[int, list[str]] = {}  # skill id -> [before, after]
    for type_, payload in rows:
        p = json.loads(payload)
        if p.get("restored"):
            continue
        sid = int(p["skill_id"])
        after = str(TARGET[type_])
        spans.setdefault(sid, [str(p.get("from", "")), after])[1] = after
    changes = []
    for sid, (before, after) in spans.items():
        row = conn.execute("SELECT name, status FROM skills WHERE skill_id=?", (sid,)).fetchone()
        if row is not None:
            changes.append(RunChange(sid, str(row[0]), before, after, str(row[1])))
    return tuple(changes)


def _other(run: Run) -> tuple[str, ...]:
    """What stays whichever way the run is abandoned."""
    other = []
    if run.step:
        steps = (
            "the recorded step stays" if run.step == 1 else f"the {run.step} recorded steps stay"
        )
        other.append(f"{steps} in the run's history (events are never undone)")
    return tuple(other)


def describe(found: LeftBehind, *, restore: bool) -> list[str]:
    """The lines that say what abandoning leaves behind, restoring or keeping statuses."""
    lines = []
    for change in found.changes:
        if not change.restorable:
            if change.now != change.after:
                lines.append(
                    f"{change.name} is {change.now} (changed since the run made it"
                    f" {change.after}): left as it is"
                )
            continue
        if restore:
            lines.append(
                f"{change.name} goes back to {change.before} (the run made it {change.after})"
            )
        else:
            lines.append(f"{change.name} stays {change.after} (it was {change.before})")
        if change.after == "retired":
            lines[-1] += "; " + (
                "it leaves the denylist" if restore else "it stays on the denylist"
            )
    for _sid, source, kind, target in found.relations:
        lines.append(
            f"the relation {source} {kind} {target} (step 5) "
            + ("is removed" if restore else "stays")
        )
    if not found.changes and not found.relations:
        lines.append("the run changed no status: nothing to restore")
    return [*lines, *found.other]
