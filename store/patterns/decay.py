"""Decay: a pattern loses confidence for every session-week without retrieval (DESIGN §7).

A *session-week* is a calendar week (ISO, Monday first) in which at least one session was
ingested for the pattern's project (any project for TEAM patterns) — weeks nobody worked do
not count, so a holiday does not erase what the team learned. The clock starts at the later
of the pattern's last retrieval and the last time it was seen in a session; a retrieval resets
it (the `retrieval.logged` projection restores the base confidence).

`confidence = base_confidence × factor^weeks`; below `patterns.min_confidence` the pattern is
`decayed`: it leaves the profile and the graduation candidates, and a skill it graduated into
is flagged for re-validation.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from datetime import date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.kernel import Kernel


def week_index(ts: str) -> int | None:
    """Weeks since 1970-01-05 (a Monday) of an ISO timestamp; None when unreadable."""
    if not ts:
        return None
    try:
        day = datetime.fromisoformat(ts.replace("Z", "+00:00")).date()
    except ValueError:
        try:
            day = date.fromisoformat(ts[:10])
        except ValueError:
            return None
    return (day - date(1970, 1, 5)).days // 7


class SessionWeeks:
    """The weeks with sessions, per project and overall."""

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        by_project: dict[str, set[int]] = defaultdict(set)
        everywhere: set[int] = set()
        for project, started in rows:
            week = week_index(started)
            if week is not None:
                by_project[project].add(week)
                everywhere.add(week)
        self._by_project = {p: sorted(w) for p, w in by_project.items()}
        self._all = sorted(everywhere)

    def since(self, project: str, team: bool, ts: str) -> int:
        """Session-weeks strictly after the week of `ts`."""
        start = week_index(ts)
        if start is None:
            return 0
        weeks = self._all if team else self._by_project.get(project, [])
        return len(weeks) - bisect.bisect_right(weeks, start)


def session_weeks(library: Kernel) -> SessionWeeks:
    with library.db.read() as conn:
        rows = conn.execute("SELECT project, started_at FROM sessions").fetchall()
    return SessionWeeks([(r[0], r[1]) for r in rows])


def decayed_confidence(base: float, weeks: int, factor: float) -> float:
    return round(base * factor**weeks, 4)


def apply_decay(library: Kernel) -> int:
    """Recompute every live pattern's confidence; one `pattern.decayed` event for those that
    changed. Returns how many changed."""
    factor = float(library.config.get("patterns.decay", 0.95))
    floor = float(library.config.get("patterns.min_confidence", 0.4))
    weeks = session_weeks(library)
    updates: list[dict[str, object]] = []
    with library.db.write() as conn:
        for pid, base, conf, status, scope, project, last_seen, last_retrieved in conn.execute(
            "SELECT pattern_id, base_confidence, confidence, status, scope, project, last_seen,"
            " last_retrieved_at FROM patterns WHERE status IN ('active', 'decayed', 'graduated')"
            " ORDER BY pattern_id"
        ).fetchall():
            clock = max(last_seen or "", last_retrieved or "")
            count = weeks.since(project, scope == "TEAM", clock)
            value = decayed_confidence(float(base), count, factor)
            new_status = status
            if status in ("active", "decayed"):
                new_status = "decayed" if value < floor else "active"
            if abs(value - float(conf)) > 1e-4 or new_status != status:
                updates.append(
                    {"pattern_id": pid, "confidence": value, "status": new_status, "weeks": count}
                )
        if updates:
            library.append_event(conn, "pattern.decayed", "patterns", {"updates": updates})
    return len(updates)
