"""`librarian record-outcome`, `relate`, `blast`, `graph`, `proposals` and `health`: a
skill's lifecycle after it is installed: what it relies on and what relies on it, how its
runs went, and what that says about its health.

`graph [SKILL]` shows one skill's dependencies and dependents as an indented tree, or (without
a skill) what is wrong with the graph: cycles, dangling references, self-relations. Exit code
0 either way: problems are reported, not failures."""

from __future__ import annotations

import argparse
from collections import defaultdict

from app.cli.common import Subcommands, actions, add_command, emit, open_library, plain
from store.errors import LibrarianError
from store.models import (
    BlastRadius,
    Dependency,
    Dependent,
    GraphProblems,
    RelationProposal,
    SkillHealth,
)
from store.text import one_line

SPARKS = "▁▂▃▄▅▆▇█"
#: Lines of a tree or a problem list beyond which the text says "+N more" (--json has all).
TEXT_LIMIT = 400


def register(sub: Subcommands) -> None:
    """Add `record-outcome`, `relate`, `blast`, `graph`, `proposals` and `health`."""
    outcome = add_command(
        sub,
        "record-outcome",
        "record one run's outcome for a skill version",
        cmd_record_outcome,
        json_flag=True,
    )
    outcome.add_argument("skill")
    result = outcome.add_mutually_exclusive_group(required=True)
    result.add_argument("--success", action="store_true")
    result.add_argument("--failure", action="store_true")
    outcome.add_argument("--version", type=int, help="version number (default: the current)")
    outcome.add_argument("--session", default="", help="the session it ran in")
    outcome.add_argument("--detail", default="")
    relate = add_command(
        sub,
        "relate",
        "add (or --remove) a hand-made relation: A TYPE B",
        cmd_relate,
        json_flag=True,
    )
    relate.add_argument("source", metavar="A")
    relate.add_argument("type", metavar="TYPE", help="requires, extends, complements, ...")
    relate.add_argument("target", metavar="B", help="the skill (B@N pins its version N)")
    relate.add_argument(
        "--version", type=int, default=0, help="pin B's version (requires/extends only)"
    )
    relate.add_argument("--remove", action="store_true")
    blast = add_command(
        sub,
        "blast",
        "everything that relies on a skill (transitively)",
        cmd_blast,
        json_flag=True,
        reads=True,
    )
    blast.add_argument("skill")
    blast.add_argument(
        "--version",
        type=int,
        default=0,
        help="that version's blast radius: dependents pinned to another one are not hit",
    )
    graph = add_command(
        sub,
        "graph",
        "a skill's dependencies and dependents as a tree; without a skill: cycles and"
        " dangling references",
        cmd_graph,
        json_flag=True,
        reads=True,
    )
    graph.add_argument("skill", nargs="?", help="the skill (default: the graph's problems)")
    proposals = add_command(
        sub,
        "proposals",
        "co-usage relation proposals: list, compute, accept A B, reject A B --reason R",
        cmd_proposals,
        json_flag=True,
        reads=actions("list"),
    )
    proposals.add_argument(
        "action", nargs="?", default="list", choices=["list", "compute", "accept", "reject"]
    )
    proposals.add_argument("skills", nargs="*", metavar="SKILL", help="the pair: A B")
    proposals.add_argument(
        "--status", default="pending", choices=["pending", "accepted", "rejected", "all"]
    )
    proposals.add_argument("--reason", default="", help="why (required to reject)")
    health = add_command(
        sub,
        "health",
        "skills by health (worst first), per version, with flags",
        cmd_health,
        json_flag=True,
        reads=lambda args: not args.apply,
    )
    health.add_argument(
        "--apply",
        action="store_true",
        help="also deprecate drifting skills, promote proven proposed ones and decide"
        " candidate versions (events)",
    )


def cmd_relate(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        text = library.relate(
            args.source, args.type, args.target, remove=args.remove, version=args.version
        )
    emit(args, {"result": text}, text)
    return 0


def blast_text(b: BlastRadius) -> str:
    which = f" v{b.version_no}" if b.version_no else ""
    lines = [
        f"{one_line(b.skill, 80)}{which} ({b.status}): {len(b.dependents)} dependent skills,"
        f" {len(b.sessions)} sessions, {len(b.patterns)} patterns, {len(b.drafts)} drafts"
    ]
    for d in b.dependents:
        lines.append(
            f"  {'  ' * (d.depth - 1)}{one_line(d.name, 60)} ({d.status}) {d.relation}"
            f" {one_line(d.path[1], 60)}{pinned(d.pin)}  [depth {d.depth}]"
        )
    lines += [
        f"  not hit: {one_line(d.name, 60)} ({d.status}) {d.relation}"
        f" {one_line(b.skill, 60)}@{d.pin} (pinned to v{d.pin})"
        for d in b.pinned
    ]
    lines += [f"  related: {one_line(r.name, 60)} ({r.relation})" for r in b.related]
    lines += pin_lines(b)
    if b.sessions:
        lines.append("  sessions: " + ", ".join(one_line(s[:8], 8) for s in b.sessions[:20]))
    if b.patterns:
        lines.append("  patterns: " + ", ".join(one_line(p, 40) for p in b.patterns[:20]))
    if b.drafts:
        lines.append("  drafts: " + ", ".join(one_line(d, 40) for d in b.drafts))
    return "\n".join(lines)


def cmd_blast(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        radius = library.blast(args.skill, args.version)
    emit(args, plain(radius), blast_text(radius))
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
            f" {h.runs:>4} {'run ' if h.runs == 1 else 'runs'} {rate} failed"
            f"  [{sparkline(h.trend)}]"
        )
        if len(h.versions) > 1:
            out += [
                f"          v{v.version_no}: {v.runs} run{'' if v.runs == 1 else 's'},"
                f" {v.failure_rate:.0%} failed, {v.verdict}"
                for v in h.versions
            ]
        if h.served_version and h.served_version != h.version_no:
            out.append(f"          serving v{h.served_version}")
        if h.candidate is not None:
            out.append(f"          {one_line(h.candidate.describe(), 160)}")
        out += [f"          flag: {one_line(f, 120)}" for f in h.flags]
    out += [f"changed: {one_line(c, 200)}" for c in changes]
    return "\n".join(out)


def cmd_health(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        rows, changes = library.health(apply=args.apply)
    data = {"skills": [plain(h) for h in rows], "changes": changes}
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
            source, target = args.skills
            rows = [library.reject_relation(source, target, args.reason)]
            empty = ""
    emit(args, [plain(p) for p in rows], proposals_text(rows, empty))
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if not args.skill:
            found = library.graph_problems()
            emit(args, plain(found), problems_text(found))
            return 0
        radius = library.blast(args.skill)
        deps = library.dependencies(args.skill)
        touching = library.graph_problems().touching(radius.skill)
    data = {
        "skill": radius.skill,
        "status": radius.status,
        "dependencies": [{**plain(d), "manual": d.manual, "missing": d.missing} for d in deps],
        "blast": plain(radius),
        "problems": plain(touching),
    }
    emit(args, data, focus_text(radius, deps, touching))
    return 0


def focus_text(radius: BlastRadius, deps: list[Dependency], problems: GraphProblems) -> str:
    name = one_line(radius.skill, 80)
    lines = [f"{name} ({radius.status})", f"depends on ({len(deps)}):"]
    lines += [f"  {dependency_line(d)}" for d in deps] or ["  nothing"]
    direct = sum(1 for d in radius.dependents if d.depth == 1)
    lines.append(
        f"dependents — blast radius: {len(radius.dependents)} skills ({direct} direct)"
        f" · {len(radius.sessions)} sessions · {len(radius.patterns)} patterns"
        f" · {len(radius.drafts)} drafts"
    )
    tree = dependent_tree(radius)
    lines += _capped(tree) or ["  nothing depends on it"]
    if radius.related:
        lines.append("related:")
        lines += [
            f"  {one_line(r.name, 60)} ({r.status}) {r.relation} {name}" for r in radius.related
        ]
    if problems.count:
        lines.append("problems:")
        lines += [f"  {line}" for line in problem_lines(problems)]
    return "\n".join(lines)


def dependency_line(d: Dependency) -> str:
    origin = "by hand" if d.manual else "/".join(d.origins)
    mark = "  <- dangling: no such skill" if d.missing else ""
    pin = f"@{d.pin}" if d.pin else ""
    return f"{d.relation:<16} {one_line(d.name, 60)}{pin} ({d.status}) [{origin}]{mark}"


def dependent_tree(radius: BlastRadius) -> list[str]:
    """The dependents as a tree: each under the skill it depends on along its shortest
    path, nearest first, depth by indentation."""
    children: dict[str, list[Dependent]] = defaultdict(list)
    for d in radius.dependents:
        children[d.path[1]].append(d)
    lines: list[str] = []
    stack = [(d, 1) for d in reversed(children[radius.skill])]
    while stack:
        d, level = stack.pop()
        lines.append(
            f"{'  ' * level}{one_line(d.name, 60)} ({d.status}) {d.relation}"
            f" {one_line(d.path[1], 60)}  [depth {d.depth}]"
        )
        stack += [(c, level + 1) for c in reversed(children.get(d.name, []))]
    return lines


def problems_text(found: GraphProblems) -> str:
    if not found.count:
        return "no graph problems: no cycles, no dangling references, no self-relations"
    head = (
        f"{len(found.cycles)} cycles, {len(found.dangling)} dangling references,"
        f" {len(found.self_loops)} self-relations, {len(found.unproven)} stable skills on"
        " proposed ones"
    )
    return "\n".join([head, *_capped([f"  {line}" for line in problem_lines(found)])])


def problem_lines(found: GraphProblems) -> list[str]:
    lines = []
    for cycle, knot in zip(found.cycles, found.knots, strict=True):
        path = " -> ".join(one_line(n, 60) for n in (*cycle, cycle[0]))
        more = f" (a knot of {len(knot)} skills)" if len(knot) > len(cycle) else ""
        lines.append(f"cycle: {path}{more}")
    lines += [
        f"dangling: {one_line(r.source, 60)} {r.type} {one_line(r.target, 60)}"
        f" (no such skill; {r.origin})"
        for r in found.dangling
    ]
    lines += [
        f"self-relation: {one_line(r.source, 60)} {r.type} itself (ignored)"
        for r in found.self_loops
    ]
    lines += [f"unproven: {one_line(u.reason, 240)}" for u in found.unproven]
    return lines


def pinned(pin: int) -> str:
    return f" @v{pin}" if pin else ""


def pin_lines(b: BlastRadius) -> list[str]:
    """Who is pinned to which version of the skill."""
    lines = []
    for p in b.pins:
        state = (
            "the served version"
            if p.version_no == p.target_served
            else f"v{p.target_served} is served"
        )
        missing = "" if p.exists else ", no such version"
        lines.append(
            f"  pinned: {one_line(p.dependent, 60)} {p.relation} {one_line(p.target, 60)}"
            f"@{p.version_no} ({state}{missing}; {p.origin})"
        )
    return lines


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= TEXT_LIMIT:
        return lines
    return [*lines[:TEXT_LIMIT], f"  … +{len(lines) - TEXT_LIMIT:,} more (--json lists all)"]
