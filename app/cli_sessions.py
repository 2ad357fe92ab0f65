"""`librarian` commands for sessions, nodes, review and Claude Code hooks."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import hook_main
from app.cli import CliError, emit, open_library, say
from store.errors import LibrarianError
from store.hooks import read_stdin
from store.models import NODE_STATUSES, UpgradePlan
from store.paths import resolve_library_dir
from store.process import own_module
from store.review import ORDERS

#: Exit status when the person declined to send: nothing was ingested or sent.
DECLINED = 3


def add_parsers(sub: Any, add: Any) -> None:
    """Register the subcommands on the main parser (`add` is the CLI's `_add` helper)."""
    ingest = add(sub, "ingest", "ingest Claude Code transcripts (files or folders)", True)
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
    sessions = add(sub, "sessions", "list ingested sessions", True)
    sessions.add_argument("--project", help="only this project (cwd)")
    session = add(sub, "session", "one session: summary and reasoning DAG", True)
    session.add_argument("session_id")
    nodes = add(sub, "nodes", "list reasoning nodes", True)
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
    review = add(sub, "review", "approve, reject, edit or re-scope nodes (audited)", True)
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
    audit = add(sub, "audit", "review decisions, newest first", True)
    audit.add_argument("--node", help="only this node")
    audit.add_argument("--limit", type=int, default=200)
    hook = add(sub, "hook", "entry point for Claude Code hooks (reads hook JSON on stdin)")
    hook.add_argument("action", choices=["stop", "session-end", "session-start", "drain"])
    hook.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help="drain: wait this long first (lets the hook exit, batches turns)",
    )
    hooks = add(sub, "hooks", "install or remove the librarian's Claude Code hooks")
    hooks.add_argument("action", choices=["install", "uninstall"])
    where = hooks.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="~/.claude/settings.json (default)")
    where.add_argument("--project", action="store_true", help=".claude/settings.json here")
    hooks.add_argument("--dry-run", action="store_true", help="show the diff, change nothing")


def cmd_ingest(
    args: argparse.Namespace,
    read: Callable[[str], str] = input,
    make_client: Callable[[Any], Any] | None = None,
) -> int:
    """Ingest; with `--llm`, show what the cold tier would send and ask before sending it
    (`read` answers the question, `make_client` builds the LLM client: tests pass theirs)."""
    from app import render

    for path in args.paths:
        if not path.exists():
            raise LibrarianError(f"{path} does not exist")
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
                emit(args, render.upgrade_plan_data(plan), render.upgrade_plan_text(plan))
                return 0
            if not _confirmed(args, plan, read):
                say("nothing ingested, nothing sent", file=sys.stderr)
                return DECLINED
        report = library.ingest(args.paths or None, llm=client, again=args.again)
    emit(args, render.plain(report), render.ingest_text(report))
    return 0


def _confirmed(args: argparse.Namespace, plan: UpgradePlan, read: Callable[[str], str]) -> bool:
    """Show the estimate before anything is sent; ask on a terminal unless `--yes`. Without a
    terminal (or with `--json`) and without `--yes`, refuse: nothing is ingested or sent."""
    from app import render

    text = render.upgrade_plan_text(plan)
    if args.yes or not plan.calls:
        say(text, file=sys.stderr if args.json else None)
        return True
    if args.json or (read is input and not sys.stdin.isatty()):
        raise CliError(
            "--llm sends transcripts to the model: confirm with --yes (or look first with"
            " --dry-run)"
        )
    say(text)
    try:
        answer = read(f"send {plan.calls} calls to {plan.model}? [y/N] ").strip().lower()
    except EOFError:
        answer = ""
    return answer in ("y", "yes")


def _llm_client(library: Any) -> Any:
    from store.ingest.cold import ColdTierUnavailable, client_from_config

    try:
        return client_from_config(library.config)
    except ColdTierUnavailable as exc:
        raise LibrarianError(f"--llm: {exc}") from exc


def cmd_sessions(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        rows = library.sessions(args.project)
    emit(args, [render.plain(r) for r in rows], render.sessions_text(rows))
    return 0


def cmd_session(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        summary = library.session(args.session_id)
        nodes, edges = library.session_graph(args.session_id)
    data = {
        "session": render.plain(summary),
        "nodes": [render.plain(n) for n in nodes],
        "edges": [render.plain(e) for e in edges],
    }
    emit(args, data, render.session_text(summary, nodes, edges))
    return 0


def cmd_nodes(args: argparse.Namespace) -> int:
    from app import render
    from store.review import valid_type

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
    emit(args, [render.plain(n) for n in rows], render.nodes_text(rows))
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        if args.action == "undo":
            changed = library.undo_review()
        else:
            if not args.ids:
                raise LibrarianError(f"review {args.action} needs at least one node ID")
            changed = library.review(
                args.action, args.ids, reason=args.reason, summary=args.summary, scope=args.scope
            )
    text = render.nodes_text(changed) if changed else "nothing to undo: no decisions of yours"
    emit(args, [render.plain(n) for n in changed], text)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        rows = library.audit(args.limit, args.node)
    emit(args, [render.plain(r) for r in rows], render.audit_text(rows))
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    """Claude Code's hooks, exit 0 whatever happens. `stop`/`session-end`: queue the
    transcript and return at once (`app.hook_main`, which `librarian` reaches without this
    CLI). `session-start`: print the context to inject (or nothing)."""
    if args.action != "session-start":
        return hook_main.run(args.library, args.action, args.delay)
    try:
        from store.patterns.session_start import MAX_INPUT, run_hook

        raw = read_stdin(sys.stdin, MAX_INPUT)
        output = run_hook(resolve_library_dir(args.library), raw)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:
        pass
    return 0


def cmd_hooks(args: argparse.Namespace) -> int:
    from store import hooks

    scope = "project" if args.project else "user"
    path = hooks.settings_path(scope, Path.home(), Path.cwd(), os.environ)
    try:
        if args.action == "install":
            # this interpreter, isolated: a `PYTHONPATH=.` in the user's shell must not let
            # a repository's own `app/` run in the hook (see store/process.py)
            executable = own_module("app")
            library = resolve_library_dir(args.library)
            commands = {
                event: hooks.hook_command(executable, library, action)
                for event, action in hooks.EVENTS.items()
            }
            change = hooks.install(path, commands, dry_run=args.dry_run)
        else:
            change = hooks.uninstall(path, dry_run=args.dry_run)
    except ValueError as exc:
        raise LibrarianError(f"{path}: not valid JSON ({exc})") from exc
    if args.dry_run:
        say(change.diff or f"{path}: nothing to change")
    elif not change.changed:
        say(f"{path}: already up to date")
    else:
        saved = f" (previous file saved as {change.backup})" if change.backup else ""
        say(f"{path}: hooks {args.action}ed{saved}")
    return 0


COMMANDS = {
    "ingest": cmd_ingest,
    "sessions": cmd_sessions,
    "session": cmd_session,
    "nodes": cmd_nodes,
    "review": cmd_review,
    "audit": cmd_audit,
    "hook": cmd_hook,
    "hooks": cmd_hooks,
}
