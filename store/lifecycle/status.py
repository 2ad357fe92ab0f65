"""Skill status transitions (DESIGN §8): which status events may follow which status.

proposed → stable (promoted after clean successes) → deprecated (not preferred, e.g. drifting)
→ retired (never recalled, on the denylist). A deprecated skill may be promoted back (a drift
alert reversed); a retired or otherwise repaired skill comes back only as proposed, and must
earn stable again. Uninstalled skills take no status events.
"""

from __future__ import annotations

import sqlite3

from store import catalog
from store.errors import LibrarianError
from store.ingest.redact import redact
from store.kernel import Kernel, LibraryError
from store.lifecycle.requirements import unproven_requirements
from store.lifecycle.status_events import STATUS_EVENTS, TARGET
from store.models.events import EventType

#: Status event -> the statuses it may be applied to.
ALLOWED_FROM: dict[str, frozenset[str]] = {
    EventType.SKILL_PROPOSED: frozenset({"stable", "deprecated", "retired"}),
    EventType.SKILL_PROMOTED: frozenset({"proposed", "deprecated"}),
    EventType.SKILL_DEPRECATED: frozenset({"proposed", "stable"}),
    EventType.SKILL_RETIRED: frozenset({"proposed", "stable", "deprecated"}),
    EventType.SKILL_VALIDATED: frozenset({"proposed", "stable", "deprecated"}),
}

_HINTS = {
    "retired": "a retired skill comes back only as proposed (repair it, then re-propose)",
    "uninstalled": "its SKILL.md is gone; reinstall it first",
}


class TransitionError(LibrarianError):
    """A status change that the lifecycle does not allow."""


def check(name: str, status: str, event_type: str) -> None:
    """Raise `TransitionError` with a specific message when `event_type` cannot follow
    `status`."""
    allowed = ALLOWED_FROM.get(event_type)
    if allowed is None:
        raise TransitionError(f"unknown status event {event_type!r}")
    if status in allowed:
        return
    target = TARGET[event_type]
    verb = event_type.removeprefix("skill.")
    if target == status:
        raise TransitionError(f"{name!r} is already {status}")
    hint = _HINTS.get(status, f"{verb} applies to {', '.join(sorted(allowed))} skills")
    raise TransitionError(f"cannot mark {name!r} {verb}: it is {status}; {hint}")


def record(
    library: Kernel,
    conn: sqlite3.Connection,
    skill: tuple[int, str, str],
    event_type: str,
    reason: str,
    **extra: str | float,
) -> None:
    """Check and append one status event for `skill` (id, name, current status) inside an
    open write transaction: the event carries the reason and the status it came from."""
    sid, name, status = skill
    check(name, status, event_type)
    if event_type == EventType.SKILL_PROMOTED:
        unproven = unproven_requirements(conn, sid)
        if unproven:
            first = unproven[0]
            raise TransitionError(
                f"cannot promote {name!r}: it {first.relation} {first.target}, which is"
                f" {first.target_status}; a stable skill cannot depend on a proposed one"
                " (promote the requirement first)"
            )
    library.append_event(
        conn,
        event_type,
        f"skill:{name}",
        {"skill_id": sid, "reason": redact(reason), "from": status, **extra},
    )


def change(
    library: Kernel, key: str | int, event_type: str, reason: str, **extra: str | float
) -> None:
    """Record a status event (deprecate, retire, promote, ...) for one skill."""
    if event_type not in STATUS_EVENTS:
        raise LibraryError(f"unknown status event {event_type!r}")
    if not reason.strip():
        raise LibraryError("a status change needs a reason")
    with library.db.write() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise LibraryError(f"no skill named {key!r}")
        name, status = conn.execute(
            "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        record(library, conn, (sid, name, status), event_type, reason, **extra)
