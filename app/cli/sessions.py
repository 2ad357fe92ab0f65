"""`librarian ingest`, `sessions`, `session`, `nodes`, `review` and `audit`: transcripts in,
reasoning nodes out, and the decisions people make about them."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    CliError,
    Subcommands,
    add_command,
    ask,
    emit,
    open_library,
    plain,
    say,
    short_id,
)
from store.errors import LibrarianError
from store.files import regular_file_problem
from store.ingest.cold import ColdTierUnavailable, client_from_config
from store.models import (
    NODE_STATUSES,
    AuditEntry,
    Edge,
    Node,
    SessionSummary,
    UpgradePlan,
    UpgradeReport,
)
from store.sessions.review import ORDERS, valid_type
from store.text import one_line
from widgets.dag_layout import layout_dag, render_text

if TYPE_CHECKING:
    from store.ingest.pipeline import IngestReport
    from store.library import Library

#: Exit status when the person declined to send: nothing was ingested or sent.
DECLINED = 3
#: Sessions listed one by one in an estimate before "… and N more".
PLAN_SHOWN = 20


def register(sub: Subcommands) -> None:
    """Add `ingest`, `sessions`, `session`, `nodes`, `review` and `audit`."""
    ingest = add_command(
        sub,
        "ingest",
        "ingest Claude Code transcripts (files or folders)",
        cmd_ingest,
        json_flag=True,
    )
    ingest.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="JSONL files or folders (default: ~/.claude/projects)",
    )
    ingest.add_argument(
        "--llm",
        action="store_true",
        help="then let the cold tier (LLM) read every session under PATH it has not read yet,"
        " changed or not; shows the token estimate and asks first (needs the anthropic SDK and"
        " an API key)",
    )
    ingest.add_argument(
        "--again",
        action="store_true",
        help="--llm: also send sessions this model and prompt version already read",
    )
    ingest.add_argument(
        "--yes", action="store_true", help="--llm: send without asking (scripts, no terminal)"
    )
    ingest.add_argument(
        "--dry-run",
        action="store_true",
        help="--llm: show the token estimate and the calls it would make; ingest and send nothing",
    )
    sessions = add_command(
        sub, "sessions", "list ingested sessions", cmd_sessions, json_flag=True, reads=True
    )
    sessions.add_argument("--project", help="only this project (cwd)")
    session = add_command(
        sub,
        "session",
        "one session: summary and reasoning DAG",
        cmd_session,
        json_flag=True,
        reads=True,
    )
    session.add_argument("session_id")
    nodes = add_command(sub, "nodes", "list reasoning nodes", cmd_nodes, json_flag=True, reads=True)
    nodes.add_argument("--status", choices=list(NODE_STATUSES))
    nodes.add_argument("--type", dest="type_", metavar="TYPE")
    nodes.add_argument("--project")
    nodes.add_argument("--session")
    nodes.add_argument(
        "--order",
        choices=list(ORDERS),
        default="oldest",
        help="best: informativeness × confidence first (the review queue's order)",
    )
    nodes.add_argument("--limit", type=int, default=None)
    review = add_command(
        sub,
        "review",
        "approve, reject, edit or re-scope nodes (audited)",
        cmd_review,
        json_flag=True,
    )
    review.add_argument(
        "action", choices=["approve", "reject", "edit", "scope", "unsuppress", "undo"]
    )
    review.add_argument("ids", nargs="*", metavar="ID")
    review.add_argument("--reason", default="", help="why (reject)")
    review.add_argument("--summary", default="", help="the new summary (edit)")
    review.add_argument(
        "--scope",
        default="",
        choices=["", "PROJECT", "TEAM"],
        help="target scope (scope; default: switch)",
    )
    audit = add_command(
        sub, "audit", "review decisions, newest first", cmd_audit, json_flag=True, reads=True
    )
    audit.add_argument("--node", help="only this node")
    audit.add_argument("--limit", type=int, default=200)


def cmd_ingest(
    args: argparse.Namespace,
    read: Callable[[str], str] = input,
    make_client: Callable[[Any], Any] | None = None,
) -> int:
    """Ingest; with `--llm`, show what the cold tier would send and ask before sending it
    (`read` answers the question, `make_client` builds the LLM client: tests pass theirs)."""
    for path in args.paths:
        if not path.exists():
            raise LibrarianError(f"{path} does not exist")
        if not path.is_dir() and regular_file_problem(path):  # a FIFO would block the read
            raise LibrarianError(f"{path}: {regular_file_problem(path)}")
    if not args.llm:
        given = [f for f in ("again", "yes", "dry_run") if getattr(args, f)]
        if given:
            raise CliError(f"--{given[0].replace('_', '-')} goes with --llm")
    with open_library(args) as library:
        client = None
        if args.llm:
            if not args.dry_run:
                client = (make_client or _llm_client)(library)
            plan = library.plan_upgrade(
                args.paths or None,
                again=args.again,
                model=getattr(client, "model", ""),
                context_tokens=getattr(client, "context_tokens", 0),
            )
            if args.dry_run:
                emit(args, upgrade_plan_data(plan), upgrade_plan_text(plan))
                return 0
            if not _confirmed(args, plan, read):
                say("nothing ingested, nothing sent", file=sys.stderr)
                return DECLINED
        report = library.ingest(args.paths or None, llm=client, again=args.again)
    emit(args, plain(report), ingest_text(report))
    return 0


def _confirmed(args: argparse.Namespace, plan: UpgradePlan, read: Callable[[str], str]) -> bool:
    """Show the estimate before anything is sent; ask on a terminal unless `--yes`. Without a
    terminal (or with `--json`) and without `--yes`, refuse: nothing is ingested or sent."""
    text = upgrade_plan_text(plan)
    if args.yes or not plan.calls:
        say(text, file=sys.stderr if args.json else None)
        return True
    if args.json or (read is input and not sys.stdin.isatty()):
        raise CliError(
            "--llm sends transcripts to the model: confirm with --yes (or look first with"
            " --dry-run)"
        )
    say(text)
    answer = ask(f"send {plan.calls} calls to {plan.model}? [y/N] ", read).lower()
    return answer in ("y", "yes")


def _llm_client(library: Library) -> Any:
    try:
        return client_from_config(library.config)
    except ColdTierUnavailable as exc:
        raise LibrarianError(f"--llm: {exc}") from exc


def cmd_sessions(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        rows = library.sessions(args.project)
    emit(args, [plain(r) for r in rows], sessions_text(rows))
    return 0


def cmd_session(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        summary = library.session(args.session_id)
        nodes, edges = library.session_graph(args.session_id)
    data = {
        "session": plain(summary),
        "nodes": [plain(n) for n in nodes],
        "edges": [plain(e) for e in edges],
    }
    emit(args, data, session_text(summary, nodes, edges))
    return 0


def cmd_nodes(args: argparse.Namespace) -> int:
    filters = {
        "status": args.status,
        "type_": valid_type(args.type_) if args.type_ else None,
        "project": args.project,
        "session": args.session,
        "order": args.order,
        "limit": args.limit,
    }
    with open_library(args) as library:
        rows = library.nodes(**filters)
    emit(args, [plain(n) for n in rows], nodes_text(rows))
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        if args.action == "undo":
            changed = library.undo_review()
        else:
            if not args.ids:
                raise LibrarianError(f"review {args.action} needs at least one node ID")
            changed = library.review(
                args.action, args.ids, reason=args.reason, summary=args.summary, scope=args.scope
            )
    text = nodes_text(changed) if changed else "nothing to undo: no decisions of yours"
    emit(args, [plain(n) for n in changed], text)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        rows = library.audit(args.limit, args.node)
    emit(args, [plain(r) for r in rows], audit_text(rows))
    return 0


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
            f"  {short_id(s.session_id)}  {s.windows:>3} windows  ~{s.input_tokens:>9,} tokens"
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
        f"{short_id(r.session_id)}  {one_line(r.started_at[:16], 16)}"
        f"  {one_line(r.project, 40):<40}"
        f" {one_line(r.branch, 24):<24} {r.turns:>3} turns {r.errors:>2} errors"
        f" {r.node_count:>3} nodes ({r.pending_count} pending)"
        for r in rows
    )


def session_text(summary: SessionSummary, nodes: list[Node], edges: list[Edge]) -> str:
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


def _counts(counts: dict[str, int]) -> str:
    """`name count` pairs, names from transcripts (record types) folded to one line."""
    return ", ".join(f"{one_line(k, 40)} {v}" for k, v in sorted(counts.items()))
