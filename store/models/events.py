"""The event log as callers see it: one frozen row per event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """One row of the append-only, hash-chained event log."""

    seq: int
    ts: str
    type: str
    actor: str
    subject: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str
