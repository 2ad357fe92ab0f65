"""`librarian lineage SKILL`: a skill's versions, status history, provenance chain (sessions →
nodes → pattern → draft → skill), runs, incidents and latest events; `--diff A B` prints the
SKILL.md diff between two versions."""

from __future__ import annotations

import argparse

from app.cli.common import Subcommands, add_command, emit, open_library, plain
from store.models import Lineage, Provenance
from store.text import neutralise, one_line

NODE_GLYPHS = {
    "HYPOTHESIS": "?",
    "INVESTIGATION": "…",
    "DISCOVERY": "!",
    "PIVOT": "↪",
    "DEAD_END": "✗",
    "SOLUTION": "✓",
    "CONTEXT_LOAD": "≡",
}


def register(sub: Subcommands) -> None:
    """Add `lineage`."""
    lineage = add_command(
        sub,
        "lineage",
        "a skill's versions, status history, provenance chain and events",
        cmd_lineage,
        json_flag=True,
        reads=True,
    )
    lineage.add_argument("skill", help="name, id or path")
    lineage.add_argument(
        "--diff",
        nargs=2,
        type=int,
        metavar=("A", "B"),
        help="only the SKILL.md diff from version A to B (A = 0: all of B)",
    )
    lineage.add_argument("--events", type=int, default=20, help="how many events (newest first)")
    lineage.add_argument("--offset", type=int, default=0, help="skip this many newest events")


def cmd_lineage(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if args.diff:
            a, b = args.diff
            diff = library.version_diff(args.skill, a, b)
            emit(args, {"skill": args.skill, "from": a, "to": b, "diff": diff}, _diff(diff))
            return 0
        found = library.lineage(
            args.skill, events_limit=max(0, args.events), events_offset=max(0, args.offset)
        )
    emit(args, plain(found), lineage_text(found))
    return 0


def _diff(diff: str) -> str:
    return neutralise(diff) if diff else "(no difference)"


def lineage_text(x: Lineage) -> str:
    from widgets.lineage_text import event_summary, when  # Rich: `librarian hook` must not load it

    lines = [f"{one_line(x.name, 80)}  [{x.status}]  v{x.current_version}  id {x.skill_id}"]
    lines.append(f"  path: {one_line(x.fs_path, 200)}")
    if x.superseded_by:
        lines.append("  superseded by: " + ", ".join(one_line(n, 60) for n in x.superseded_by))
    if x.supersedes:
        lines.append("  supersedes: " + ", ".join(one_line(n, 60) for n in x.supersedes))
    lines += ["", "Versions (newest first)"]
    for v in x.versions:
        label = f" {one_line(v.version_label, 20)}" if v.version_label else ""
        lines.append(
            f"  v{v.version_no:<3} {when(v.created_at)}  {v.event.removeprefix('skill.'):<9}"
            f" {' → '.join(v.statuses) or '-':<22} {v.warning_count} warnings,"
            f" {v.finding_count} findings  {v.content_hash[:12]}{label}"
        )
    lines += ["", "Status history (newest first)"]
    for c in x.history:
        moved = f"{c.from_status} → {c.to_status}" if c.from_status else c.to_status
        alert = f" ALERT {one_line(c.alert, 30)}" if c.alert else ""
        lines.append(
            f"  {when(c.ts)}  {c.event.removeprefix('skill.'):<11} {moved:<24}"
            f" by {one_line(c.actor, 40)}{alert}: {one_line(c.reason, 200)}"
        )
    lines += ["", *provenance_lines(x)]
    if x.runs or x.incidents:
        lines += ["", "Runbook"]
        for r in x.runs:
            lines.append(
                f"  {one_line(r.run_id, 40)} {r.status} step {r.step}/7 started"
                f" {when(r.started_at)} by {one_line(r.actor, 40)}: {one_line(r.reason, 200)}"
            )
        for i in x.incidents:
            lines.append(
                f"  incident {one_line(i.incident_id, 40)} v{i.version_no}:"
                f" cause {one_line(i.cause, 200)}; scope {one_line(i.scope, 120)};"
                f" regression {one_line(i.regression, 200)}"
                + (f"; successor {one_line(i.successor, 60)}" if i.successor else "")
            )
    shown = f"{len(x.events)} of {x.event_total}"
    if x.events_offset:
        shown += f", after the {x.events_offset} newest"
    lines += ["", f"Events ({shown}, newest first)"]
    lines += [
        f"  #{e.seq:<6} {when(e.ts)}  {one_line(e.type, 30):<24} {one_line(e.actor, 30):<20}"
        f" {event_summary(e)}"
        for e in x.events
    ]
    return "\n".join(lines)


def provenance_lines(x: Lineage) -> list[str]:
    """The chain sessions → nodes → pattern → draft → skill, indented."""
    p = x.provenance
    lines = [f"Provenance: {one_line(p.note, 300)}"]
    if p.origin == "graduated":
        lines += _chain(x, p)
    if p.used_in_total:
        lines.append(f"  used in {p.used_in_total} session{'s' if p.used_in_total != 1 else ''}:")
        lines += [
            f"    {one_line(s.session_id[:8], 8)}  {one_line(s.project, 60)}"
            f"  {one_line(s.started_at[:10], 10)}"
            f"  {one_line(s.title, 80)}"
            for s in p.used_in
        ]
        if p.used_in_total > len(p.used_in):
            lines.append(f"    … {p.used_in_total - len(p.used_in)} more")
    return lines


def _chain(x: Lineage, p: Provenance) -> list[str]:
    lines = ["  sessions → nodes"]
    for s in p.sessions:
        where = (
            f"{one_line(s.project, 60)}  {one_line(s.started_at[:10], 10)}  {one_line(s.title, 80)}"
            if s.known
            else "(not in this library)"
        )
        lines.append(f"    session {one_line(s.session_id, 40)}  {where}")
        lines += [
            f"      {NODE_GLYPHS.get(n.type, '·')} {n.type:<13} {one_line(n.node_id, 30)}"
            f" [{n.status}]  {one_line(n.summary, 120)}"
            for n in s.nodes
        ]
    lines += [f"      (missing node {one_line(n, 40)})" for n in p.missing_nodes]
    pattern_id = p.pattern.pattern_id if p.pattern else p.metadata.get("librarian-pattern", "?")
    if p.pattern is not None:
        lines.append(
            f"  → pattern {one_line(pattern_id, 40)}  {one_line(p.pattern.title, 100)}"
            f"  ({p.pattern.kind}, {p.pattern.status}, {p.pattern.sessions} sessions,"
            f" confidence {p.pattern.confidence:.2f})"
        )
    else:
        lines.append(f"  → pattern {one_line(pattern_id, 40)}  (not in this library)")
    if p.draft is not None:
        by = f" by {one_line(p.draft.decided_by, 40)}" if p.draft.decided_by else ""
        lines.append(
            f"    → draft {one_line(p.draft.draft_id, 40)}  {p.draft.status}{by}"
            f" {p.draft.decided_at[:10]}".rstrip()
        )
    lines.append(f"      → skill {one_line(x.name, 80)}  [{x.status}]  v{x.current_version}")
    return lines
