"""`librarian team …`: the team library through a PostgreSQL hub (store/team/).

`team hub --local DIR` runs a hub on this machine; `team init` creates its schema and roles;
`team member add` makes a teammate's login; `team push` / `team pull` move events; `team
review` decides staged items; `team status` and `team verify` report. Text that came from
the hub (summaries, names, reasons) is printed like any untrusted text: one line, escaped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    CliError,
    Subcommands,
    add_command,
    emit,
    open_library,
    say,
)
from store.config import Config
from store.paths import LibraryPaths, resolve_library_dir
from store.text import one_line, plural

if TYPE_CHECKING:
    from store.library import Library
    from store.models import Node
    from store.models.team import TeamStatus
    from store.team.status import TeamVerifyReport

#: Team commands that leave the library as it is (the others write, or do not open it).
READS = ("status", "verify", "review")
#: Team commands that never open the library.
NO_LIBRARY = ("hub", "init", "member")


def register(sub: Subcommands) -> None:
    """Add `team` and its subcommands."""
    team = add_command(
        sub,
        "team",
        "share with the team through a PostgreSQL hub (push, review, pull)",
        cmd_team,
        json_flag=True,
        reads=lambda args: getattr(args, "team_command", "") in READS,
    )
    commands = team.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    hub = commands.add_parser("hub", help="run a hub on this machine (embedded PostgreSQL)")
    hub.add_argument("--local", metavar="DIR", required=True, help="the hub's folder")
    hub.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (first start)")
    hub.add_argument("--run-as", metavar="USER", help="the server's user when run as root")
    hub.add_argument("--stop", action="store_true", help="stop the hub instead")
    init = commands.add_parser("init", help="create or upgrade the hub's schema and roles")
    init.add_argument("--hub", metavar="URL", help="an administrator's connection string")
    member = commands.add_parser("member", help="add or list the team's members")
    member.add_argument("action", choices=["add", "list"])
    member.add_argument("name", nargs="?")
    member.add_argument("--reviewer", action="store_true", help="may decide staged items")
    member.add_argument("--hub", metavar="URL", help="an administrator's connection string")
    member.add_argument(
        "--passfile", metavar="FILE", help="add the new password to this libpq password file"
    )
    commands.add_parser("push", help="push approved nodes, decisions and drafts to the hub")
    pull = commands.add_parser("pull", help="pull what the team approved")
    pull.add_argument("--full", action="store_true", help="read the hub from the start again")
    pull.add_argument(
        "--no-consolidate", action="store_true", help="do not consolidate patterns after"
    )
    commands.add_parser("status", help="hub, cursors, queues, what waits for you")
    commands.add_parser("verify", help="check the hub and this library's anchored history")
    review = commands.add_parser("review", help="the team review queue: list, show, decide")
    review.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "show", "approve", "reject", "edit", "scope"],
    )
    review.add_argument("ids", nargs="*", metavar="ID")
    review.add_argument("--reason", default="")
    review.add_argument("--summary", default="")
    review.add_argument("--scope", default="")
    review.add_argument(
        "--status", default="pending", choices=["pending", "approved", "rejected", "all"]
    )
    review.add_argument("--limit", type=int, default=50)
    review.add_argument("--drafts", action="store_true", help="SKILL.md drafts instead of nodes")
    review.add_argument(
        "--all", action="store_true", help="decide every item waiting for you (up to --limit)"
    )
    for parser in commands.choices.values():  # `team ACTION --json` as well as `team --json`
        parser.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable"
        )


def cmd_team(args: argparse.Namespace) -> int:
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {
        "hub": _hub,
        "init": _init,
        "member": _member,
        "push": _push,
        "pull": _pull,
        "status": _status,
        "verify": _verify,
        "review": _review,
    }
    return handlers[args.team_command](args)


def _config(args: argparse.Namespace) -> Config:
    return Config(LibraryPaths(resolve_library_dir(args.library)).config, create=False)


def _admin(args: argparse.Namespace) -> str:
    from store.team.connection import check_conninfo, configured_hub

    if args.hub:
        check_conninfo(args.hub)
        return str(args.hub)
    return configured_hub(_config(args))


# -- the hub itself ----------------------------------------------------------------------------


def _hub(args: argparse.Namespace) -> int:
    from store.team import server

    folder = Path(args.local)
    if args.stop:
        stopped = server.stop(folder)
        emit(args, {"stopped": stopped}, "stopped" if stopped else "the hub was not running")
        return 0
    hub = server.start(folder, port=args.port, run_as=args.run_as)
    data = {"folder": str(hub.folder), "port": hub.port, "admin": hub.url(), "run_as": hub.run_as}
    emit(
        args,
        data,
        f"hub running on 127.0.0.1:{hub.port} (data in {hub.folder}, server user"
        f" {hub.run_as})\nadministrator: {hub.url()}\n"
        f"next: librarian team init --hub '{hub.url()}'\n"
        f"stop: librarian team hub --local {hub.folder} --stop",
    )
    return 0


def _init(args: argparse.Namespace) -> int:
    from store.team import hub as hub_api
    from store.team.connection import connect, describe, hub_errors

    conninfo = _admin(args)
    conn = connect(conninfo)
    try:
        with hub_errors():
            report = hub_api.init(conn)
    finally:
        conn.close()
    text = f"hub {describe(conninfo)}: schema {report.after}" + (
        f" (applied {', '.join(map(str, report.applied))})" if report.applied else ", up to date"
    )
    emit(args, asdict(report), text)
    return 0


def _member(args: argparse.Namespace) -> int:
    from store.team import hub as hub_api
    from store.team import server
    from store.team.connection import connect, describe, hub_errors, parts

    conninfo = _admin(args)
    conn = connect(conninfo)
    try:
        with hub_errors():
            if args.action == "list":
                found = hub_api.members(conn)
                emit(
                    args,
                    [{"name": n, "reviewer": r} for n, r in found],
                    "\n".join(f"{n}{'  (reviewer)' if r else ''}" for n, r in found)
                    or "no members yet",
                )
                return 0
            if not args.name:
                raise CliError("member add needs a NAME")
            password = hub_api.add_member(conn, args.name, reviewer=args.reviewer)
    finally:
        conn.close()
    given = parts(conninfo)
    host, port = given.get("host", "localhost"), int(given.get("port", "5432"))
    database = given.get("dbname", "")
    role = "reviewer" if args.reviewer else "contributor"
    if args.passfile:
        server.add_password(Path(args.passfile), host, port, database, args.name, password)
        say(f"{args.name} is a {role} on {describe(conninfo)}; password added to {args.passfile}")
    else:
        say(
            f"{args.name} is a {role} on {describe(conninfo)}. Their password (shown once; it"
            f" belongs in their ~/.pgpass as {host}:{port}:{database}:{args.name}:PASSWORD):"
        )
        say(password)
    return 0


# -- moving events -----------------------------------------------------------------------------


def _progress(args: argparse.Namespace, verb: str) -> Callable[[int, int], None] | None:
    if args.json or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        print(f"\r{verb} {done:,}/{total:,}", end=end, file=sys.stderr, flush=True)

    return show


def _push(args: argparse.Namespace) -> int:
    from store.team.push import push

    with open_library(args) as library:
        report = push(library, progress=_progress(args, "pushed"))
    text = report.describe()
    emit(args, asdict(report), text)
    return 0


def _pull(args: argparse.Namespace) -> int:
    from store.team.drafts import install
    from store.team.pull import pull

    with open_library(args) as library:
        report = pull(library, full=args.full, progress=_progress(args, "pulled"))
        consolidated = None
        if report.nodes_changed and not args.no_consolidate:
            consolidated = library.consolidate()
        installed, problems = install(library, _scanner(library))
    for line in report.skipped + problems:
        say(f"librarian: {line}", file=sys.stderr)
    data = {**asdict(report), "installed": installed, "install_problems": problems}
    if consolidated is not None:
        data["consolidation"] = asdict(consolidated)
    text = report.describe()
    if report.events or installed:
        if consolidated is not None:
            text += f"\nconsolidated: {consolidated.patterns} patterns ({consolidated.created} new)"
        if installed:
            text += "\ninstalled team skills: " + ", ".join(one_line(n, 64) for n in installed)
    emit(args, data, text)
    return 0


def _scanner(library: Library) -> Callable[[Path], object]:
    def scan(root: Path) -> object:
        import os

        configured = {os.path.realpath(r.path) for r in library.configured_roots()}
        if os.path.realpath(root) in configured:
            return library.scan()
        return library.scan([root])

    return scan


# -- reporting ---------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    from store.team.status import team_status

    with open_library(args) as library:
        status = team_status(library)
    emit(args, status.as_dict(), status_text(status))
    return 0 if status.reachable or not status.configured else 1


def status_text(s: TeamStatus) -> str:
    """`librarian team status` as text."""
    if not s.configured:
        return f"{s.problem}\nlocal: {plural(s.queued, 'event')} would be pushed"
    lines = [f"hub: {s.hub} — " + ("reachable" if s.reachable else f"unreachable: {s.problem}")]
    if s.reachable:
        role = "reviewer" if s.reviewer else "contributor"
        lines.append(
            f"you: {s.user} ({role}); hub schema {s.hub_schema}; {s.libraries} libraries,"
            f" {s.hub_events} events"
        )
        lines.append(f"waiting for you to review: {s.waiting_for_me} (staged in all: {s.staged})")
        mine = ", ".join(f"{v} {k}" for k, v in sorted(s.mine_in_hub.items())) or "none"
        lines.append(f"your items in the hub: {mine}")
    lines.append(
        f"push: {plural(s.queued, 'event')} queued; last push {s.pushed_at or 'never'}"
        f" (through event {s.push_seq})"
    )
    behind = f"; up to {plural(s.behind, 'newer hub event')}" if s.reachable and s.behind else ""
    lines.append(f"pull: last {s.pulled_at or 'never'} (cursor {s.pull_cursor}){behind}")
    lines.append(
        f"team items here: {s.received} from teammates, {sum(s.own.values())} of yours;"
        f" {plural(s.conflicts, 'overruled decision')} on record"
    )
    if s.library_id:
        lines.append(f"library id: {s.library_id}; head anchored at event {s.anchored}")
    return "\n".join(lines)


def _verify(args: argparse.Namespace) -> int:
    from store.team.status import team_verify

    with open_library(args) as library:
        report = team_verify(library)
    emit(args, report.as_dict(), verify_text(report))
    return 0 if report.ok else 1


def verify_text(report: TeamVerifyReport) -> str:
    return "\n".join(report.lines())


# -- team review -------------------------------------------------------------------------------


def _review(args: argparse.Namespace) -> int:
    from store.team.connection import configured_hub
    from store.team.review import TeamQueue

    queue = TeamQueue(configured_hub(_config(args)), kind="draft" if args.drafts else "node")
    try:
        if args.action == "list":
            status = None if args.status == "all" else args.status
            nodes = queue.nodes(status=status, order="best", limit=args.limit)
            total = queue.node_count(status=status)
            emit(args, [asdict(n) for n in nodes], _list_text(nodes, total, args.status))
            return 0
        if args.all and args.action != "show":
            args.ids = [n.node_id for n in queue.nodes(status="pending", limit=args.limit)]
            if not args.ids:
                emit(args, [], "nothing is waiting for you")
                return 0
        if not args.ids:
            raise CliError(f"team review {args.action} needs an ID (or --all)")
        if args.action == "show":
            node = queue.node(args.ids[0])
            history = queue.history(node.node_id)
            data: Any = {"node": asdict(node), "history": history}
            emit(args, _plain_history(data), _show_text(node, history))
            return 0
        decided = queue.review(
            args.action, args.ids, reason=args.reason, summary=args.summary, scope=args.scope
        )
        emit(
            args,
            [asdict(n) for n in decided],
            "\n".join(f"{n.node_id}: {n.status} ({n.scope})" for n in decided),
        )
        return 0
    finally:
        queue.close()


def _list_text(nodes: list[Node], total: int, status: str) -> str:
    if not nodes:
        return f"no {status} team items"
    lines = [f"{plural(total, f'{status} team item')}, best first:"]
    for n in nodes:
        lines.append(
            f"{n.node_id}  {n.type:<13} {n.scope:<7} {one_line(n.developer, 40)}  "
            f"{one_line(n.summary, 100)}"
        )
    return "\n".join(lines)


def _show_text(node: Node, history: list[dict[str, Any]]) -> str:
    lines = [
        f"{node.node_id}  {node.type}  {node.status}  {node.scope}  project"
        f" {one_line(node.project, 80)}",
        f"by {one_line(node.developer, 80)}; session {one_line(node.session_id, 40)}",
        f"summary: {one_line(node.summary, 500)}",
        f"evidence: {one_line(node.evidence, 500)}",
        "history:",
    ]
    for h in history:
        state = "applied" if h["applied"] else f"overruled by hub event {h['overruled_by']}"
        values = {k: v for k, v in (h["values"] or {}).items() if k != "status"}
        lines.append(
            f"  {h['id']}  {h['at']:%Y-%m-%d %H:%M}  {one_line(h['actor'], 40)}  {h['kind']}"
            f"  {state}  {one_line(str(values), 200) if values else ''}"
        )
    return "\n".join(lines)


def _plain_history(data: dict[str, Any]) -> dict[str, Any]:
    for h in data["history"]:
        h["at"] = h["at"].isoformat()
    return data
