"""`librarian` commands for patterns, retrieval, graduation and the MCP server."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli import emit, open_library, say
from store.errors import LibrarianError
from store.text import one_line


def add_parsers(sub: Any, add: Any) -> None:
    """Register the subcommands on the main parser (`add` is the CLI's `_add` helper)."""
    consolidate = add(sub, "consolidate", "cluster approved nodes into patterns", True)
    consolidate.add_argument(
        "--full", action="store_true", help="re-cluster everything (default: incremental)"
    )
    consolidate.add_argument(
        "--llm", action="store_true", help="classify with the configured LLM (needs a key)"
    )
    patterns = add(sub, "patterns", "list patterns (pitfalls, strategies, insights)", True)
    patterns.add_argument("--kind", choices=["pitfall", "strategy", "insight"])
    patterns.add_argument("--project")
    patterns.add_argument("--all", action="store_true", help="include decayed and dissolved")
    pattern = add(sub, "pattern", "one pattern: members, criteria, drafts", True)
    pattern.add_argument("pattern_id")
    profile = add(sub, "profile", "the Markdown knowledge profile an agent can load")
    profile.add_argument("--project", default="")
    for name, text in (
        ("search", "search memory: patterns and approved nodes"),
        ("pitfalls", "pitfalls, most severe first (or most relevant to QUERY)"),
        ("diagnose", "diagnostic strategies and pitfalls for a problem"),
    ):
        parser = add(sub, name, text, True)
        parser.add_argument(
            "query", nargs="?" if name == "pitfalls" else None, default="", metavar="QUERY"
        )
        parser.add_argument("--project", default="")
        parser.add_argument("--limit", type=int, default=None)
    graduate = add(sub, "graduate", "check patterns against graduation; draft eligible ones", True)
    graduate.add_argument("--dry-run", action="store_true", help="show criteria, draft nothing")
    graduate.add_argument("--all", action="store_true", help="include decayed patterns")
    drafts = add(sub, "drafts", "SKILL.md drafts: list, show, approve, reject", True)
    drafts.add_argument(
        "action", nargs="?", default="list", choices=["list", "show", "approve", "reject"]
    )
    drafts.add_argument("draft_id", nargs="?")
    drafts.add_argument("--status", choices=["pending", "approved", "rejected"])
    drafts.add_argument("--reason", default="")
    retrievals = add(sub, "retrievals", "the retrieval log, newest first", True)
    retrievals.add_argument("--limit", type=int, default=50)
    event = add(sub, "skill-event", "append a skill lifecycle event (as an agent would)", True)
    event.add_argument("skill")
    event.add_argument(
        "event",
        choices=[
            "proposed",
            "validated",
            "applied",
            "outcome_recorded",
            "revised",
            "deprecated",
            "contradicted",
        ],
    )
    event.add_argument("--detail", default="")
    add(sub, "mcp", "serve memory and skills to agents over MCP (stdio)")


def cmd_consolidate(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        llm = _classifier(library) if args.llm else None
        report = library.consolidate(
            full=args.full,
            llm=llm,
            progress=None if args.json else (lambda m: say(m, file=sys.stderr)),
        )
    text = (
        f"{report.nodes} approved nodes -> {report.patterns} patterns ({report.method},"
        f" {report.classifier}): {report.created} new, {report.changed} changed,"
        f" {report.unchanged} unchanged, {report.dissolved} dissolved; {report.decayed}"
        f" confidence updates; {report.seconds:.2f}s"
    )
    text += "".join(f"\n  note {one_line(n, 200)}" for n in report.notes)
    emit(args, render.plain(report), text)
    return 0


def _classifier(library: Any) -> Any:
    from store.ingest.cold import ColdTierUnavailable, client_from_config

    try:
        return client_from_config(library.config)
    except ColdTierUnavailable as exc:
        raise LibrarianError(str(exc)) from exc


def cmd_patterns(args: argparse.Namespace) -> int:
    from app import render

    statuses = ("active", "decayed", "graduated", "dissolved") if args.all else None
    with open_library(args) as library:
        found = library.patterns(
            kind=args.kind,
            project=args.project,
            **({"statuses": statuses} if statuses else {}),
        )
    emit(args, [render.plain(p) for p in found], render.patterns_text(found))
    return 0


def cmd_pattern(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        check = library.graduation_check(args.pattern_id)
        nodes = library.pattern_nodes(args.pattern_id)
    data = {"check": render.plain(check), "nodes": [render.plain(n) for n in nodes]}
    emit(args, data, render.pattern_text(check, nodes))
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        say(library.profile(args.project), end="")
    return 0


def _memory(args: argparse.Namespace, tool: str) -> int:
    from app import render
    from store.serving import masked

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
    emit(args, [render.plain(h) for h in hits], render.hits_text(hits))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    return _memory(args, "search")


def cmd_pitfalls(args: argparse.Namespace) -> int:
    return _memory(args, "pitfalls")


def cmd_diagnose(args: argparse.Namespace) -> int:
    return _memory(args, "diagnose")


def cmd_graduate(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        if args.all:
            found, made = library.graduation(include_all=True), []
            if not args.dry_run:
                _, made = library.graduate()
        else:
            found, made = library.graduate(dry_run=args.dry_run)
    data = {"checks": [render.plain(c) for c in found], "drafts": [render.plain(d) for d in made]}
    emit(args, data, render.graduation_text(found, made, args.dry_run))
    return 0


def cmd_drafts(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        if args.action == "list":
            found = library.drafts(args.status)
            emit(args, [render.plain(d) for d in found], render.drafts_text(found))
            return 0
        if not args.draft_id:
            raise LibrarianError(f"drafts {args.action} needs a draft ID")
        if args.action == "show":
            draft = library.get_draft(args.draft_id)
        elif args.action == "approve":
            draft = library.approve_draft(args.draft_id)
        else:
            draft = library.reject_draft(args.draft_id, args.reason)
    text = draft.content if args.action == "show" else render.drafts_text([draft])
    emit(args, render.plain(draft), text)
    return 0


def cmd_retrievals(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        found = library.retrievals(args.limit)
    emit(args, [render.plain(r) for r in found], render.retrievals_text(found))
    return 0


def cmd_skill_event(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        event = library.skill_event(args.skill, args.event, detail=args.detail)
    text = f"#{event.seq} {event.type} {one_line(args.skill, 80)}"
    emit(args, {"seq": event.seq, "type": event.type}, text)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from app.mcp_server import serve

    return serve(args)


COMMANDS = {
    "consolidate": cmd_consolidate,
    "patterns": cmd_patterns,
    "pattern": cmd_pattern,
    "profile": cmd_profile,
    "search": cmd_search,
    "pitfalls": cmd_pitfalls,
    "diagnose": cmd_diagnose,
    "graduate": cmd_graduate,
    "drafts": cmd_drafts,
    "retrievals": cmd_retrievals,
    "skill-event": cmd_skill_event,
    "mcp": cmd_mcp,
}
