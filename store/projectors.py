"""Every domain's projection in one explicit list, and `apply_event`, the one writer of
projection rows (see `store.projections`). This module imports the domains' projections;
none of them imports it back."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from store.forget import projections as forget_projections
from store.lifecycle import proposal_projections, runbook_projections
from store.models import Event
from store.patterns import projections as pattern_projections
from store.projections import Handler, Registry
from store.sessions import projections as session_projections
from store.skills import governance_projections
from store.skills import projections as skill_projections
from store.team import projections as team_projections

REGISTRY = Registry(
    [
        skill_projections.projection,
        governance_projections.projection,
        session_projections.projection,
        pattern_projections.projection,
        proposal_projections.projection,
        runbook_projections.projection,
        forget_projections.projection,
        team_projections.projection,
    ]
)
HANDLERS: Mapping[str, Handler] = REGISTRY.handlers


def apply_event(conn: sqlite3.Connection, event: Event) -> None:
    """Update the projections for one event; unknown types change nothing."""
    REGISTRY.apply(conn, event)


def apply_events(conn: sqlite3.Connection, events: Sequence[Event]) -> None:
    """Update the projections for events in order (runs of a type with a bulk handler at
    once); the same rows as `apply_event` on each."""
    REGISTRY.apply_many(conn, events)
