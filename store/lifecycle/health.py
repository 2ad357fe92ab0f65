"""Skill health from recorded outcomes (DESIGN §8): per skill and per version, over a window.

Verdicts (thresholds in config `[health]`):
- IDLE: no runs in the window;
- HEALTHY: failure rate at or below `warn`, or fewer than `min_runs` runs;
- DEGRADING: failure rate above `warn`;
- DRIFTING: failure rate above `fail` — `apply` demotes the skill to `deprecated` with an
  alert (a `skill.deprecated` event whose payload says `alert: "drifting"`), reversibly: a
  maintainer re-promotes it when it is repaired.

`apply` also promotes a `proposed` skill to `stable` after `promote_after` successes of its
current version with no failure. Flags: long idleness, a graduated skill whose pattern
decayed, and files the skill cites (`scripts/x.sh`, `references/y.md`) that are missing.

One grouped query over the window's outcomes feeds everything, so 1,000,000 outcomes cost
one index range scan; the weekly trend comes from the same rows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.models import SkillHealth, VersionHealth

if TYPE_CHECKING:
    from store.library import Library

VERDICT_ORDER = {"DRIFTING": 0, "DEGRADING": 1, "HEALTHY": 2, "IDLE": 3}
TREND_WEEKS = 8
_CITED = re.compile(r"(?<![\w/.-])((?:scripts|references|assets)/[\w./-]+\w)")


def settings(library: Library) -> dict[str, float]:
    get = library.config.get
    return {
        "window_days": float(get("health.window_days", 30)),
        "warn": float(get("health.warn", 0.2)),
        "fail": float(get("health.fail", 0.5)),
        "min_runs": float(get("health.min_runs", 3)),
        "idle_days": float(get("health.idle_days", 60)),
        "promote_after": float(get("health.promote_after", 5)),
    }


def verdict(runs: int, failures: int, s: dict[str, float]) -> str:
    if runs == 0:
        return "IDLE"
    if runs < s["min_runs"]:
        return "HEALTHY"
    rate = failures / runs
    if rate > s["fail"]:
        return "DRIFTING"
    if rate > s["warn"]:
        return "DEGRADING"
    return "HEALTHY"


def compute(library: Library, *, check_files: bool = True) -> list[SkillHealth]:
    """Every installed skill's health, worst first."""
    s = settings(library)
    now = datetime.fromisoformat(library.clock())
    since = (now - timedelta(days=s["window_days"])).isoformat()
    week0 = now - timedelta(weeks=TREND_WEEKS)
    per_version: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    trend: dict[int, list[list[int]]] = defaultdict(lambda: [[0, 0] for _ in range(TREND_WEEKS)])
    last_run: dict[int, str] = {}
    with library.db.read() as conn:
        skills = conn.execute(
            "SELECT skill_id, name, status, current_version, dir, last_used_at, installed_at"
            " FROM skills WHERE status != 'uninstalled' ORDER BY skill_id"
        ).fetchall()
        start = min(since, week0.isoformat())
        for sid, version, success, ts in conn.execute(
            "SELECT skill_id, version_no, success, ts FROM outcomes WHERE ts >= ?", (start,)
        ):
            if ts >= since:
                cell = per_version[sid][version]
                cell[0] += 1
                cell[1] += 0 if success else 1
            week = min(int((datetime.fromisoformat(ts) - week0) / timedelta(weeks=1)), 7)
            if 0 <= week < TREND_WEEKS:
                trend[sid][week][0] += 1
                trend[sid][week][1] += 0 if success else 1
            if ts > last_run.get(sid, ""):
                last_run[sid] = ts
        for sid, ts in conn.execute("SELECT skill_id, max(ts) FROM outcomes GROUP BY skill_id"):
            last_run[sid] = max(last_run.get(sid, ""), ts or "")
        decayed = {
            r[0]
            for r in conn.execute(
                "SELECT skill_name FROM patterns WHERE status='graduated' AND confidence < ?",
                (float(library.config.get("patterns.min_confidence", 0.4)),),
            )
        }
        bodies = _current_bodies(conn) if check_files else {}
    idle_before = (now - timedelta(days=s["idle_days"])).isoformat()
    out: list[SkillHealth] = []
    for sid, name, status, current, folder, last_used, installed in skills:
        versions = per_version.get(sid, {})
        runs = sum(c[0] for c in versions.values())
        failures = sum(c[1] for c in versions.values())
        flags: list[str] = []
        last = max(last_run.get(sid, ""), last_used or "")
        if (last or installed or "") < idle_before:
            flags.append(f"idle: no use since {(last or installed or '?')[:10]}")
        if name in decayed:
            flags.append("re-validate: its pattern decayed")
        for cited in _missing_files(folder, bodies.get(sid, "")):
            flags.append(f"missing file: {cited}")
        out.append(
            SkillHealth(
                skill_id=sid,
                name=name,
                status=status,
                version_no=int(current),
                verdict=verdict(runs, failures, s),
                runs=runs,
                failures=failures,
                failure_rate=round(failures / runs, 4) if runs else 0.0,
                last_run=last_run.get(sid, ""),
                trend=tuple(
                    round(f / r, 3) if r else -1.0 for r, f in trend.get(sid, _empty_trend())
                ),
                versions=tuple(
                    VersionHealth(
                        version_no=v,
                        runs=c[0],
                        failures=c[1],
                        failure_rate=round(c[1] / c[0], 4),
                        verdict=verdict(c[0], c[1], s),
                    )
                    for v, c in sorted(versions.items())
                ),
                flags=tuple(flags),
            )
        )
    out.sort(key=lambda h: (VERDICT_ORDER[h.verdict], -h.failure_rate, -len(h.flags), h.name))
    return out


def _empty_trend() -> list[list[int]]:
    return [[0, 0] for _ in range(TREND_WEEKS)]


def _current_bodies(conn: Any) -> dict[int, str]:
    rows = conn.execute(
        "SELECT s.skill_id, b.text FROM skills s JOIN skill_versions v"
        " ON v.skill_id = s.skill_id AND v.version_no = s.current_version"
        " JOIN blobs b ON b.hash = v.body_hash WHERE s.status != 'uninstalled'"
    ).fetchall()
    return {int(r[0]): r[1] for r in rows}


def _missing_files(folder: str, body: str) -> list[str]:
    if not folder or not body:
        return []
    base = Path(folder)
    found = sorted({m.group(1).rstrip(".") for m in _CITED.finditer(body)})
    return [f for f in found if not (base / f).exists()][:5]


def apply(library: Library) -> tuple[list[SkillHealth], list[str]]:
    """Compute health, then demote drifting skills and promote proven proposed ones (each an
    event with the numbers as its reason). Returns the health and what changed."""
    s = settings(library)
    found = compute(library, check_files=False)
    changes: list[str] = []
    with library.db.read() as conn:
        clean = _clean_runs(conn)
    for h in found:
        if h.verdict == "DRIFTING" and h.status in ("stable", "proposed"):
            reason = (
                f"drifting: {h.failures} of {h.runs} runs failed in the last"
                f" {s['window_days']:g} days ({h.failure_rate:.0%} > {s['fail']:.0%})"
            )
            library.change_status(h.skill_id, "skill.deprecated", reason, alert="drifting")
            changes.append(f"{h.name}: deprecated ({reason})")
        elif h.status == "proposed" and clean.get(h.skill_id, 0) >= s["promote_after"]:
            reason = f"{clean[h.skill_id]} successes of v{h.version_no} and no failure"
            library.change_status(h.skill_id, "skill.promoted", reason)
            changes.append(f"{h.name}: promoted to stable ({reason})")
    if changes:
        found = compute(library)
    return found, changes


def _clean_runs(conn: Any) -> dict[int, int]:
    """Successes of each skill's current version, for versions that never failed."""
    rows = conn.execute(
        "SELECT o.skill_id, sum(o.success), sum(1 - o.success) FROM outcomes o JOIN skills s"
        " ON s.skill_id = o.skill_id AND o.version_no = s.current_version GROUP BY o.skill_id"
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows if int(r[2]) == 0}
