"""Graduation: patterns that recurred, were retrieved in real work and were ratified by people
become SKILL.md drafts in the review queue; an approved draft is written into the skills root
and installed as `proposed` (DESIGN §7).

Criteria (thresholds in config `[graduation]`):
- bar: the pattern passes its kind's bar (`store.patterns.bar`): a pattern that is never
  served is never a candidate either;
- sessions: distinct sessions among the members, at most one confirmation per session:
  ≥ `min_sessions_project` (PROJECT) or ≥ `min_sessions_team` (TEAM);
- retrieval: retrievals that returned the pattern (or one of its nodes) in the top k, divided
  by the sessions of its project (all projects for TEAM) since the pattern first appeared:
  ≥ `min_retrieval_rate`;
- ratified: every member was approved by a reviewer (the human gate of the review queue);
- confidence: not decayed below `patterns.min_confidence`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.errors import LibrarianError
from store.ingest.redact import redact
from store.models import Citation, Criterion, Draft, GraduationCheck, ParsedSkill, Pattern, Step
from store.models.governance import RegressionCase, Replacement, RetrievalCount
from store.patterns import skillmd
from store.patterns.classify import short_paths, strip_label
from store.patterns.literals import Known, Parameterizer, parameterize
from store.patterns.memory import get_pattern, list_patterns
from store.patterns.naming import skill_name
from store.patterns.regressions import REFERENCE, cases_for, checklist
from store.patterns.retrieval_origin import agent_tools
from store.patterns.retrieval_origin import judge as origin
from store.projections import blob_text, store_blob
from store.skills.lint import lint_text
from store.skills.parser import is_valid_skill_name, parse_skill_md
from store.skills.scan import scan_root
from store.skills.writeback import write_atomic
from store.text import one_line

if TYPE_CHECKING:
    import sqlite3

    from store.kernel import Kernel


class GraduationError(LibrarianError):
    """A draft that cannot be created, approved or rejected."""


def _settings(library: Kernel) -> dict[str, float]:
    get = library.config.get
    return {
        "project": float(get("graduation.min_sessions_project", 3)),
        "team": float(get("graduation.min_sessions_team", 2)),
        "rate": float(get("graduation.min_retrieval_rate", 0.3)),
        "top_k": float(get("graduation.top_k", 5)),
        "floor": float(get("patterns.min_confidence", 0.4)),
    }


def check(library: Kernel, pattern: Pattern, conn: sqlite3.Connection) -> GraduationCheck:
    s = _settings(library)
    members = conn.execute(
        "SELECT n.node_id, n.session_id, n.status, n.decided_by FROM pattern_members m"
        " JOIN nodes n USING(node_id) WHERE m.pattern_id=?",
        (pattern.pattern_id,),
    ).fetchall()
    sessions = {r[1] for r in members}
    need = s["team"] if pattern.scope == "TEAM" else s["project"]
    criteria = [
        Criterion(
            "bar",
            pattern.served,
            1.0 if pattern.served else 0.0,
            1.0,
            f"passes the {pattern.kind} bar ({BAR.get(pattern.kind, 'its requirement')})"
            if pattern.served
            else pattern.flaw,
        ),
        Criterion(
            "sessions",
            len(sessions) >= need,
            len(sessions),
            need,
            f"{len(sessions)} distinct session{'s' if len(sessions) != 1 else ''}"
            f" ({len(members)} confirmations, one counted per session); needs {need:g}"
            f" ({pattern.scope})",
        ),
    ]
    node_ids = [r[0] for r in members]
    found = retrievals_of(conn, pattern.pattern_id, node_ids, int(s["top_k"]))
    counted = [judge(r, agent_tools(library.config)) for r in found]
    hits = sum(r.calls for r in counted if r.counted)
    left_out = sum(r.calls for r in counted if not r.counted)
    since = _sessions_since(conn, pattern)
    rate = hits / since if since else 0.0
    criteria.append(
        Criterion(
            "retrieval",
            rate >= s["rate"] and hits > 0,
            round(rate, 3),
            s["rate"],
            f"{hits} agent retrieval{'s' if hits != 1 else ''} in the top {int(s['top_k'])}"
            f" over {since} session{'s' if since != 1 else ''} since it appeared = {rate:.2f};"
            f" needs {s['rate']:.2f}"
            + (f" ({left_out} not counted: not an agent's request)" if left_out else ""),
        )
    )
    approved = [r for r in members if r[2] == "approved" and r[3]]
    reviewers = {r[3] for r in approved}
    criteria.append(
        Criterion(
            "ratified",
            bool(members) and len(approved) == len(members),
            len(approved),
            len(members),
            f"{len(approved)} of {len(members)} members approved by"
            f" {len(reviewers)} reviewer{'s' if len(reviewers) != 1 else ''}",
        )
    )
    criteria.append(
        Criterion(
            "confidence",
            pattern.confidence >= s["floor"],
            pattern.confidence,
            s["floor"],
            f"confidence {pattern.confidence:.2f} (base {pattern.base_confidence:.2f});"
            f" needs {s['floor']:.2f}",
        )
    )
    draft = _latest_draft(conn, pattern.pattern_id)
    eligible = (
        all(c.met for c in criteria)
        and pattern.status == "active"
        and (draft is None or draft.status == "rejected")
    )
    revalidate = pattern.status == "graduated" and pattern.confidence < s["floor"]
    return GraduationCheck(pattern, tuple(criteria), eligible, draft, revalidate, tuple(counted))


#: What each kind's bar asks (`store.patterns.bar`), for the checklist.
BAR = {
    "pitfall": "a failing action and a resolution that differs from it",
    "strategy": "at least two concrete ordered steps",
    "insight": "a specific title that is a finding, not narration",
}


def retrievals_of(
    conn: sqlite3.Connection, pattern_id: str, node_ids: list[str], top_k: int
) -> list[RetrievalCount]:
    """Retrievals that returned the pattern or one of its nodes in the top k, each once
    however many of them it returned (at its best rank), with its rolled-up repeats
    (`calls`); oldest first. `counted` is filled in by `judge`."""
    best: dict[int, int] = {}
    rows = conn.execute(
        "SELECT seq, min(rank) FROM retrieval_hits WHERE kind='pattern' AND item_id=?"
        " AND rank<=? GROUP BY seq",
        (pattern_id, top_k),
    ).fetchall()
    best.update({int(seq): int(rank) for seq, rank in rows})
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for seq, rank in conn.execute(
            "SELECT seq, min(rank) FROM retrieval_hits WHERE kind='node'"
            f" AND item_id IN ({marks}) AND rank<=? GROUP BY seq",
            (*chunk, top_k),
        ):
            best[int(seq)] = min(best.get(int(seq), int(rank)), int(rank))
    found: list[RetrievalCount] = []
    seqs = sorted(best)
    for start in range(0, len(seqs), 500):
        chunk_seqs = seqs[start : start + 500]
        marks = ",".join("?" * len(chunk_seqs))
        for seq, ts, tool, query, calls in conn.execute(
            f"SELECT seq, ts, tool, query, calls FROM retrievals WHERE seq IN ({marks})"
            " ORDER BY seq",
            chunk_seqs,
        ):
            found.append(
                RetrievalCount(
                    int(seq), str(ts), str(tool), str(query), best[int(seq)], int(calls), False, ""
                )
            )
    return found


def judge(found: RetrievalCount, patterns: Sequence[str]) -> RetrievalCount:
    """The retrieval with `counted` and `why` set (`store.patterns.retrieval_origin`)."""
    counted, why = origin(found.tool, patterns)
    return dataclasses.replace(found, counted=counted, why=why)


def _sessions_since(conn: sqlite3.Connection, pattern: Pattern) -> int:
    if pattern.scope == "TEAM":
        row = conn.execute(
            "SELECT count(*) FROM sessions WHERE started_at >= ?", (pattern.first_seen,)
        ).fetchone()
    else:
        row = conn.execute(
            "SELECT count(*) FROM sessions WHERE project=? AND started_at >= ?",
            (pattern.project, pattern.first_seen),
        ).fetchone()
    return max(1, int(row[0]))


def checks(library: Kernel, *, include_all: bool = False) -> list[GraduationCheck]:
    """Every live pattern against the criteria, eligible first."""
    with library.db.read() as conn:
        patterns = list_patterns(conn, statuses=("active", "decayed", "graduated"))
        found = [check(library, p, conn) for p in patterns]
    if not include_all:
        found = [c for c in found if c.pattern.status != "decayed" or c.revalidate]
    found.sort(
        key=lambda c: (
            not c.eligible,
            -sum(x.met for x in c.criteria),
            -c.pattern.confidence,
            c.pattern.pattern_id,
        )
    )
    return found


# -- drafts ---------------------------------------------------------------------------------


def _draft_from_row(conn: sqlite3.Connection, r: Any) -> Draft:
    citations = tuple(Citation(**c) for c in json.loads(r[4] or "[]"))
    content = blob_text(conn, r[3])
    parameters = tuple(Replacement(**p) for p in json.loads(r[13] or "[]"))
    cases = [RegressionCase(**c) for c in json.loads(r[14] or "[]")]
    return Draft(
        draft_id=r[0],
        pattern_id=r[1],
        name=r[2],
        content=content,
        citations=citations,
        status=r[5],
        created_at=r[6],
        created_by=r[7],
        decided_at=r[8],
        decided_by=r[9],
        reason=r[10],
        path=r[11],
        literal=blob_text(conn, r[12]) if r[12] and r[12] != r[3] else content,
        parameters=parameters,
        regressions=_with_parameters(cases, parameters),
    )


_DRAFT_COLUMNS = (
    "draft_id, pattern_id, name, content_hash, citations, status, created_at, created_by,"
    " decided_at, decided_by, reason, path, literal_hash, parameters, regressions"
)


def _latest_draft(conn: sqlite3.Connection, pattern_id: str) -> Draft | None:
    row = conn.execute(
        f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE pattern_id=?"
        " ORDER BY created_at DESC, draft_id DESC LIMIT 1",
        (pattern_id,),
    ).fetchone()
    return _draft_from_row(conn, row) if row else None


def drafts(library: Kernel, status: str | None = None) -> list[Draft]:
    with library.db.read() as conn:
        where, params = ("WHERE status=?", (status,)) if status else ("", ())
        rows = conn.execute(
            f"SELECT {_DRAFT_COLUMNS} FROM drafts {where} ORDER BY created_at, draft_id", params
        ).fetchall()
        return [_draft_from_row(conn, r) for r in rows]


def get_draft(library: Kernel, draft_id: str) -> Draft:
    with library.db.read() as conn:
        row = conn.execute(
            f"SELECT {_DRAFT_COLUMNS} FROM drafts WHERE draft_id=?", (draft_id,)
        ).fetchone()
        if row is None:
            raise GraduationError(f"no draft {draft_id!r}")
        return _draft_from_row(conn, row)


@dataclasses.dataclass(frozen=True)
class Drafted:
    """A drafted SKILL.md through the write gate."""

    name: str
    text: str  # with its transient literals as parameters
    literal: str  # before
    citations: list[Citation]
    parameters: list[Replacement]
    regressions: list[RegressionCase]  # parameterized like the text


def build_draft(library: Kernel, pattern: Pattern, conn: sqlite3.Connection) -> Drafted:
    """A pattern's SKILL.md: drafted, its transient literals named as parameters, its
    regression cases included; validated and linted."""

    members = conn.execute(
        "SELECT n.node_id, n.session_id, n.summary, n.file, n.line_start, n.line_end,"
        " n.confidence FROM pattern_members m JOIN nodes n USING(node_id)"
        " WHERE m.pattern_id=? ORDER BY n.confidence DESC, n.node_id",
        (pattern.pattern_id,),
    ).fetchall()
    member_steps = [
        Step(one_line(short_paths(strip_label(r[2])), 200), r[0], r[1], r[3], int(r[4]), int(r[5]))
        for r in members
    ]
    taken = {r[0] for r in conn.execute("SELECT name FROM skills")}
    taken |= {r[0] for r in conn.execute("SELECT name FROM drafts WHERE status != 'rejected'")}
    name = skill_name(
        pattern.title,
        [s.text for s in member_steps],
        taken,
        "pattern-" + pattern.pattern_id[2:10],
    )
    steps = skillmd.draft_steps(pattern, member_steps)
    sessions = sorted({r[1] for r in members})
    nodes = sorted(r[0] for r in members)
    license_name = str(library.config.get("graduation.license", "Proprietary"))
    cases = cases_for(conn, pattern)
    literal, citations = skillmd.render(
        pattern, name, steps, sessions, nodes, license_name, regressions=cases
    )
    known = Known.from_projects(_projects(conn, sessions))
    text, parameters = parameterize(literal, known)
    check_written(text, name, pattern.pattern_id)
    return Drafted(name, text, literal, citations, parameters, cases)


def check_written(text: str, name: str, what: str) -> None:
    """Refuse a SKILL.md the librarian would write unless it parses, is spec-valid (only the
    spec keys, the folder's name, no warnings) and passes the security lint."""
    parsed = parse_skill_md(text.encode("utf-8"), name)
    if not isinstance(parsed, ParsedSkill) or not is_valid_skill_name(name):
        raise GraduationError(f"drafted SKILL.md for {what} does not parse")
    unknown = set(parsed.frontmatter) - set(skillmd.SPEC_KEYS)
    if unknown or parsed.name != name or parsed.warnings:
        raise GraduationError(f"drafted SKILL.md for {what} is not spec-valid")
    findings = [f for f in lint_text("SKILL.md", text) if f.severity in ("high", "medium")]
    if findings:
        raise GraduationError(
            f"drafted SKILL.md for {what} fails the security lint:"
            f" {findings[0].rule} ({findings[0].message})"
        )


def _projects(conn: sqlite3.Connection, sessions: list[str]) -> list[str]:
    if not sessions:
        return []
    marks = ",".join("?" * len(sessions))
    rows = conn.execute(
        f"SELECT DISTINCT project FROM sessions WHERE session_id IN ({marks})", sessions
    ).fetchall()
    return [str(r[0]) for r in rows]


def _with_parameters(
    cases: Sequence[RegressionCase], parameters: Sequence[Replacement]
) -> tuple[RegressionCase, ...]:
    """The cases as the draft shows them: its parameters in place of its literals, except
    the literals the reviewer kept."""
    finder = Parameterizer(keep=frozenset(r.literal for r in parameters if r.kept))
    for r in parameters:
        finder.found[r.literal] = (r.kind, r.parameter.strip("{}"))
    return tuple(
        dataclasses.replace(
            c,
            situation=finder.apply(c.situation),
            wrong=finder.apply(c.wrong),
            expected=finder.apply(c.expected),
        )
        for c in cases
    )


def create_draft(library: Kernel, pattern_id: str) -> Draft:
    """Draft a SKILL.md for a pattern that meets every graduation criterion into the review
    queue (there is no way around the criteria)."""
    with library.db.write() as conn:
        pattern = get_pattern(conn, pattern_id)
        if pattern is None:
            raise GraduationError(f"no pattern {pattern_id!r}")
        result = check(library, pattern, conn)
        if not result.eligible:
            unmet = [c.name for c in result.criteria if not c.met]
            why = f"criteria not met: {', '.join(unmet)}" if unmet else f"status {pattern.status}"
            if result.draft is not None and result.draft.status != "rejected":
                why = f"it already has a {result.draft.status} draft {result.draft.draft_id}"
            raise GraduationError(f"pattern {pattern_id} is not eligible ({why})")
        drafted = build_draft(library, pattern, conn)
        digest = store_blob(conn, drafted.text)
        draft_id = (
            "d_"
            + hashlib.sha256(f"{pattern_id}\0{digest}\0{library.clock()}".encode()).hexdigest()[:12]
        )
        library.append_event(
            conn,
            "pattern.drafted",
            f"pattern:{pattern_id}",
            {
                "draft_id": draft_id,
                "pattern_id": pattern_id,
                "name": drafted.name,
                "content_hash": digest,
                "literal_hash": store_blob(conn, drafted.literal),
                "parameters": [dataclasses.asdict(r) for r in drafted.parameters],
                "regressions": [dataclasses.asdict(c) for c in drafted.regressions],
                "citations": [c.__dict__ for c in drafted.citations],
            },
        )
    return get_draft(library, draft_id)


def keep_literal(library: Kernel, draft_id: str, literal: str, *, keep: bool = True) -> Draft:
    """Keep one of a pending draft's literals on purpose (or replace it again): the draft is
    written again from its literal text, a `pattern.draft_revised` event. `literal` may also
    be the parameter's name (`{host}` or `host`)."""
    draft = get_draft(library, draft_id)
    if draft.status != "pending":
        raise GraduationError(f"draft {draft_id} is already {draft.status}")
    wanted = literal.strip()
    match = [
        r for r in draft.parameters if wanted in (r.literal, r.parameter, r.parameter.strip("{}"))
    ]
    if not match:
        known = ", ".join(f"{r.parameter}={r.literal}" for r in draft.parameters) or "none"
        raise GraduationError(f"draft {draft_id} has no literal {wanted!r} (found: {known})")
    chosen = {r.literal for r in match}
    kept = {r.literal for r in draft.parameters if r.kept}
    kept = (kept | chosen) if keep else (kept - chosen)
    with library.db.write() as conn:
        sessions = sorted({c.session_id for c in draft.citations})
        text, parameters = parameterize(
            draft.literal, Known.from_projects(_projects(conn, sessions)), kept, draft.parameters
        )
        check_written(text, draft.name, draft_id)
        library.append_event(
            conn,
            "pattern.draft_revised",
            f"pattern:{draft.pattern_id}",
            {
                "draft_id": draft_id,
                "content_hash": store_blob(conn, text),
                "parameters": [dataclasses.asdict(r) for r in parameters],
                "kept": sorted(kept),
                "changed": sorted(chosen),
                "action": "kept" if keep else "replaced",
            },
        )
    return get_draft(library, draft_id)


def graduate(
    library: Kernel, *, dry_run: bool = False
) -> tuple[list[GraduationCheck], list[Draft]]:
    """Check every pattern; draft the eligible ones (unless a dry run)."""
    found = checks(library)
    made: list[Draft] = []
    if not dry_run:
        for c in found:
            if c.eligible:
                made.append(create_draft(library, c.pattern.pattern_id))
    return found, made


def skills_root(library: Kernel) -> Path:
    configured = str(library.config.get("graduation.skills_root", "") or "")
    return Path(configured).expanduser() if configured else Path.home() / ".claude" / "skills"


def approve_draft(library: Kernel, draft_id: str, root: Path | None = None) -> Draft:
    """Write the SKILL.md (with who approved it in its metadata) and its regression
    checklist atomically into the skills root, install it as `proposed`."""
    draft = get_draft(library, draft_id)
    if draft.status != "pending":
        raise GraduationError(f"draft {draft_id} is already {draft.status}")
    base = root or skills_root(library)
    folder = base / draft.name
    target = folder / "SKILL.md"
    content = approved_text(draft, library.actor)
    check_written(content, draft.name, draft_id)
    if target.exists():
        try:
            same = target.read_text(encoding="utf-8") in (content, draft.content)
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise GraduationError(f"{target} already exists with other content")
    else:
        write_atomic(target, content)
    if draft.regressions and not (folder / REFERENCE).exists():
        write_atomic(folder / REFERENCE, checklist(draft.name, draft.regressions))
    scan_root(library, base)  # a configured root keeps its scope and precedence
    with library.db.write() as conn:
        row = conn.execute(
            "SELECT skill_id FROM skills WHERE fs_path IN (?, ?)",
            (str(target), os.path.realpath(target)),
        ).fetchone()
        if row is None:
            row = conn.execute(
                "SELECT skill_id FROM skills WHERE name=? ORDER BY skill_id DESC", (draft.name,)
            ).fetchone()
        if row is None:
            raise GraduationError(f"{target} was written but did not load as a skill")
        library.append_event(
            conn,
            "pattern.graduated",
            f"pattern:{draft.pattern_id}",
            {
                "draft_id": draft_id,
                "pattern_id": draft.pattern_id,
                "skill_name": draft.name,
                "skill_id": int(row[0]),
                "path": str(target),
                "regressions": len(draft.regressions),
            },
        )
        library.append_event(
            conn,
            "skill.proposed",
            f"skill:{draft.name}",
            {
                "skill_id": int(row[0]),
                "reason": f"graduated from pattern {draft.pattern_id} (draft {draft_id})",
            },
        )
    return get_draft(library, draft_id)


def approved_text(draft: Draft, actor: str) -> str:
    """The draft with who approved it as `librarian-approved-by` in its metadata."""
    head, sep, rest = draft.content.partition("\n---\n")
    if not sep or "\nmetadata:\n" not in head or "librarian-approved-by" in head:
        return draft.content
    who = one_line(actor, 200).replace("<", "‹").replace(">", "›")
    line = f"  librarian-approved-by: {json.dumps(who, ensure_ascii=False)}"
    return f"{head}\n{line}{sep}{rest}"


def reject_draft(library: Kernel, draft_id: str, reason: str) -> Draft:
    draft = get_draft(library, draft_id)
    if draft.status != "pending":
        raise GraduationError(f"draft {draft_id} is already {draft.status}")
    if not reason.strip():
        raise GraduationError("a rejection needs a reason")
    with library.db.write() as conn:
        library.append_event(
            conn,
            "pattern.draft_rejected",
            f"pattern:{draft.pattern_id}",
            {
                "draft_id": draft_id,
                "pattern_id": draft.pattern_id,
                "reason": redact(reason.strip()),
            },
        )
    return get_draft(library, draft_id)
