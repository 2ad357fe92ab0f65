"""Regression cases: what a skill must not break, from the dead ends behind it.

A draft carries a case for each dead end its pattern records — a DEAD_END among its members,
one joined to a member by an edge, or (for a pattern with neither) an approved dead end of a
member's session about the same thing — as the situation, the wrong move and the expected
right move:

- situation: the pattern's trigger, unless that is the dead end itself; else the first
  member that is not a dead end or solution (what was observed), else the title;
- wrong move: the dead end's summary;
- expected: the solution a `resolved` edge points at, else the next approved solution of the
  session, else the pattern's resolution or first step, else its title.

The cases are shown in the draft, written into the skill as `references/regression-cases.md`
(a checklist) when the draft is approved, listed by the runbook's step 5 for a repair, and
step 7 appends the incident's case to the skill that carries on.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from store.models import Pattern
from store.models.governance import RegressionCase
from store.patterns.classify import strip_label
from store.text import one_line

#: Where a skill keeps its regression cases.
REFERENCE = "references/regression-cases.md"
MAX_CASES = 8
_WORDS = re.compile(r"[a-z][a-z0-9_]{3,}")
_STOP = frozenset(
    "that this with from into when then than have were been they them what which while"
    " there their about after before again same just only also does done didn".split()
)
_ITEM = re.compile(r"^\s*[-*] \[[ xX]\] (?P<text>.+)$")


def _clean(text: str) -> str:
    text = strip_label(one_line(text.strip(), 300)).rstrip(".")
    return text.replace("<", "‹").replace(">", "›")


def _words(text: str) -> set[str]:
    """Content words by their first four letters ("pool" and "pooled" are one)."""
    return {w[:4] for w in _WORDS.findall(text.lower()) if w not in _STOP}


def cases_for(conn: sqlite3.Connection, pattern: Pattern) -> list[RegressionCase]:
    """The pattern's regression cases (at most `MAX_CASES`), in a stable order."""
    members = conn.execute(
        "SELECT n.node_id, n.session_id, n.type, n.summary, n.line_start FROM pattern_members m"
        " JOIN nodes n USING(node_id) WHERE m.pattern_id=? ORDER BY n.session_id, n.line_start,"
        " n.node_id",
        (pattern.pattern_id,),
    ).fetchall()
    member_ids = {str(r[0]) for r in members}
    dead = [r for r in members if r[2] == "DEAD_END"]
    dead += _linked_dead_ends(conn, member_ids, {str(r[0]) for r in dead})
    if not dead:
        dead = _related_dead_ends(conn, pattern, members)
    situations = _situations(pattern, members)
    cases: list[RegressionCase] = []
    seen: set[str] = set()
    for node_id, session_id, _type, summary, line in dead:
        wrong = _clean(str(summary))
        if wrong.lower() in seen:
            continue
        seen.add(wrong.lower())
        where = next((s for s in situations if s.lower() != wrong.lower()), situations[-1])
        cases.append(
            RegressionCase(
                situation=where,
                wrong=wrong,
                expected=_expected(conn, pattern, str(node_id), str(session_id), int(line)),
                source=f"node {node_id}",
            )
        )
    return cases[:MAX_CASES]


def _situations(pattern: Pattern, members: Sequence[sqlite3.Row]) -> list[str]:
    """What a case's situation may be, best first: the trigger, what was observed (the
    first member that is neither a dead end nor a solution), the title, the summary."""
    found = [_clean(pattern.trigger)] if pattern.trigger else []
    found += [_clean(str(r[3])) for r in members if r[2] not in ("DEAD_END", "SOLUTION")][:1]
    found += [_clean(pattern.title), _clean(pattern.summary) or "the same symptom recurs"]
    return [f for f in found if f]


def _linked_dead_ends(
    conn: sqlite3.Connection, members: set[str], already: set[str]
) -> list[sqlite3.Row]:
    """Approved dead ends joined to a member by an edge (resolved, triggered_pivot)."""
    if not members:
        return []
    marks = ",".join("?" * len(members))
    rows = conn.execute(
        "SELECT DISTINCT n.node_id, n.session_id, n.type, n.summary, n.line_start FROM edges e"
        " JOIN nodes n ON n.node_id = e.source_id WHERE n.type='DEAD_END'"
        f" AND n.status='approved' AND e.target_id IN ({marks})"
        " ORDER BY n.session_id, n.line_start, n.node_id",
        sorted(members),
    ).fetchall()
    return [r for r in rows if str(r[0]) not in already]


def _related_dead_ends(
    conn: sqlite3.Connection, pattern: Pattern, members: Sequence[sqlite3.Row]
) -> list[sqlite3.Row]:
    """Approved dead ends of the members' sessions that share a content word with the
    pattern (a pattern with no dead end of its own, such as an insight)."""
    sessions = sorted({str(r[1]) for r in members})
    if not sessions:
        return []
    about = _words(f"{pattern.title} {pattern.summary}")
    marks = ",".join("?" * len(sessions))
    rows = conn.execute(
        "SELECT node_id, session_id, type, summary, line_start FROM nodes"
        f" WHERE type='DEAD_END' AND status='approved' AND session_id IN ({marks})"
        " ORDER BY session_id, line_start, node_id",
        sessions,
    ).fetchall()
    return [r for r in rows if _words(str(r[3])) & about]


def _expected(
    conn: sqlite3.Connection, pattern: Pattern, node_id: str, session_id: str, line: int
) -> str:
    row = conn.execute(
        "SELECT n.summary FROM edges e JOIN nodes n ON n.node_id = e.target_id"
        " WHERE e.source_id=? AND e.type='resolved' AND n.status != 'forgotten'"
        " ORDER BY n.line_start, n.node_id LIMIT 1",
        (node_id,),
    ).fetchone()
    if row is None:
        row = conn.execute(
            "SELECT summary FROM nodes WHERE session_id=? AND type='SOLUTION'"
            " AND status='approved' AND line_start > ? ORDER BY line_start, node_id LIMIT 1",
            (session_id, line),
        ).fetchone()
    if row is not None:
        return _clean(str(row[0]))
    if pattern.resolution:
        return _clean(pattern.resolution)
    if pattern.steps:
        return _clean(pattern.steps[0].text)
    finding = conn.execute(  # an insight: what was learned is the right move's reason
        "SELECT n.summary FROM pattern_members m JOIN nodes n USING(node_id)"
        " WHERE m.pattern_id=? AND n.type NOT IN ('DEAD_END', 'SOLUTION')"
        " ORDER BY n.confidence DESC, n.node_id LIMIT 1",
        (pattern.pattern_id,),
    ).fetchone()
    text = _clean(str(finding[0])) if finding else _clean(pattern.title)
    return "check whether " + (text[:1].lower() + text[1:] if text[1:2].islower() else text)


# -- the checklist in a skill folder ---------------------------------------------------------


def checklist(name: str, cases: Iterable[RegressionCase]) -> str:
    """`references/regression-cases.md` for a skill."""
    lines = [
        f"# Regression cases: {one_line(name, 64)}",
        "",
        "Situations this skill must keep handling. Check each one before changing the skill;",
        "a repair that breaks one is not a repair.",
        "",
    ]
    lines += [item(c) for c in cases]
    return "\n".join(lines) + "\n"


def item(case: RegressionCase) -> str:
    """One checklist line."""
    source = f" ({case.source})" if case.source else ""
    return f"- [ ] {case.line()}{source}"


def read_checklist(folder: Path, limit: int = 100) -> list[str]:
    """The cases a skill folder's checklist lists (its lines, as written); [] without one.
    Read as text, bounded, never executed."""
    path = folder / REFERENCE
    try:
        if not path.is_file() or path.stat().st_size > 256 * 1024:
            return []
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = [m["text"].strip() for line in text.splitlines() if (m := _ITEM.match(line))]
    return [one_line(f, 600) for f in found[:limit]]


def body_section(cases: Sequence[RegressionCase]) -> list[str]:
    """The draft body's "Regression cases" section (empty without cases)."""
    if not cases:
        return []
    lines = [
        "## Regression cases",
        "",
        f"Cases this skill must keep handling (the checklist is in `{REFERENCE}`):",
        "",
    ]
    for number, case in enumerate(cases, start=1):
        lines += [
            f"{number}. Situation: {case.situation}.",
            f"   Wrong move: {case.wrong}.",
            f"   Right move: {case.expected}.",
        ]
    return [*lines, ""]
