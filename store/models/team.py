"""Plain data about the team library (store/team/), for the CLI, the app and its widgets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The hub schema this librarian speaks (store/team/hub_schema.py keeps the migrations).
CLIENT_SCHEMA = 2


@dataclass(frozen=True)
class TeamStatus:
    """Where this library stands with its hub (plain data for the Team screen)."""

    configured: bool
    hub: str = ""
    reachable: bool = False
    problem: str = ""
    user: str = ""
    reviewer: bool = False
    library_id: str = ""
    hub_schema: int = 0
    client_schema: int = CLIENT_SCHEMA
    #: Local: events waiting to be pushed, the cursors, and when they last moved.
    queued: int = 0
    push_seq: int = 0
    pushed_at: str = ""
    pull_cursor: int = 0
    pulled_at: str = ""
    #: Team items here: own ones by team status, and those pulled from others.
    own: dict[str, int] = field(default_factory=dict)
    received: int = 0
    conflicts: int = 0
    #: From the hub.
    waiting_for_me: int = 0
    staged: int = 0
    hub_events: int = 0
    libraries: int = 0
    behind: int = 0
    mine_in_hub: dict[str, int] = field(default_factory=dict)
    anchored: int = 0
    milliseconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
