"""`librarian consolidate`, `patterns`, `pattern`, `graduate` and `drafts` (patterns and the
skills they graduate into); `profile`, `search`, `pitfalls`, `diagnose` and `retrievals`
(memory as agents read it); `skill-event` (a lifecycle event, as an agent would append it)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    Subcommands,
    actions,
    add_command,
    emit,
    open_library,
    plain,
    say,
    short_id,
)
from app.cli.progress import MODEL_LOAD_SECONDS, Feedback, seconds
from store.errors import LibrarianError
from store.ingest.cold import ColdTierUnavailable, client_from_config
from store.models import Draft, GraduationCheck, MemoryHit, Node, Pattern, Retrieval
from store.patterns.literals import draft_diff
from store.serving import masked
from store.text import neutralise, one_line

if TYPE_CHECKING:
    from store.library import Library

#: The lifecycle events `skill-event` appends.
SKILL_EVENTS = (
    "proposed",
    "validated",
    "applied",
    "outcome_recorded",
    "revised",
    "deprecated",
    "contradicted",
)


def register(sub: Subcommands) -> None:
    """Add the pattern, memory and graduation commands, and `skill-event`."""
    consolidate = add_command(
        sub,
        "consolidate",
        "cluster approved nodes into patterns",
        cmd_consolidate,
        json_flag=True,
    )
    consolidate.add_argument(
        "--full", action="store_true", help="re-cluster everything (default: incremental)"
    )
    consolidate.add_argument(
        "--llm", action="store_true", help="classify with the configured LLM (needs a key)"
    )
    patterns = add_command(
        sub,
        "patterns",
        "list patterns (pitfalls, strategies, insights)",
        cmd_patterns,
        json_flag=True,
        reads=True,
    )
    patterns.add_argument("--kind", choices=["pitfall", "strategy", "insight"])
    patterns.add_argument("--project")
    patterns.add_argument("--all", action="store_true", help="include decayed and dissolved")
    pattern = add_command(
        sub,
        "pattern",
        "one pattern: members, criteria, drafts",
        cmd_pattern,
        json_flag=True,
        reads=True,
    )
    pattern.add_argument("pattern_id")
    profile = add_command(
        sub, "profile", "the Markdown knowledge profile an agent can load", cmd_profile
    )
    profile.add_argument("--project", default="")
    for name, text, command in (
        ("search", "search memory: patterns and approved nodes", cmd_search),
        ("pitfalls", "pitfalls, most severe first (or most relevant to QUERY)", cmd_pitfalls),
        ("diagnose", "diagnostic strategies and pitfalls for a problem", cmd_diagnose),
    ):
        parser = add_command(sub, name, text, command, json_flag=True)
        parser.add_argument(
            "query", nargs="?" if name == "pitfalls" else None, default="", metavar="QUERY"
        )
        parser.add_argument("--project", default="")
        parser.add_argument("--limit", type=int, default=None)
    graduate = add_command(
        sub,
        "graduate",
        "check patterns against graduation; draft eligible ones",
        cmd_graduate,
        json_flag=True,
    )
    graduate.add_argument("--dry-run", action="store_true", help="show criteria, draft nothing")
    graduate.add_argument("--all", action="store_true", help="include decayed patterns")
    drafts = add_command(
        sub,
        "drafts",
        "SKILL.md drafts: list, show, diff (its parameters), keep/unkeep LITERAL, approve, reject",
        cmd_drafts,
        json_flag=True,
        reads=actions("list", "show", "diff"),
    )
    drafts.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "show", "diff", "keep", "unkeep", "approve", "reject"],
    )
    drafts.add_argument("draft_id", nargs="?")
    drafts.add_argument(
        "literal", nargs="?", help="keep/unkeep: the literal, or its parameter ({host})"
    )
    drafts.add_argument("--status", choices=["pending", "approved", "rejected"])
    drafts.add_argument("--reason", default="")
    retrievals = add_command(
        sub,
        "retrievals",
        "the retrieval log, newest first",
        cmd_retrievals,
        json_flag=True,
        reads=True,
    )
    retrievals.add_argument("--limit", type=int, default=50)
    event = add_command(
        sub,
        "skill-event",
        "append a skill lifecycle event (as an agent would)",
        cmd_skill_event,
        json_flag=True,
    )
    event.add_argument("skill")
    event.add_argument("event", choices=list(SKILL_EVENTS))
    event.add_argument("--detail", default="")


def cmd_consolidate(args: argparse.Namespace) -> int:
    with open_library(args) as library, Feedback.for_args(args) as feedback:
        llm = _classifier(library) if args.llm else None
        if feedback.enabled and (args.full or not library.patterns(statuses=EVERY_STATUS)):
            approved = library.node_count(status="approved")
            feedback.tell(consolidate_text(approved, full=args.full))
        report = library.consolidate(full=args.full, llm=llm, progress=feedback.stage)
    text = (
        f"{report.nodes} approved nodes -> {report.patterns} patterns ({report.method},"
        f" {report.classifier}): {report.created} new, {report.changed} changed,"
        f" {report.unchanged} unchanged, {report.dissolved} dissolved; {report.decayed}"
        f" confidence updates; {report.seconds:.2f}s"
    )
    text += "".join(f"\n  note {one_line(n, 200)}" for n in report.notes)
    emit(args, plain(report), text)
    return 0


EVERY_STATUS = ("active", "decayed", "graduated", "dissolved")
#: Rough cost of clustering approved nodes on a laptop core (the benchmark: 10,000 nodes in
#: about 10 s), after loading the embedding model.
CONSOLIDATE_SECONDS = 0.001


def consolidate_text(approved: int, *, full: bool) -> str:
    """What a first (or `--full`) consolidation does, and roughly how long it takes."""
    what = "a full consolidation" if full else "first consolidation"
    estimate = seconds(MODEL_LOAD_SECONDS + CONSOLIDATE_SECONDS * approved)
    return (
        f"{what}: clusters {approved:,} approved node{'s' if approved != 1 else ''} into"
        f" patterns, {estimate}; later runs only place what is new"
    )


def _classifier(library: Library) -> Any:
    try:
        return client_from_config(library.config)
    except ColdTierUnavailable as exc:
        raise LibrarianError(str(exc)) from exc


def cmd_patterns(args: argparse.Namespace) -> int:
    statuses = ("active", "decayed", "graduated", "dissolved") if args.all else None
    with open_library(args) as library:
        found = library.patterns(
            kind=args.kind,
            project=args.project,
            **({"statuses": statuses} if statuses else {}),
        )
    emit(args, [plain(p) for p in found], patterns_text(found))
    return 0


def cmd_pattern(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        check = library.graduation_check(args.pattern_id)
        nodes = library.pattern_nodes(args.pattern_id)
    data = {"check": plain(check), "nodes": [plain(n) for n in nodes]}
    emit(args, data, pattern_text(check, nodes))
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        say(library.profile(args.project), end="")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    return _memory(args, "search")


def cmd_pitfalls(args: argparse.Namespace) -> int:
    return _memory(args, "pitfalls")


def cmd_diagnose(args: argparse.Namespace) -> int:
    return _memory(args, "diagnose")


def _memory(args: argparse.Namespace, tool: str) -> int:
    with open_library(args) as library:
        if tool == "search":
            hits = library.search_memory(args.query, project=args.project, limit=args.limit)
        elif tool == "pitfalls":
            hits = library.pitfalls(args.query or "", project=args.project, limit=args.limit)
        else:
            if not args.query.strip():
                raise LibrarianError("diagnose needs a problem statement")
            hits = library.diagnose(args.query, project=args.project, limit=args.limit)
    hits = masked(hits)  # agents read this: no secret from a pattern or node goes out
    emit(args, [plain(h) for h in hits], hits_text(hits))
    return 0


def cmd_graduate(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if args.all:
            found = library.graduation(include_all=True)
            made: list[Draft] = []
            if not args.dry_run:
                _, made = library.graduate()
        else:
            found, made = library.graduate(dry_run=args.dry_run)
    data = {"checks": [plain(c) for c in found], "drafts": [plain(d) for d in made]}
    emit(args, data, graduation_text(found, made, args.dry_run))
    return 0


def cmd_drafts(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if args.action == "list":
            found = library.drafts(args.status)
            emit(args, [plain(d) for d in found], drafts_text(found))
            return 0
        if not args.draft_id:
            raise LibrarianError(f"drafts {args.action} needs a draft ID")
        if args.action in ("keep", "unkeep") and not args.literal:
            raise LibrarianError(f"drafts {args.action} needs a literal (or its parameter)")
        if args.action in ("show", "diff"):
            draft = library.get_draft(args.draft_id)
        elif args.action in ("keep", "unkeep"):
            draft = library.keep_literal(args.draft_id, args.literal, keep=args.action == "keep")
        elif args.action == "approve":
            draft = library.approve_draft(args.draft_id)
        else:
            draft = library.reject_draft(args.draft_id, args.reason)
    if args.action == "show":
        text = "\n".join([neutralise(draft.content), *gate_lines(draft)])
    elif args.action == "diff":
        text = neutralise(draft_diff(draft)) or "no parameters: the draft is as learned"
    else:
        text = "\n".join([drafts_text([draft]), *gate_lines(draft)])
    data = {**plain(draft), "diff": draft_diff(draft)} if args.action == "diff" else plain(draft)
    emit(args, data, text)
    return 0


def gate_lines(draft: Draft) -> list[str]:
    """The draft's write gate: each literal (replaced or kept) and its regression cases."""
    lines = []
    if draft.parameters:
        lines.append("parameters (`librarian drafts keep ID LITERAL` keeps one):")
        lines += [
            f"  {one_line(r.parameter, 30):<16} {'kept    ' if r.kept else 'replaces'}"
            f" {one_line(r.literal, 80)}  ({r.kind}, {r.count}x)"
            for r in draft.parameters
        ]
    if draft.regressions:
        lines.append(f"regression cases ({len(draft.regressions)}):")
        lines += [f"  - {one_line(c.line(), 300)}" for c in draft.regressions]
    return lines


def cmd_retrievals(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        found = library.retrievals(args.limit)
    emit(args, [plain(r) for r in found], retrievals_text(found))
    return 0


def cmd_skill_event(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        event = library.skill_event(args.skill, args.event, detail=args.detail)
    text = f"#{event.seq} {event.type} {one_line(args.skill, 80)}"
    emit(args, {"seq": event.seq, "type": event.type}, text)
    return 0


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


def retrieval_lines(check: GraduationCheck, limit: int = 20) -> list[str]:
    """The retrievals that returned the pattern: which counted for graduation, and why."""
    lines = [
        f"    {'counted' if r.counted else 'not counted':<11} #{r.seq} {one_line(r.ts[:16], 16)}"
        f"  rank {r.rank}{f' ×{r.calls}' if r.calls > 1 else ''}  {one_line(r.why, 60)}:"
        f" {one_line(r.query, 70)}"
        for r in check.retrievals[-limit:]
    ]
    if len(check.retrievals) > limit:
        lines.insert(0, f"    … {len(check.retrievals) - limit} earlier retrievals (--json)")
    return lines


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
    lines += retrieval_lines(check)
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
        f"  {n.node_id}  {short_id(n.session_id)}  {n.type:<13} {n.confidence:.2f}"
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
