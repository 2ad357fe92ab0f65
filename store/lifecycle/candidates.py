"""Candidate versions: a new version of a stable skill proves itself before it is served.

When a scan records a new version of a *stable* skill, that version is the candidate and the
previous (served) version stays the one the librarian suggests, serves to agents and judges
the skill by. The candidate's own runs decide (thresholds from `[health]`):

- `promote_after` successes in a row (a failure starts the count again) → it takes over
  (`skill.candidate_promoted`), unless the skill is stable and the candidate requires a skill
  that is only proposed (a stable skill cannot depend on a proposed one: it waits);
- drifting — at least `min_runs` runs and a failure rate above `fail` → it is set aside
  (`skill.candidate_set_aside` with `alert: "drifting"`); the served version stays.

Candidates are settled as their outcomes are recorded (inside the outcome's transaction) and
by `health --apply`. A new version whose SKILL.md is the served version's own, or that the
librarian itself wrote on a reviewer's say (an approved enrichment, a runbook's regression
case), is served at once; so is any new version of a skill that is not stable.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from store.config import Config
from store.lifecycle.requirements import unproven_requirements
from store.models.events import Event, EventType
from store.models.governance import CandidateVersion
from store.ports import Append

_COLUMNS = (
    "c.skill_id, s.name, c.version_no, c.base_version, c.status, c.opened_at, c.decided_at,"
    " c.reason, c.alert"
)


def settings(config: Config) -> dict[str, float]:
    """The thresholds candidates are held to (`[health]`)."""
    get = config.get
    return {
        "promote_after": float(get("health.promote_after", 5)),
        "min_runs": float(get("health.min_runs", 3)),
        "fail": float(get("health.fail", 0.5)),
        "warn": float(get("health.warn", 0.2)),
    }


def candidate_base(
    conn: sqlite3.Connection, sid: int, status: str, content_hash: str, files_hash: str
) -> int:
    """The version a new version of skill `sid` must prove itself against — its served
    version — or 0 when the new version is served at once (see the module docstring)."""
    if status != "stable":
        return 0
    row = conn.execute(
        "SELECT s.served_version, v.content_hash, v.files_hash FROM skills s"
        " JOIN skill_versions v ON v.skill_id = s.skill_id AND v.version_no = s.served_version"
        " WHERE s.skill_id=?",
        (sid,),
    ).fetchone()
    if row is None:
        return 0
    served, served_content, served_files = int(row[0]), str(row[1]), str(row[2])
    if (content_hash, files_hash) == (served_content, served_files):
        return 0  # back to what is served: nothing new to prove
    written = conn.execute(
        "SELECT 1 FROM librarian_writes WHERE skill_id=? AND content_hash=? AND files_hash=?",
        (sid, content_hash, files_hash),
    ).fetchone()
    return 0 if written else served


def _runs(conn: sqlite3.Connection, sid: int, version: int) -> tuple[int, int, int]:
    """(runs, failures, successes in a row at the end) of one version, in the order run."""
    rows = conn.execute(
        "SELECT success FROM outcomes WHERE skill_id=? AND version_no=? ORDER BY ts, seq",
        (sid, version),
    ).fetchall()
    streak = 0
    for (success,) in rows:
        streak = streak + 1 if success else 0
    return len(rows), sum(1 for (s,) in rows if not s), streak


def _verdict(runs: int, failures: int, s: dict[str, float]) -> str:
    if runs == 0:
        return "IDLE"
    if runs < s["min_runs"]:
        return "HEALTHY"
    rate = failures / runs
    if rate > s["fail"]:
        return "DRIFTING"
    return "DEGRADING" if rate > s["warn"] else "HEALTHY"


def _all_runs(conn: sqlite3.Connection, where: str) -> dict[tuple[int, int], tuple[int, int, int]]:
    """`_runs` of every candidate the `where` clause (on `c`) picks, in one ordered scan:
    per-candidate queries would each scan the outcomes while a bulk load has dropped their
    indexes (the lifecycle bench)."""
    found: dict[tuple[int, int], list[int]] = {}
    for sid, version, success in conn.execute(
        "SELECT o.skill_id, o.version_no, o.success FROM skill_candidates c"
        " JOIN outcomes o ON o.skill_id = c.skill_id AND o.version_no = c.version_no"
        f" WHERE {where} ORDER BY o.skill_id, o.version_no, o.ts, o.seq"
    ):
        tally = found.setdefault((int(sid), int(version)), [0, 0, 0])
        tally[0] += 1
        tally[1] += 0 if success else 1
        tally[2] = tally[2] + 1 if success else 0
    return {key: (t[0], t[1], t[2]) for key, t in found.items()}


def _candidate(
    conn: sqlite3.Connection,
    row: Any,
    s: dict[str, float],
    known: dict[tuple[int, int], tuple[int, int, int]] | None = None,
) -> CandidateVersion:
    sid, name, version, base, status, opened, decided, reason, alert = row
    if known is None:
        runs, failures, streak = _runs(conn, int(sid), int(version))
    else:
        runs, failures, streak = known.get((int(sid), int(version)), (0, 0, 0))
    waiting = ""
    if status == "candidate" and streak >= s["promote_after"]:
        waiting = _blocked(conn, int(sid), int(version))
    return CandidateVersion(
        skill_id=int(sid),
        name=str(name),
        version_no=int(version),
        base_version=int(base),
        status=str(status),
        opened_at=str(opened),
        decided_at=str(decided),
        reason=str(reason),
        alert=str(alert),
        runs=runs,
        failures=failures,
        streak=streak,
        needed=int(s["promote_after"]),
        verdict=_verdict(runs, failures, s),
        waiting=waiting,
    )


def _blocked(conn: sqlite3.Connection, sid: int, version: int) -> str:
    """Why a proven candidate still cannot take over ("" when it can)."""
    status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()
    if status is None or status[0] in ("retired", "uninstalled"):
        return f"the skill is {status[0] if status else 'gone'}"
    if status[0] != "stable":
        return ""
    unproven = unproven_requirements(conn, sid)
    if unproven:
        first = unproven[0]
        return (
            f"v{version} {first.relation} {first.target}, which is {first.target_status}:"
            " a stable skill cannot depend on a proposed one"
        )
    return ""


def of_skill(conn: sqlite3.Connection, sid: int, config: Config) -> list[CandidateVersion]:
    """A skill's candidates, newest first."""
    s = settings(config)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_candidates c JOIN skills s USING(skill_id)"
        " WHERE c.skill_id=? ORDER BY c.version_no DESC",
        (sid,),
    ).fetchall()
    return [_candidate(conn, r, s) for r in rows]


def open_candidates(conn: sqlite3.Connection, config: Config) -> dict[int, CandidateVersion]:
    """Every open candidate, by skill id."""
    s = settings(config)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_candidates c JOIN skills s USING(skill_id)"
        " WHERE c.status='candidate' ORDER BY c.skill_id"
    ).fetchall()
    known = _all_runs(conn, "c.status = 'candidate'")
    return {int(r[0]): _candidate(conn, r, s, known) for r in rows}


def latest(conn: sqlite3.Connection, config: Config) -> dict[int, CandidateVersion]:
    """Each skill's most recent candidate (open or decided), by skill id."""
    s = settings(config)
    latest_only = (
        "c.version_no = (SELECT max(version_no) FROM skill_candidates x"
        " WHERE x.skill_id = c.skill_id)"
    )
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_candidates c JOIN skills s USING(skill_id)"
        f" WHERE {latest_only} ORDER BY c.skill_id"
    ).fetchall()
    known = _all_runs(conn, latest_only)
    return {int(r[0]): _candidate(conn, r, s, known) for r in rows}


def decision(candidate: CandidateVersion, s: dict[str, float]) -> tuple[str, str]:
    """(event type, reason) a candidate's runs call for now, or ("", "")."""
    if not candidate.open:
        return "", ""
    if candidate.verdict == "DRIFTING":
        return EventType.SKILL_CANDIDATE_SET_ASIDE, (
            f"drifting: {candidate.failures} of {candidate.runs} runs of"
            f" v{candidate.version_no} failed ({candidate.failures / candidate.runs:.0%}"
            f" > {s['fail']:.0%}); v{candidate.base_version} stays served"
        )
    if candidate.streak >= s["promote_after"] and not candidate.waiting:
        return EventType.SKILL_CANDIDATE_PROMOTED, (
            f"{candidate.streak} clean runs of v{candidate.version_no} in a row"
            f" ({candidate.runs} runs, {candidate.failures} failed)"
        )
    return "", ""


def settle(conn: sqlite3.Connection, append: Append, config: Config, sid: int) -> Event | None:
    """Decide skill `sid`'s open candidate if its runs call for it (inside the caller's write
    transaction, e.g. the one recording an outcome); returns the event appended, if any."""
    s = settings(config)
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM skill_candidates c JOIN skills s USING(skill_id)"
        " WHERE c.skill_id=? AND c.status='candidate'",
        (sid,),
    ).fetchone()
    if row is None:
        return None
    candidate = _candidate(conn, row, s)
    status = conn.execute("SELECT status FROM skills WHERE skill_id=?", (sid,)).fetchone()
    if status is None or status[0] in ("retired", "uninstalled"):
        return None  # its record stays; nothing is served any more
    return decide(conn, append, candidate, s)


def decide(
    conn: sqlite3.Connection, append: Append, candidate: CandidateVersion, s: dict[str, float]
) -> Event | None:
    """Append the event a candidate's runs call for (none when they call for nothing)."""
    kind, reason = decision(candidate, s)
    if not kind:
        return None
    payload: dict[str, Any] = {
        "skill_id": candidate.skill_id,
        "version_no": candidate.version_no,
        "base_version": candidate.base_version,
        "reason": reason,
        "runs": candidate.runs,
        "failures": candidate.failures,
    }
    if kind == EventType.SKILL_CANDIDATE_SET_ASIDE:
        payload["alert"] = "drifting"
    return append(conn, kind, f"skill:{candidate.name}", payload)
