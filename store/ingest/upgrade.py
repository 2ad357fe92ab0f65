"""The cold tier over sessions the library already holds (issue 11; seed paper §4.3).

`ingest --llm` runs the warm tier as always, then this over every session under the paths,
changed or not: the LLM reads it unless this model and prompt version already read this
content (`cold_extractions`, one row per session; `again` reads it anyway). A session whose
windows failed last time is read again. Cold nodes meet the same knowledge bar as warm ones
(`store.ingest.bar.judge`, and the model's own confidence) and the same dedup.

A cold node that passes the bar *covers* a warm node of its session when both come from the
same file, their line ranges overlap (ends included) and the types are compatible
(`SUPERSEDES`). What becomes of a covered warm node depends on who has touched it:

- pending or suppressed, and no reviewer ever acted on it (no audit row): superseded. A
  `node.superseded` event names both nodes and the reason; the warm node stays (status
  `superseded`, `superseded_by` its successor), out of the queue. Nothing is deleted.
- decided or touched by a reviewer (approved, rejected, edited, re-scoped, unsuppressed,
  reopened): never changed. The cold node is recorded as a duplicate `merged` into it, on
  record for lineage and never in the queue: a person's decision outranks the model's.
- forgotten: the cold node is not added (it would bring forgotten content back).

Planning is free: `plan` parses the files and counts tokens locally, so the CLI can show the
cost, and ask, before one request is sent. The API calls run without the session's lock (the
hook worker must not wait on the network); recording takes it. Transcripts only grow, so
evidence read a moment ago stays true.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.files import regular_file_problem
from store.ingest import bar
from store.ingest.cold import (
    PROMPT_VERSION,
    ColdResult,
    ColdSettings,
    cold_settings,
    configured_model,
    estimate_session,
    extract_cold,
    render_message,
)
from store.ingest.pipeline import (
    Progress,
    _attach_edges,
    _candidate,
    _dedup,
    _withheld,
    append_nodes,
    main_files,
    session_lock,
    with_other_sources,
)
from store.ingest.transcript import parse_session
from store.models import (
    ExtractedNode,
    ParsedSession,
    ParseFailure,
    PlannedSession,
    UpgradePlan,
    UpgradeReport,
)

if TYPE_CHECKING:
    from store.ingest.cold import LlmClient
    from store.kernel import Kernel

#: Cold node type -> the warm node types it may supersede. Same type, except that a finding
#: settles the guess made at the same place (a confirmed hypothesis reads as a discovery).
SUPERSEDES: dict[str, frozenset[str]] = {
    "HYPOTHESIS": frozenset({"HYPOTHESIS"}),
    "INVESTIGATION": frozenset({"INVESTIGATION"}),
    "DISCOVERY": frozenset({"DISCOVERY", "HYPOTHESIS"}),
    "PIVOT": frozenset({"PIVOT"}),
    "DEAD_END": frozenset({"DEAD_END"}),
    "SOLUTION": frozenset({"SOLUTION"}),
    "CONTEXT_LOAD": frozenset({"CONTEXT_LOAD"}),
}
#: The prompt asks for a confidence of at most 0.2 when nothing in a window clears the bar
#: (the tool needs one node): below this, the model itself says the node is not worth it.
MIN_COLD_CONFIDENCE = 0.3


def transcript_digest(session: ParsedSession) -> str:
    """What the cold tier reads of a session, as one hash: the rendered messages and where
    each comes from. Equal digests mean equal windows."""
    digest = hashlib.sha256()
    for m in session.messages:
        digest.update(f"{m.file}:{m.line_start}-{m.line_end}\n".encode())
        digest.update(render_message(m).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def model_name(llm: LlmClient) -> str:
    """The model a client calls, as recorded per extraction (a fake may not say)."""
    return str(getattr(llm, "model", "") or type(llm).__name__)


# -- planning --------------------------------------------------------------------------------


def plan(
    library: Kernel,
    paths: Sequence[Path] | None = None,
    *,
    again: bool = False,
    model: str = "",
    context_tokens: int = 0,
) -> UpgradePlan:
    """What `upgrade` would send, by the local token count: no network, no writes. `model`
    and `context_tokens` default to the configured ones."""
    configured, window = configured_model(library.config)
    model, context_tokens = model or configured, context_tokens or window
    settings = cold_settings(library.config)
    planned: list[PlannedSession] = []
    problems: list[str] = []
    already = 0
    seen: set[str] = set()
    for main_file in main_files(paths):
        parsed = _read(library, main_file)
        if parsed is None or parsed.session_id in seen:
            continue
        seen.add(parsed.session_id)
        why = _reason(library, parsed, model, again)
        if not why:
            already += 1
            continue
        try:
            estimate = estimate_session(parsed, context_tokens, **settings)
        except ValueError as exc:
            problems.append(f"{parsed.session_id}: cold tier skipped: {exc}")
            continue
        if estimate.windows:
            planned.append(
                PlannedSession(
                    parsed.session_id,
                    str(main_file),
                    estimate.windows,
                    estimate.input_tokens,
                    why,
                )
            )
    return UpgradePlan(
        model, PROMPT_VERSION, tuple(planned), already, settings["output_tokens"], tuple(problems)
    )


def _read(library: Kernel, main_file: Path) -> ParsedSession | None:
    """The whole session a main file belongs to; None when it cannot be read (the warm tier
    reports why)."""
    main_file = Path(os.path.abspath(main_file))
    if regular_file_problem(main_file):
        return None
    parsed = parse_session(main_file)
    if isinstance(parsed, ParseFailure):
        return None
    return with_other_sources(library, parsed, main_file)


def _reason(library: Kernel, parsed: ParsedSession, model: str, again: bool) -> str:
    """Why the session is to be read ("" when this model and prompt already read it)."""
    if again:
        return "again"
    with library.db.read() as conn:
        row = conn.execute(
            "SELECT digest, model, prompt_version, failed_windows FROM cold_extractions"
            " WHERE session_id=?",
            (parsed.session_id,),
        ).fetchone()
    if row is None:
        return "new"
    if row[0] != transcript_digest(parsed):
        return "changed"
    if (row[1], row[2]) != (model, PROMPT_VERSION):
        return "prompt"
    return "failed" if row[3] else ""


# -- reading sessions with the LLM -----------------------------------------------------------


@dataclass
class _Totals:
    sessions: int = 0
    already: int = 0
    calls: int = 0
    added: int = 0
    superseded: int = 0
    merged: int = 0
    suppressed: int = 0
    dropped: int = 0
    withheld: int = 0
    problems: list[str] = field(default_factory=list)


def upgrade(
    library: Kernel,
    paths: Sequence[Path] | None,
    llm: LlmClient,
    *,
    again: bool = False,
    progress: Progress | None = None,
) -> UpgradeReport:
    """Read the sessions under `paths` with the LLM (see the module docstring). API failures
    become problems; a fatal one (bad key, bad request) stops the run."""
    model = model_name(llm)
    settings = cold_settings(library.config)
    totals = _Totals()
    seen: set[str] = set()
    files = main_files(paths)
    for done, main_file in enumerate(files, start=1):
        parsed = _read(library, main_file)
        if parsed is not None and parsed.session_id not in seen:
            seen.add(parsed.session_id)
            if not _upgrade_session(library, parsed, llm, settings, again, totals):
                totals.problems.append(f"cold tier stopped after {done} of {len(files)} files")
                break
        if progress is not None:
            progress(done, len(files))
    return UpgradeReport(
        model=model,
        prompt_version=PROMPT_VERSION,
        sessions=totals.sessions,
        already=totals.already,
        calls=totals.calls,
        nodes_added=totals.added,
        superseded=totals.superseded,
        merged=totals.merged,
        suppressed=totals.suppressed,
        dropped=totals.dropped,
        withheld=totals.withheld,
        problems=tuple(totals.problems),
    )


def _upgrade_session(
    library: Kernel,
    parsed: ParsedSession,
    llm: LlmClient,
    settings: ColdSettings,
    again: bool,
    totals: _Totals,
) -> bool:
    """One session; False when the cold tier must stop."""
    sid = parsed.session_id
    with library.db.read() as conn:
        recorded = conn.execute("SELECT 1 FROM sessions WHERE session_id=?", (sid,)).fetchone()
    if recorded is None:
        totals.problems.append(f"{sid}: not in the library (the warm tier did not record it)")
        return True
    if not _reason(library, parsed, model_name(llm), again):
        totals.already += 1
        return True
    cold = extract_cold(parsed, llm, **settings)
    totals.problems += [f"{sid}: {p}" for p in cold.problems]
    totals.calls += cold.calls
    totals.dropped += cold.dropped
    if cold.windows and cold.failed < cold.windows:
        totals.sessions += 1
        with session_lock(library.paths.spool / "locks", "session\0" + sid):
            _record(library, parsed, cold, model_name(llm), totals)
    return not cold.stopped


# -- recording -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Warm:
    """A stored warm node of the session, as coverage sees it."""

    node_id: str
    type: str
    file: str
    line_start: int
    line_end: int
    status: str
    touched: bool  # a reviewer acted on it (any audit row)

    @property
    def state(self) -> str:
        """ "open" (the cold tier may supersede it), "reviewed", "forgotten" or "" (merged or
        superseded already: out of play)."""
        if self.status == "forgotten":
            return "forgotten"
        if self.touched or self.status in ("approved", "rejected"):
            return "reviewed"
        return "open" if self.status in ("pending", "suppressed") else ""


def covers(cold: dict[str, Any], warm: _Warm) -> bool:
    """Same file, overlapping lines (ends included), compatible type (`SUPERSEDES`)."""
    return (
        cold["file"] == warm.file
        and cold["line_start"] <= warm.line_end
        and warm.line_start <= cold["line_end"]
        and warm.type in SUPERSEDES.get(cold["type"], frozenset())
    )


def judged(node: ExtractedNode) -> ExtractedNode:
    """A cold node through the knowledge bar: its informativeness, and why it is kept out of
    the queue ("" when it passes)."""
    verdict = bar.judge(node.summary, said=True)
    reason = verdict.reason
    if not reason and node.confidence < MIN_COLD_CONFIDENCE:
        reason = f"the model rated it below the bar (confidence {node.confidence:.2f})"
    return replace(node, informativeness=verdict.informativeness, suppressed=reason)


@dataclass
class _Cover:
    """What one session's cold nodes do: which go through dedup, which go into a reviewed
    node, which warm nodes they supersede (with the reason), which are withheld."""

    fresh: list[dict[str, Any]] = field(default_factory=list)
    into_reviewed: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    supersede: dict[str, tuple[str, str]] = field(default_factory=dict)  # warm -> (cold, why)
    withheld: set[str] = field(default_factory=set)


def _record(
    library: Kernel, parsed: ParsedSession, cold: ColdResult, model: str, totals: _Totals
) -> None:
    sid = parsed.session_id
    candidates = [_candidate(library, parsed, judged(n)) for n in cold.nodes]
    with library.db.read() as conn:
        stored = _statuses(conn, [c["node_id"] for c in candidates])
        found = _cover(conn, sid, candidates, stored, model)
    decisions, problem = _dedup(library, parsed.project, found.fresh, exclude=set(found.supersede))
    if problem:
        totals.problems.append(f"{sid}: {problem}")
    decisions += [(c, into, "") for c, into in found.into_reviewed]
    winners = {c["node_id"]: into or c["node_id"] for c, into, _ in decisions}
    _attach_edges([c for c, _, _ in decisions], list(cold.edges), sid, winners, set(stored))
    with library.db.write() as conn:
        merged = append_nodes(library, conn, decisions)
        still_open = {w.node_id for w in _warm_nodes(conn, sid) if w.state == "open"}
        superseded = 0
        for warm_id, (by, why) in sorted(found.supersede.items()):
            if warm_id in still_open:  # a reviewer may have acted on it since we looked
                library.append_event(
                    conn,
                    "node.superseded",
                    f"node:{warm_id}",
                    {"node_id": warm_id, "by": by, "reason": why},
                )
                superseded += 1
        added = sum(1 for _, into, _ in decisions if not into)
        library.append_event(
            conn,
            "session.cold_extracted",
            f"session:{sid}",
            {
                "session_id": sid,
                "digest": transcript_digest(parsed),
                "model": model,
                "prompt_version": PROMPT_VERSION,
                "windows": cold.windows,
                "failed_windows": cold.failed,
                "nodes_added": added,
                "superseded": superseded,
                "merged": merged,
                "dropped": cold.dropped,
                "withheld": len(found.withheld),
            },
        )
    totals.added += added
    totals.superseded += superseded
    totals.merged += merged
    totals.suppressed += sum(1 for c, into, _ in decisions if not into and c["suppressed"])
    totals.withheld += len(found.withheld)


def _cover(
    conn: sqlite3.Connection,
    sid: str,
    candidates: list[dict[str, Any]],
    stored: dict[str, str],
    model: str,
) -> _Cover:
    """Apply the coverage rules (module docstring), most confident cold node first. A cold
    node already stored (`stored`: id -> status; a re-read) adds nothing, but while pending
    or approved it still supersedes open warm nodes it covers (new ones, from a transcript
    that grew)."""
    warm = _warm_nodes(conn, sid)
    new = [c for c in candidates if c["node_id"] not in stored]
    result = _Cover(withheld=_withheld(conn, sid, new))
    for c in sorted(candidates, key=lambda c: (-c["confidence"], c["key"])):
        cid = c["node_id"]
        if cid in result.withheld:
            continue
        live = stored[cid] in ("pending", "approved") if cid in stored else not c["suppressed"]
        covered = [w for w in warm if covers(c, w)] if live else []
        if cid not in stored:
            reviewed = [w for w in covered if w.state == "reviewed"]
            if any(w.state == "forgotten" for w in covered):
                result.withheld.add(cid)
                continue
            if reviewed:
                best = min(
                    reviewed, key=lambda w: (w.status != "approved", w.line_start, w.node_id)
                )
                result.into_reviewed.append((c, best.node_id))
            else:
                result.fresh.append(c)
        for w in covered:
            if w.state == "open" and w.node_id not in result.supersede:
                result.supersede[w.node_id] = (cid, _why(c, w, model))
    return result


def _why(cold: dict[str, Any], warm: _Warm, model: str) -> str:
    """The reason a `node.superseded` event gives (names no transcript text)."""
    return (
        f"the cold tier ({model}, prompt {PROMPT_VERSION}) restated this {warm.type} as a"
        f" {cold['type']} from lines {cold['line_start']}-{cold['line_end']} of {cold['file']}"
    )


def _statuses(conn: sqlite3.Connection, ids: list[str]) -> dict[str, str]:
    """The stored status of each of `ids` that is stored."""
    found: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            conn.execute(f"SELECT node_id, status FROM nodes WHERE node_id IN ({marks})", chunk)
        )
    return found


def _warm_nodes(conn: sqlite3.Connection, sid: str) -> list[_Warm]:
    rows = conn.execute(
        "SELECT n.node_id, n.type, n.file, n.line_start, n.line_end, n.status,"
        " EXISTS(SELECT 1 FROM audit a WHERE a.node_id = n.node_id)"
        " FROM nodes n WHERE n.session_id=? AND n.tier='warm' ORDER BY n.line_start, n.node_id",
        (sid,),
    ).fetchall()
    return [_Warm(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]
