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

SQLite does the counting: one grouped query for the window (per skill and version), one for
the weekly trend, so 1,000,000 outcomes never become Python objects.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import catalog
from store.config import Config
from store.errors import LibrarianError
from store.lifecycle import status as skill_status
from store.lifecycle.candidates import decide, decision, latest, open_candidates
from store.lifecycle.candidates import settings as candidate_settings
from store.lifecycle.gcpause import paused_gc
from store.lifecycle.requirements import all_unproven_of
from store.models import HEALTH_VERDICTS, HealthChange, Outcome, SkillHealth, VersionHealth

if TYPE_CHECKING:
    from store.kernel import Kernel

VERDICT_ORDER = {"DRIFTING": 0, "DEGRADING": 1, "HEALTHY": 2, "IDLE": 3}
TREND_WEEKS = 8
_CITED = re.compile(r"(?<![\w/.-])((?:scripts|references|assets)/[\w./-]+\w)")


def settings(library: Kernel) -> dict[str, float]:
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


def compute(library: Kernel, *, check_files: bool = True, trend: bool = True) -> list[SkillHealth]:
    """Every installed skill's health, worst first. `trend=False` leaves the weekly trend
    out (empty), which halves the work: a screen shows the verdicts first."""
    with paused_gc():
        return _compute(library, check_files, trend)


def _compute(library: Kernel, check_files: bool, trend: bool) -> list[SkillHealth]:
    s = settings(library)
    now = datetime.fromisoformat(library.clock())
    since = (now - timedelta(days=s["window_days"])).isoformat()
    weeks = [(now - timedelta(weeks=TREND_WEEKS - i)).isoformat() for i in range(TREND_WEEKS)]
    with library.db.read() as conn:
        skills = conn.execute(
            "SELECT skill_id, name, status, served_version, dir, last_used_at, installed_at,"
            " max(coalesce(last_success_at, ''), coalesce(last_failure_at, ''))"
            " FROM skills WHERE status != 'uninstalled' ORDER BY skill_id"
        ).fetchall()
        candidates = latest(conn, library.config)
        counts = _window_counts(conn, since)
        trends = _trends(conn, weeks) if trend else {}
        decayed = {
            r[0]
            for r in conn.execute(
                "SELECT skill_name FROM patterns WHERE status='graduated' AND confidence < ?",
                (float(library.config.get("patterns.min_confidence", 0.4)),),
            )
        }
        bodies = _citing_bodies(conn) if check_files else {}
    idle_before = (now - timedelta(days=s["idle_days"])).isoformat()
    no_runs = (-1.0,) * TREND_WEEKS if trend else ()
    out: list[SkillHealth] = []
    for sid, name, status, current, folder, last_used, installed, last_run in skills:
        versions = counts.get(sid, {})
        flags: list[str] = []
        last = max(last_run, last_used or "")
        if (last or installed or "") < idle_before:
            flags.append(f"idle: no use since {(last or installed or '?')[:10]}")
        if name in decayed:
            flags.append("re-validate: its pattern decayed")
        if sid in bodies:
            flags += [f"missing file: {f}" for f in _missing_files(folder, bodies[sid])]
        candidate = candidates.get(sid)
        if candidate is not None and candidate.status == "set_aside" and candidate.alert:
            flags.append(f"alert: candidate v{candidate.version_no} {candidate.alert}, set aside")
        row = _health(
            (sid, name, status, int(current), last_run),
            versions,
            s,
            trends.get(sid, no_runs),
            tuple(flags),
        )
        out.append(row if candidate is None else replace(row, candidate=candidate))
    out = at_risk(out, library)
    # Retired skills are never served again: their health is history, listed last.
    out.sort(
        key=lambda h: (
            h.status == "retired",
            VERDICT_ORDER[h.verdict],
            -h.failure_rate,
            -len(h.flags),
            h.name,
        )
    )
    return out


#: A covering index that lets the grouped counts read the index alone, in group order
#: (no sort, no row lookups); used when the schema has it.
COVERING_INDEX = "outcomes_health"


def _source(conn: Any, start: str) -> tuple[str, str, dict[str, Any]]:
    """(FROM clause, extra WHERE, parameters) for reading the outcomes since `start`.

    With the covering index the grouped query scans it in order. Without it, the rows are
    read in table order from the first outcome recorded in the period (outcomes are
    appended in time order, mostly): an index range over `ts` would fetch every row out of
    order, several times slower than reading them in a row.
    """
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='index' AND name=?", (COVERING_INDEX,)
    ).fetchone()
    if found:
        return f"outcomes INDEXED BY {COVERING_INDEX}", "", {}
    first = conn.execute("SELECT min(seq) FROM outcomes WHERE ts >= ?", (start,)).fetchone()[0]
    return "outcomes NOT INDEXED", " AND seq >= :first", {"first": first or 0}


def _window_counts(conn: Any, since: str) -> dict[int, dict[int, list[int]]]:
    """{skill: {version: [runs, failures]}} in the window: one grouped scan, the counting
    done by SQLite (1,000,000 outcomes never become Python objects)."""
    source, where, params = _source(conn, since)
    counts: dict[int, dict[int, list[int]]] = {}
    for sid, version, runs, failures in conn.execute(
        f"SELECT skill_id, version_no, count(*), count(*) - sum(success) FROM {source}"
        f" WHERE ts >= :since{where} GROUP BY skill_id, version_no",
        {"since": since, **params},
    ):
        counts.setdefault(sid, {})[int(version)] = [int(runs), int(failures)]
    return counts


def _trends(conn: Any, weeks: list[str]) -> dict[int, tuple[float, ...]]:
    """{skill: weekly failure rate, oldest week first (-1.0: a week without runs)}; SQLite
    groups and divides, Python only places each week's rate."""
    source, where, params = _source(conn, weeks[0])
    week = "CASE " + " ".join(f"WHEN ts < :w{i} THEN {i - 1}" for i in range(1, TREND_WEEKS))
    params |= {f"w{i}": bound for i, bound in enumerate(weeks)}
    cells: dict[int, list[float]] = {}
    for sid, number, rate in conn.execute(
        f"SELECT skill_id, {week} ELSE {TREND_WEEKS - 1} END AS week,"
        f" round(1.0 - avg(success), 3) FROM {source} WHERE ts >= :w0{where}"
        " GROUP BY skill_id, week",
        params,
    ):
        found = cells.get(sid)
        if found is None:
            found = cells[sid] = [-1.0] * TREND_WEEKS
        found[number] = rate
    return {sid: tuple(weekly) for sid, weekly in cells.items()}


def trends(library: Kernel) -> dict[int, tuple[float, ...]]:
    """Every skill's weekly failure rate (the `trend` of `compute`), by skill id; skills
    without runs in the last weeks are left out."""
    now = datetime.fromisoformat(library.clock())
    weeks = [(now - timedelta(weeks=TREND_WEEKS - i)).isoformat() for i in range(TREND_WEEKS)]
    with paused_gc(), library.db.read() as conn:
        return _trends(conn, weeks)


def file_flags(library: Kernel) -> dict[int, tuple[str, ...]]:
    """The "missing file" flags of `compute`, by skill id (only skills that have some)."""
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT skill_id, dir FROM skills WHERE status != 'uninstalled'"
        ).fetchall()
        bodies = _citing_bodies(conn)
    folders = {int(sid): folder for sid, folder in rows}
    found = {
        sid: tuple(f"missing file: {f}" for f in _missing_files(folders.get(sid, ""), body))
        for sid, body in bodies.items()
    }
    return {sid: flags for sid, flags in found.items() if flags}


def _citing_bodies(conn: Any) -> dict[int, str]:
    """The current bodies that cite a file (the only ones whose files are checked)."""
    rows = conn.execute(
        "SELECT s.skill_id, b.text FROM skills s JOIN skill_versions v"
        " ON v.skill_id = s.skill_id AND v.version_no = s.current_version"
        " JOIN blobs b ON b.hash = v.body_hash WHERE s.status != 'uninstalled'"
        " AND (b.text LIKE '%scripts/%' OR b.text LIKE '%references/%'"
        " OR b.text LIKE '%assets/%')"
    ).fetchall()
    return {int(r[0]): r[1] for r in rows}


def _missing_files(folder: str, body: str) -> list[str]:
    if not folder or not body:
        return []
    base = Path(folder)
    found = sorted({m.group(1).rstrip(".") for m in _CITED.finditer(body)})
    return [f for f in found if not (base / f).exists()][:5]


def plan(library: Kernel, found: list[SkillHealth] | None = None) -> list[HealthChange]:
    """The changes `apply` would make now, worst first; nothing is changed."""
    s = settings(library)
    if found is None:
        found = compute(library, check_files=False)
    with library.db.read() as conn:
        clean = _clean_runs(conn)
        decided = candidate_changes(conn, library.config)
        unproven = {r.source for r in all_unproven_of(conn, "proposed")}
    changes: list[HealthChange] = []
    for h in found:
        if h.verdict == "DRIFTING" and h.status in ("stable", "proposed"):
            reason = (
                f"drifting: {h.failures} of {h.runs} runs failed in the last"
                f" {s['window_days']:g} days ({h.failure_rate:.0%} > {s['fail']:.0%})"
            )
            changes.append(HealthChange(h.skill_id, h.name, "skill.deprecated", h.status, reason))
        elif (
            h.status == "proposed"
            and clean.get(h.skill_id, 0) >= s["promote_after"]
            and h.name not in unproven  # it would be a stable skill on a proposed one
        ):
            reason = f"{clean[h.skill_id]} successes of v{h.version_no} and no failure"
            changes.append(HealthChange(h.skill_id, h.name, "skill.promoted", h.status, reason))
    return changes + decided


def apply(library: Kernel) -> tuple[list[SkillHealth], list[str]]:
    """Compute health, then demote drifting skills and promote proven proposed ones (each an
    event with the numbers as its reason). Returns the health and what changed."""
    found = compute(library)
    changes: list[str] = []
    planned = plan(library, found)
    for change in planned:
        if change.event_type.startswith("skill.candidate_"):
            continue
        extra = {"alert": "drifting"} if change.event_type == "skill.deprecated" else {}
        skill_status.change(library, change.skill_id, change.event_type, change.reason, **extra)
        changes.append(change.describe())
    decided = {c.skill_id: c for c in planned if c.event_type.startswith("skill.candidate_")}
    if decided:  # in one transaction, the candidates' runs read in one scan
        with library.db.write() as conn:
            opened = open_candidates(conn, library.config)
            s = candidate_settings(library.config)
            for sid, change in decided.items():
                candidate = opened.get(sid)
                if candidate is not None and decide(conn, library.append_event, candidate, s):
                    changes.append(change.describe())
    return (compute(library) if changes else found), changes


def recent_outcomes(library: Kernel, key: str | int, limit: int = 20) -> list[Outcome]:
    """A skill's last `limit` recorded runs, newest first (one index range)."""
    with library.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise LibrarianError(f"no skill named {key!r}")
        rows = conn.execute(
            "SELECT seq, ts, actor, version_no, success, session_id, detail, inferred"
            " FROM outcomes WHERE skill_id=? ORDER BY ts DESC, seq DESC LIMIT ?",
            (sid, int(limit)),
        ).fetchall()
    return [
        Outcome(int(r[0]), r[1], r[2], int(r[3]), bool(r[4]), r[5], r[6], bool(r[7])) for r in rows
    ]


def candidate_changes(conn: Any, config: Config) -> list[HealthChange]:
    """The candidates whose runs call for a decision that was not made yet (they are decided
    as outcomes are recorded; this catches up after the thresholds changed)."""
    s = candidate_settings(config)
    found = []
    for sid, candidate in open_candidates(conn, config).items():
        kind, reason = decision(candidate, s)
        status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()
        if kind and status is not None and status[0] not in ("retired", "uninstalled"):
            found.append(
                HealthChange(
                    sid, candidate.name, kind, str(status[0]), reason, candidate.version_no
                )
            )
    return found


def at_risk(rows: list[SkillHealth], library: Kernel) -> list[SkillHealth]:
    """Flag the skills whose version of a requirement is drifting. A dependent pinned to a
    version is judged by that version's health; an unpinned one by the served version's."""
    drifting = {
        (h.name, v.version_no): v
        for h in rows
        if h.status != "retired"
        for v in h.versions
        if v.verdict == "DRIFTING"
    }
    if not drifting:
        return rows
    served = {h.name: h.served_version or h.version_no for h in rows}
    with library.db.read() as conn:
        edges = conn.execute(
            "SELECT s.name, r.type, r.target_name, r.pin FROM relations r"
            " JOIN skills s ON s.skill_id = r.source_id WHERE s.status != 'uninstalled'"
            " AND r.type IN ('requires', 'extends') ORDER BY s.name, r.target_name"
        ).fetchall()
    flags: dict[str, list[str]] = {}
    for source, kind, target, pin in edges:
        version = int(pin) or served.get(target, 0)
        bad = drifting.get((target, version))
        if bad is None or source == target:
            continue
        how = f"pinned to v{version}" if pin else f"v{version} served"
        flags.setdefault(source, []).append(
            f"at risk: {kind} {target} ({how}), drifting: {bad.failures} of {bad.runs} failed"
        )
    return [replace(h, flags=(*h.flags, *flags[h.name])) if h.name in flags else h for h in rows]


def _clean_runs(conn: Any) -> dict[int, int]:
    """Successes of each skill's current version, for versions that never failed."""
    rows = conn.execute(
        "SELECT o.skill_id, sum(o.success), sum(1 - o.success) FROM outcomes o JOIN skills s"
        " ON s.skill_id = o.skill_id AND o.version_no = s.current_version GROUP BY o.skill_id"
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows if int(r[2]) == 0}


def first(library: Kernel, limit: int = 200) -> tuple[list[SkillHealth], dict[str, int]]:
    """The `limit` worst skills and how many skills have each verdict, for a first look:
    SQLite counts, judges and orders every skill (the same rules as `compute`), and only the
    first rows become objects. Flags and trends are left out (`compute` has them); ties are
    ordered by name alone, so `compute`'s order can differ among equally bad skills."""
    s = settings(library)
    now = datetime.fromisoformat(library.clock())
    since = (now - timedelta(days=s["window_days"])).isoformat()
    with paused_gc(), library.db.read() as conn:
        source, where, params = _source(conn, since)
        ranked = conn.execute(
            f"""
            WITH v AS (
                SELECT skill_id, version_no, count(*) AS r, count(*) - sum(success) AS f
                FROM {source} WHERE ts >= :since{where} GROUP BY skill_id, version_no),
            t AS (SELECT skill_id, sum(r) AS r, sum(f) AS f FROM v GROUP BY skill_id),
            j AS (
                SELECT s.skill_id, s.name, s.status = 'retired' AS gone,
                    CASE WHEN cv.r >= :min THEN cv.r ELSE coalesce(t.r, 0) END AS runs,
                    CASE WHEN cv.r >= :min THEN cv.f ELSE coalesce(t.f, 0) END AS fails
                FROM skills s LEFT JOIN t ON t.skill_id = s.skill_id
                LEFT JOIN v cv ON cv.skill_id = s.skill_id AND cv.version_no = s.served_version
                WHERE s.status != 'uninstalled'),
            k AS (
                SELECT skill_id, name, gone, runs, fails,
                    CASE WHEN runs > 0 THEN fails * 1.0 / runs ELSE 0.0 END AS rate
                FROM j)
            SELECT skill_id, CASE WHEN runs = 0 THEN 3 WHEN runs < :min THEN 2
                WHEN rate > :fail THEN 0 WHEN rate > :warn THEN 1 ELSE 2 END AS rank
            FROM k ORDER BY gone, rank, rate DESC, name, skill_id
            """,
            {
                "since": since,
                "min": s["min_runs"],
                "fail": s["fail"],
                "warn": s["warn"],
                **params,
            },
        ).fetchall()
        names = {rank: verdict for verdict, rank in VERDICT_ORDER.items()}
        totals = dict.fromkeys(HEALTH_VERDICTS, 0)
        for _sid, rank in ranked:
            totals[names[rank]] += 1
        chosen = [int(r[0]) for r in ranked[:limit]]
        rows = _rows_for(conn, chosen, since, s)
    return rows, totals


def _rows_for(conn: Any, chosen: list[int], since: str, s: dict[str, float]) -> list[SkillHealth]:
    """Health rows (no trend, no flags) for these skills, in this order."""
    if not chosen:
        return []
    marks = ",".join("?" * len(chosen))
    counts: dict[int, dict[int, list[int]]] = {}
    for sid, version, runs, failures in conn.execute(  # a few index ranges, by skill
        "SELECT skill_id, version_no, count(*), count(*) - sum(success) FROM outcomes"
        f" WHERE skill_id IN ({marks}) AND ts >= ? GROUP BY skill_id, version_no",
        (*chosen, since),
    ):
        counts.setdefault(int(sid), {})[int(version)] = [int(runs), int(failures)]
    info = {
        int(r[0]): r
        for r in conn.execute(
            "SELECT skill_id, name, status, served_version,"
            " max(coalesce(last_success_at, ''), coalesce(last_failure_at, ''))"
            f" FROM skills WHERE skill_id IN ({marks})",
            chosen,
        )
    }
    return [
        _health((sid, *info[sid][1:4], info[sid][4]), counts.get(sid, {}), s, (), ())
        for sid in chosen
    ]


def _health(
    skill: tuple[int, str, str, int, str],
    versions: dict[int, list[int]],
    s: dict[str, float],
    trend: tuple[float, ...],
    flags: tuple[str, ...],
) -> SkillHealth:
    """One skill's row from its window counts by version. Once the current version has
    `min_runs` runs of its own it is judged alone: it is what agents get now, so old
    versions' runs neither mask a broken edit nor drag down a repair."""
    sid, name, status, current, last_run = skill
    judged = versions.get(int(current))  # the served version (what agents are given)
    if judged is not None and judged[0] >= s["min_runs"]:
        runs, failures = judged[0], judged[1]
    else:
        runs = sum(c[0] for c in versions.values())
        failures = sum(c[1] for c in versions.values())
    return SkillHealth(
        skill_id=sid,
        name=name,
        status=status,
        version_no=int(current),
        verdict=verdict(runs, failures, s),
        runs=runs,
        failures=failures,
        failure_rate=round(failures / runs, 4) if runs else 0.0,
        last_run=last_run,
        trend=trend,
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
        flags=flags,
        served_version=int(current),
    )
