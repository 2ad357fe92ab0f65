"""Lifecycle events an agent or a person records for one skill (`librarian skill-event`, the
MCP server's tools): applied, outcome recorded, ..., checked against the catalog."""

from __future__ import annotations

from typing import Any

from store import catalog
from store.ingest.redact import redact
from store.kernel import Kernel, LibraryError
from store.lifecycle.candidates import settle
from store.lifecycle.status import check
from store.lifecycle.status_events import STATUS_EVENTS
from store.models import AGENT_LIFECYCLE_EVENTS, Event
from store.models.events import EventType


def skill_event(
    kernel: Kernel,
    key: str | int,
    event: str,
    *,
    detail: str = "",
    success: bool | None = None,
    version: int | None = None,
    session_id: str = "",
    inferred: bool = False,
    at: str = "",
) -> Event:
    """Append one lifecycle event for a skill (`AGENT_LIFECYCLE_EVENTS` names), checked:
    the skill and version must exist; an outcome needs success or failure. `at` dates an
    outcome that happened earlier than it is recorded."""
    if event not in AGENT_LIFECYCLE_EVENTS:
        allowed = ", ".join(AGENT_LIFECYCLE_EVENTS)
        raise LibraryError(f"unknown lifecycle event {event!r} (one of: {allowed})")
    with kernel.db.write() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise LibraryError(f"no skill named {key!r}")
        row = conn.execute(
            "SELECT name, status, current_version FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        name, status, current = row[0], row[1], int(row[2] or 0)
        if status in ("retired", "uninstalled") and event != "outcome_recorded":
            raise LibraryError(f"skill {name!r} is {status}")
        if f"skill.{event}" in STATUS_EVENTS:
            check(name, status, f"skill.{event}")
        detail = redact(detail)  # an agent's or a person's words: no secret kept
        payload: dict[str, Any] = {"skill_id": sid, "reason": detail, "detail": detail}
        if event == "outcome_recorded":
            if success is None:
                raise LibraryError("an outcome needs success or failure")
            number = current if version is None else int(version)
            known = conn.execute(
                "SELECT 1 FROM skill_versions WHERE skill_id=? AND version_no=?",
                (sid, number),
            ).fetchone()
            if known is None:
                raise LibraryError(f"skill {name!r} has no version {number}")
            payload.update(
                version_no=number, success=success, session_id=session_id, inferred=inferred
            )
            if at:
                payload["at"] = at
        appended = kernel.append_event(conn, f"skill.{event}", f"skill:{name}", payload)
        decided = None
        if event == "outcome_recorded":  # a candidate's runs may now decide it
            decided = settle(conn, kernel.append_event, kernel.config, sid)
    if decided is not None and decided.type == EventType.SKILL_CANDIDATE_PROMOTED:
        kernel.vectors.sync_index(embed=False)  # what is served (and searched) changed
    return appended
