"""`librarian` commands for the skill lifecycle: outcomes and health."""

from __future__ import annotations

import argparse
from typing import Any

from app import cli_graph
from app.cli import emit, open_library
from store.errors import LibrarianError
from store.models import BlastRadius, RelationProposal, SkillHealth
from store.text import one_line

SPARKS = "▁▂▃▄▅▆▇█"


def add_parsers(sub: Any, add: Any) -> None:
    outcome = add(sub, "record-outcome", "record one run's outcome for a skill version", True)
    outcome.add_argument("skill")
    result = outcome.add_mutually_exclusive_group(required=True)
    result.add_argument("--success", action="store_true")
    result.add_argument("--failure", action="store_true")
    outcome.add_argument("--version", type=int, help="version number (default: the current)")
    outcome.add_argument("--session", default="", help="the session it ran in")
    outcome.add_argument("--detail", default="")
    relate = add(sub, "relate", "add (or --remove) a hand-made relation: A TYPE B", True)
    relate.add_argument("source", metavar="A")
    relate.add_argument("type", metavar="TYPE", help="requires, extends, complements, ...")
    relate.add_argument("target", metavar="B")
    relate.add_argument("--remove", action="store_true")
    blast = add(sub, "blast", "everything that relies on a skill (transitively)", True)
    blast.add_argument("skill")
    cli_graph.add_parser(sub, add)
    proposals = add(
        sub,
        "proposals",
        "co-usage relation proposals: list, compute, accept A B, reject A B --reason R",
        True,
    )
    proposals.add_argument(
        "action", nargs="?", default="list", choices=["list", "compute", "accept", "reject"]
    )
    proposals.add_argument("skills", nargs="*", metavar="SKILL", help="the pair: A B")
    proposals.add_argument(
        "--status", default="pending", choices=["pending", "accepted", "rejected", "all"]
    )
    proposals.add_argument("--reason", default="", help="why (required to reject)")
    health = add(sub, "health", "skills by health (worst first), per version, with flags", True)
    health.add_argument(
        "--apply",
        action="store_true",
        help="also deprecate drifting skills and promote proven proposed ones (events)",
    )


def cmd_relate(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        text = library.relate(args.source, args.type, args.target, remove=args.remove)
    emit(args, {"result": text}, text)
    return 0


def blast_text(b: BlastRadius) -> str:
    lines = [
        f"{one_line(b.skill, 80)} ({b.status}): {len(b.dependents)} dependent skills,"
        f" {len(b.sessions)} sessions, {len(b.patterns)} patterns, {len(b.drafts)} drafts"
    ]
    for d in b.dependents:
        lines.append(
            f"  {'  ' * (d.depth - 1)}{one_line(d.name, 60)} ({d.status}) {d.relation}"
            f" {one_line(d.path[1], 60)}  [depth {d.depth}]"
        )
    lines += [f"  related: {one_line(r.name, 60)} ({r.relation})" for r in b.related]
    if b.sessions:
        lines.append("  sessions: " + ", ".join(one_line(s[:8], 8) for s in b.sessions[:20]))
    if b.patterns:
        lines.append("  patterns: " + ", ".join(one_line(p, 40) for p in b.patterns[:20]))
    if b.drafts:
        lines.append("  drafts: " + ", ".join(one_line(d, 40) for d in b.drafts))
    return "\n".join(lines)


def cmd_blast(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        radius = library.blast(args.skill)
    emit(args, render.plain(radius), blast_text(radius))
    return 0


def cmd_record_outcome(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        event = library.record_outcome(
            args.skill,
            bool(args.success),
            version=args.version,
            session_id=args.session,
            detail=args.detail,
        )
    p = event.payload
    text = (
        f"#{event.seq} {'success' if p['success'] else 'failure'} recorded for"
        f" {one_line(args.skill, 80)} v{p['version_no']}"
    )
    emit(args, {"seq": event.seq, **p}, text)
    return 0


def sparkline(trend: tuple[float, ...]) -> str:
    """Weekly failure rates as a sparkline; a week without runs is a space."""
    return "".join(" " if r < 0 else SPARKS[min(7, int(r * 7.999))] for r in trend)


def health_text(rows: list[SkillHealth], changes: list[str]) -> str:
    if not rows:
        return "no skills"
    out = []
    for h in rows:
        rate = f"{h.failure_rate:>4.0%}" if h.runs else "   -"
        out.append(
            f"{h.verdict:<9} {one_line(h.name, 40):<40} {h.status:<10} v{h.version_no:<3}"
            f" {h.runs:>4} runs {rate} failed  [{sparkline(h.trend)}]"
        )
        if len(h.versions) > 1:
            out += [
                f"          v{v.version_no}: {v.runs} runs,"
                f" {v.failure_rate:.0%} failed, {v.verdict}"
                for v in h.versions
            ]
        out += [f"          flag: {one_line(f, 120)}" for f in h.flags]
    out += [f"changed: {one_line(c, 200)}" for c in changes]
    return "\n".join(out)


def cmd_health(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        rows, changes = library.health(apply=args.apply)
    data = {"skills": [render.plain(h) for h in rows], "changes": changes}
    emit(args, data, health_text(rows, changes))
    return 0


def proposals_text(rows: list[RelationProposal], empty: str) -> str:
    if not rows:
        return empty
    out = []
    for p in rows:
        decided = f" by {one_line(p.decided_by, 40)}" if p.decided_by else ""
        why = f": {one_line(p.reason, 120)}" if p.reason else ""
        out.append(
            f"{p.status:<9} {one_line(p.source_name, 40)} often_used_with"
            f" {one_line(p.target_name, 40)}  ({p.shared} shared sessions){decided}{why}"
        )
    return "\n".join(out)


def cmd_proposals(args: argparse.Namespace) -> int:
    from app import render

    if args.action in ("accept", "reject") and len(args.skills) != 2:
        raise LibrarianError(f"proposals {args.action} needs two skills: A B")
    if args.action in ("list", "compute") and args.skills:
        raise LibrarianError(f"proposals {args.action} takes no skills")
    with open_library(args) as library:
        if args.action == "list":
            status = None if args.status == "all" else args.status
            rows = library.relation_proposals(status)
            empty = f"no {'' if status is None else status + ' '}relation proposals"
        elif args.action == "compute":
            rows = library.propose_relations()
            empty = "no new relation proposals"
        elif args.action == "accept":
            rows = [library.accept_relation(*args.skills)]
            empty = ""
        else:
            rows = [library.reject_relation(*args.skills, args.reason)]
            empty = ""
    emit(args, [render.plain(p) for p in rows], proposals_text(rows, empty))
    return 0


COMMANDS = {
    "record-outcome": cmd_record_outcome,
    "health": cmd_health,
    "relate": cmd_relate,
    "blast": cmd_blast,
    "graph": cli_graph.cmd_graph,
    "proposals": cmd_proposals,
}
