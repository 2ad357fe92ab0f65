"""Uses of a skill: `Skill` calls seen in transcripts, and the importance they keep up.

Every `Skill` call a session makes (one that launched: its own result is not an error) is a
use: `use_count` and `last_used_at` of the skill follow them, dated when the call was made.
Ingest records a `skill.used` event per (session, skill) whose calls grew — with the calls of
the session so far — so re-ingesting a growing transcript never counts a call twice.

Importance (DESIGN §5) starts at `importance.start` (0.7) when a skill is installed or used,
decays by `importance.decay` (0.99) per idle day down to `importance.floor` (0.3), and uses
add a little on top (`importance.use_boost` × ln(1 + uses), capped at 1).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from store.config import Config
from store.models.events import EventType
from store.ports import Append


@dataclass(frozen=True)
class ImportanceRule:
    """How importance starts, decays and is boosted (config `[importance]`)."""

    start: float = 0.7
    decay: float = 0.99
    floor: float = 0.3
    use_boost: float = 0.05

    @classmethod
    def from_config(cls, config: Config) -> ImportanceRule:
        get = config.get
        return cls(
            start=_bounded(get("importance.start", cls.start), 0.0, 1.0, cls.start),
            decay=_bounded(get("importance.decay", cls.decay), 0.0, 1.0, cls.decay),
            floor=_bounded(get("importance.floor", cls.floor), 0.0, 1.0, cls.floor),
            use_boost=_bounded(get("importance.use_boost", cls.use_boost), 0.0, 1.0, 0.05),
        )

    def score(self, last_used: str | None, installed: str, uses: int, now: datetime) -> float:
        """`start × decay^idle days` (idle since the last use, else since installed), at
        least `floor`, plus the use boost; at most 1."""
        try:
            then = datetime.fromisoformat(last_used or installed)
        except (TypeError, ValueError):
            return 1.0
        idle = max(0.0, (now - then).total_seconds() / 86400.0)
        decayed = max(self.floor, self.start * self.decay**idle)
        return float(min(1.0, decayed + self.use_boost * math.log1p(max(uses, 0))))


def _bounded(value: object, low: float, high: float, default: float) -> float:
    if isinstance(value, bool):
        return default
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
    return number if low <= number <= high else default


def tally(calls: Iterable[tuple[str, str]]) -> dict[str, tuple[int, str, str]]:
    """(skill name, call time) pairs → name: (calls, first, last)."""
    found: dict[str, tuple[int, str, str]] = {}
    for name, at in calls:
        count, first, last = found.get(name, (0, at, at))
        found[name] = (count + 1, min(first, at), max(last, at))
    return found


def record(
    conn: sqlite3.Connection,
    append: Append,
    session_id: str,
    calls: dict[str, tuple[int, str, str]],
) -> list[int]:
    """Append `skill.used` for each catalog skill whose calls in this session grew (inside the
    caller's write transaction); returns the ids of the skills used."""
    used: list[int] = []
    for name in sorted(calls):
        count, first, last = calls[name]
        skill = _resolve(conn, name)
        if skill is None:
            continue  # not a skill the catalog knows (yet)
        sid, known = skill
        before = conn.execute(
            "SELECT calls FROM skill_calls WHERE session_id=? AND skill_id=?", (session_id, sid)
        ).fetchone()
        if before is not None and int(before[0]) >= count:
            continue
        append(
            conn,
            EventType.SKILL_USED,
            f"skill:{known}",
            {
                "skill_id": sid,
                "session_id": session_id,
                "calls": count,
                "added": count - (int(before[0]) if before else 0),
                "first_at": first,
                "last_at": last,
            },
        )
        used.append(sid)
    return used


def _resolve(conn: sqlite3.Connection, used: str) -> tuple[int, str] | None:
    """The catalog skill a `Skill` call named (a `plugin:name` call falls back to the name)."""
    names = [used] + ([used.rsplit(":", 1)[-1]] if ":" in used else [])
    for name in names:
        row = conn.execute(
            "SELECT skill_id, name FROM skills WHERE name=?"
            " ORDER BY status = 'uninstalled', scope_rank, root_rank, fs_path LIMIT 1",
            (name,),
        ).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
    return None
