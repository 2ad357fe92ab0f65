"""Which event sets which status: a table with no dependencies, so that light modules (the
CLI's parser, the runbook's abandon) read it without loading the kernel."""

from __future__ import annotations

from store.models.events import EventType

#: Status event -> the status it leads to (None: a check mark that changes no status).
TARGET: dict[str, str | None] = {
    EventType.SKILL_PROPOSED: "proposed",
    EventType.SKILL_PROMOTED: "stable",
    EventType.SKILL_DEPRECATED: "deprecated",
    EventType.SKILL_RETIRED: "retired",
    EventType.SKILL_VALIDATED: None,
}

#: The status events a person (or `health --apply`) may record.
STATUS_EVENTS = frozenset(TARGET)

#: The status event that puts a skill back in each status.
RESTORE_EVENT: dict[str, str] = {
    status: event for event, status in TARGET.items() if status is not None
}
