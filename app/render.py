"""Plain-text and JSON views of store results for the CLI. Untrusted text is neutralised."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from store.models import (
    AuditEntry,
    Draft,
    Edge,
    GraduationCheck,
    MemoryHit,
    Node,
    Pattern,
    Retrieval,
    ScanReport,
    SessionSummary,
    SkillDetail,
    SkillSummary,
    Suggestion,
    UpgradePlan,
    UpgradeReport,
)
from store.text import neutralise, one_line
from store.verify import VerifyReport

if TYPE_CHECKING:
    from store.ingest.pipeline import IngestReport


def scan_json(report: ScanReport) -> dict[str, Any]:
    data = asdict(report)
    data["collisions"] = [
        {"name": n, "winner": p[0], "shadowed": list(p[1:])} for n, p in report.collisions
    ]
    return data


def scan_text(report: ScanReport) -> str:
    lines = [
        f"scanned {len(report.roots)} roots in {report.seconds:.2f}s: {report.seen} skills found,"
        f" {report.installed} installed, {report.changed} changed, {report.unchanged} unchanged,"
        f" {report.uninstalled} uninstalled, {len(report.skipped)} skipped,"
        f" {report.embedded} texts embedded",
    ]
    lines += [
        f"  skipped {one_line(s.path, 120)}: {s.code}: {one_line(s.reason, 160)}"
        for s in report.skipped
    ]
    for name, paths in report.collisions:
        lines.append(
            f"  collision {one_line(name, 64)}: using {one_line(paths[0], 120)};"
            f" shadowed {', '.join(one_line(p, 120) for p in paths[1:])}"
        )
    lines += [
        f"  dangling {one_line(r.source, 64)} {r.type} {one_line(r.target, 64)} (no such skill)"
        for r in report.dangling
    ]
    lines += [f"  cycle {' -> '.join(one_line(n, 64) for n in (*c, c[0]))}" for c in report.cycles]
    return "\n".join(lines)


def skills_text(rows: list[SkillSummary]) -> str:
    if not rows:
        return "no skills (run `librarian scan`)"
    width = min(max(len(r.name) for r in rows), 40)
    lines = []
    for r in rows:
        flags = f"{r.warning_count}w {r.finding_count}f" + (" shadowed" if r.shadowed else "")
        lines.append(
            f"{one_line(r.name, width):<{width}}  {one_line(r.status, 11):<11} v{r.version_no:<3}"
            f" {flags:<14} {one_line(r.description, 80)}"
        )
    return "\n".join(lines)


def detail_text(d: SkillDetail, body: bool = True) -> str:
    s = d.summary
    lines = [
        f"{one_line(s.name, 80)}  [{one_line(s.status, 20)}]  v{s.version_no}  id {s.skill_id}",
        f"  path: {one_line(s.fs_path, 200)}",
        f"  root: {one_line(s.root, 200)} ({s.scope})",
        f"  description: {one_line(d.manifest['description'], 2000)}",
    ]
    if s.shadowed:
        lines.append(f"  shadowed by: {one_line(d.shadowed_by, 200)}")
    lines += [f"  warning {w.code}: {one_line(w.message, 200)}" for w in d.warnings]
    lines += [
        f"  finding [{f.severity}] {f.rule} {one_line(f.file, 80)}:{f.line}:"
        f" {one_line(f.message, 160)}"
        for f in d.findings
    ]
    lines += [
        f"  {one_line(r.type, 32)} -> {one_line(r.target, 64)}"
        + (" (dangling)" if r.dangling else "")
        for r in d.relations
    ]
    lines += [f"  {one_line(r.source, 64)} {one_line(r.type, 32)} this skill" for r in d.dependents]
    lines += [
        f"  version {v.version_no}: {v.event} {one_line(v.created_at, 40)} {v.content_hash[:12]}"
        for v in d.versions
    ]
    if body:
        lines += ["", neutralise(d.body)]
    return "\n".join(lines)


def suggest_text(contexts: list[str], results: list[list[Suggestion]]) -> str:
    blocks = []
    for context, hits in zip(contexts, results, strict=True):
        lines = [f"> {one_line(context, 160)}"] if len(contexts) > 1 else []
        if not hits:
            lines.append("  (no matching skills)")
        for rank, h in enumerate(hits, start=1):
            terms = ", ".join(h.matched_terms[:8]) or "-"
            lines.append(
                f"{rank:>3}. {one_line(h.name, 48):<48} {h.score:.3f}"
                f"  lex {h.lexical:.2f} dense {h.dense:.2f} imp {h.importance:.2f}"
                f"  [{one_line(h.status, 20)}]  terms: {one_line(terms, 80)}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def verify_text(report: VerifyReport) -> str:
    lines = []
    for check in report.checks:
        lines.append(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
        lines += [f"       {one_line(p, 200)}" for p in check.problems]
    if report.head is not None:  # for comparing with a copy kept elsewhere
        lines.append(f"chain head: {report.head.events} events, last hash {report.head.hash}")
    lines.append("library is intact" if report.ok else "library has problems (see above)")
    return "\n".join(lines)


# -- sessions, nodes, review -----------------------------------------------------------------


def plain(value: Any) -> Any:
    """A dataclass as JSON-ready data."""
    return asdict(value)


def ingest_text(report: IngestReport) -> str:
    lines = [
        f"{report.files} session files in {report.seconds:.2f}s: {report.ingested} ingested,"
        f" {report.unchanged} unchanged, {len(report.failed)} failed; {report.nodes_added} nodes"
        f" added, {report.nodes_merged} merged as duplicates",
    ]
    if report.outcomes_inferred or report.relations_proposed:
        lines.append(
            f"  {report.outcomes_inferred} skill outcomes inferred,"
            f" {report.relations_proposed} relations proposed (`librarian proposals`)"
        )
    if report.kept_erased or report.withheld:
        lines.append(
            f"  forgotten content stays forgotten: {report.kept_erased} archived messages kept"
            f" erased, {report.withheld} nodes not added (they quote erased messages or repeat"
            " forgotten nodes)"
        )
    if report.skipped_lines:
        skipped = _counts(report.skipped_lines)
        lines.append(f"  skipped lines: {skipped}")
    lines += [
        f"  failed {one_line(f.path, 160)}: {f.code}: {one_line(f.reason, 200)}"
        for f in report.failed
    ]
    if report.cold is not None:
        lines.append(cold_text(report.cold))
    lines += [f"  note {one_line(p, 220)}" for p in report.problems[:20]]
    return "\n".join(lines)


#: Sessions listed one by one in an estimate before "… and N more".
PLAN_SHOWN = 20


def upgrade_plan_text(plan: UpgradePlan) -> str:
    """The cold tier's estimate: what would be sent, one call per window, and what is not."""
    head = f"cold tier ({one_line(plan.model, 60)}, prompt {plan.prompt_version}): "
    already = (
        f"; {plan.already} sessions already read by this model and prompt (not sent; --again"
        " sends them)"
        if plan.already
        else ""
    )
    if not plan.calls:
        lines = [head + "nothing to send" + already]
    else:
        lines = [
            head + f"{len(plan.sessions)} sessions × their windows = {plan.calls} calls,"
            f" ~{plan.input_tokens:,} input tokens, at most {plan.max_output_tokens:,} output"
            f" tokens{already}",
        ]
        lines += [
            f"  {_short_id(s.session_id)}  {s.windows:>3} windows  ~{s.input_tokens:>9,} tokens"
            f"  ({s.reason})"
            for s in plan.sessions[:PLAN_SHOWN]
        ]
        if len(plan.sessions) > PLAN_SHOWN:
            lines.append(f"  … and {len(plan.sessions) - PLAN_SHOWN} more sessions")
        lines.append("  counted locally (UTF-8 bytes / 3, errs high); nothing has been sent yet")
    lines += [f"  note {one_line(p, 220)}" for p in plan.problems[:20]]
    return "\n".join(lines)


def upgrade_plan_data(plan: UpgradePlan) -> dict[str, Any]:
    return asdict(plan) | {
        "calls": plan.calls,
        "input_tokens": plan.input_tokens,
        "max_output_tokens": plan.max_output_tokens,
    }


def cold_text(report: UpgradeReport) -> str:
    return (
        f"  cold tier ({one_line(report.model, 60)}, prompt {report.prompt_version}):"
        f" {report.sessions} sessions read in {report.calls} calls, {report.already} already"
        f" read; {report.nodes_added} nodes added ({report.suppressed} below the bar),"
        f" {report.superseded} warm nodes superseded, {report.merged} merged as duplicates,"
        f" {report.dropped} replies dropped"
    )


def sessions_text(rows: list[SessionSummary]) -> str:
    if not rows:
        return "no sessions (run `librarian ingest` or install the hooks)"
    return "\n".join(
        f"{_short_id(r.session_id)}  {one_line(r.started_at[:16], 16)}"
        f"  {one_line(r.project, 40):<40}"
        f" {one_line(r.branch, 24):<24} {r.turns:>3} turns {r.errors:>2} errors"
        f" {r.node_count:>3} nodes ({r.pending_count} pending)"
        for r in rows
    )


def session_text(summary: SessionSummary, nodes: list[Node], edges: list[Edge]) -> str:
    from widgets.dag_layout import layout_dag, render_text

    head = [
        f"session {one_line(summary.session_id, 200)}",
        f"  project {one_line(summary.project, 200)}"
        f"  branch {one_line(summary.branch, 80)}  client {one_line(summary.client_version, 40)}",
        f"  {one_line(summary.started_at, 40)} → {one_line(summary.ended_at, 40)}:"
        f" {summary.turns} turns,"
        f" {summary.tool_calls} tool calls, {summary.errors} errors",
        f"  skills used: {', '.join(one_line(s, 60) for s in summary.skills_used) or '-'}",
    ]
    if summary.skipped:
        head.append("  skipped lines: " + _counts(summary.skipped))
    return "\n".join([*head, "", render_text(layout_dag(nodes, edges)) or "(no nodes)"])


def nodes_text(rows: list[Node]) -> str:
    if not rows:
        return "no nodes"
    return "\n".join(
        f"{n.node_id}  {n.status:<8} {n.type:<13} {n.confidence:.2f} {n.scope:<7}"
        f" {one_line(n.summary, 90)}"
        + (f"  (superseded by {n.superseded_by})" if n.superseded_by else "")
        for n in rows
    )


def audit_text(rows: list[AuditEntry]) -> str:
    if not rows:
        return "no review decisions yet"
    return "\n".join(
        f"{r.ts[:19]}  {one_line(r.actor, 40):<40} {r.action:<9} {one_line(r.node_id, 40)}"
        f"  {one_line(json.dumps(r.before), 60)} → {one_line(json.dumps(r.after), 60)}"
        + (f"  ({one_line(r.reason, 80)})" if r.reason else "")
        for r in rows
    )


# -- patterns, retrieval, graduation ----------------------------------------------------------


def patterns_text(rows: list[Pattern]) -> str:
    if not rows:
        return "no patterns (approve nodes in the review queue, then `librarian consolidate`)"
    return "\n".join(
        f"{p.pattern_id}  {p.kind:<8} {p.status:<9} {p.confidence:.2f}  {p.members:>3} nodes"
        f" {p.sessions:>2} sessions  {'' if p.served else '(not served) '}{one_line(p.title, 70)}"
        for p in rows
    )


def criteria_lines(check: GraduationCheck) -> list[str]:
    return [
        f"  [{'x' if c.met else ' '}] {c.name:<10} {one_line(c.detail, 140)}"
        for c in check.criteria
    ]


def pattern_text(check: GraduationCheck, nodes: list[Node]) -> str:
    p = check.pattern
    lines = [
        f"{p.pattern_id}  {p.kind} ({p.polarity or 'neutral'}, {p.classifier})  {p.status}",
        f"  {one_line(p.title, 160)}",
        *([f"  not served: {one_line(p.flaw, 200)}"] if p.flaw else []),
        f"  {one_line(p.summary, 300)}",
        f"  scope {p.scope}  project {one_line(p.project, 60)}  confidence {p.confidence:.2f}"
        f" (base {p.base_confidence:.2f})  retrieved {p.retrieval_count}x",
        f"  {p.members} nodes, {p.sessions} sessions, {p.developers} developers,"
        f" first {one_line(p.first_seen[:10], 10)}, last {one_line(p.last_seen[:10], 10)}",
    ]
    if p.trigger:
        lines.append(f"  trigger: {one_line(p.trigger, 200)}")
    if p.resolution:
        lines.append(f"  resolution: {one_line(p.resolution, 200)} ({one_line(p.severity, 10)})")
    lines += [
        f"  {i}. {one_line(s.text, 160)} [{one_line(s.node_id, 40)}]"
        for i, s in enumerate(p.steps, 1)
    ]
    lines.append("graduation:" + ("  ELIGIBLE" if check.eligible else ""))
    lines += criteria_lines(check)
    if check.revalidate:
        lines.append(
            f"  re-validate: graduated into {one_line(p.skill_name, 80)} but the pattern has"
            " decayed"
        )
    if check.draft:
        lines.append(
            f"  draft {check.draft.draft_id} ({check.draft.status})"
            f" {one_line(check.draft.name, 80)}"
        )
    lines.append("members:")
    lines += [
        f"  {n.node_id}  {_short_id(n.session_id)}  {n.type:<13} {n.confidence:.2f}"
        f"  {one_line(n.summary, 90)}"
        for n in nodes
    ]
    return "\n".join(lines)


def hits_text(hits: list[MemoryHit]) -> str:
    if not hits:
        return "nothing found (no patterns yet? run `librarian consolidate`)"
    out = []
    for h in hits:
        label = h.pattern_kind or h.kind
        out.append(
            f"{h.rank:>2}. {h.score:.3f}  {label:<13} {one_line(h.item_id, 40)}"
            f"  {one_line(h.title, 90)}"
        )
        if h.detail and h.kind == "pattern":
            out.append(f"      {one_line(h.detail, 150)}")
    return "\n".join(out)


def graduation_text(checks: list[GraduationCheck], made: list[Draft], dry_run: bool) -> str:
    if not checks:
        return "no patterns to check (run `librarian consolidate`)"
    out: list[str] = []
    for c in checks:
        p = c.pattern
        flag = "ELIGIBLE" if c.eligible else ("RE-VALIDATE" if c.revalidate else p.status)
        out.append(f"{p.pattern_id}  {flag:<11} {p.kind:<8} {one_line(p.title, 80)}")
        out += criteria_lines(c)
        if c.draft:
            out.append(f"  draft {c.draft.draft_id} ({c.draft.status})")
    eligible = sum(c.eligible for c in checks)
    if dry_run:
        out.append(f"dry run: {eligible} eligible, nothing drafted")
    else:
        out.append(
            f"{len(made)} drafted into the review queue: "
            + ", ".join(f"{d.draft_id} ({one_line(d.name, 80)})" for d in made)
            if made
            else f"{eligible} eligible, nothing new drafted"
        )
    return "\n".join(out)


def drafts_text(rows: list[Draft]) -> str:
    if not rows:
        return "no drafts (run `librarian graduate`)"
    out = []
    for d in rows:
        out.append(
            f"{d.draft_id}  {d.status:<8} {one_line(d.name, 40):<40} pattern {d.pattern_id}"
            f"  {len(d.citations)} citations"
        )
        if d.reason:
            out.append(f"  reason: {one_line(d.reason, 160)}")
        if d.path:
            out.append(f"  written to {one_line(d.path, 160)}")
    return "\n".join(out)


def retrievals_text(rows: list[Retrieval]) -> str:
    if not rows:
        return "no retrievals logged yet"
    return "\n".join(
        f"#{r.seq}  {r.ts[:19]}  {one_line(r.tool, 16):<9} {len(r.hits):>2} hits"
        + (f" ×{r.calls}" if r.calls > 1 else "")
        + f"  {one_line(r.query, 80)}"
        for r in rows
    )


def _short_id(session_id: str) -> str:
    """The first 8 characters of a session id (as git shortens hashes), printable."""
    return one_line(session_id[:8], 8)


def _counts(counts: dict[str, int]) -> str:
    """`name count` pairs, names from transcripts (record types) folded to one line."""
    return ", ".join(f"{one_line(k, 40)} {v}" for k, v in sorted(counts.items()))
