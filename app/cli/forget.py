"""`librarian forget`: erase a node, a session or a text for good (audited), after showing
what goes and asking."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from app.cli.common import CliError, Subcommands, add_command, ask, emit, open_library, plain
from store.models import ForgetPlan, ForgetReport
from store.text import one_line

#: Exit status when the person declined: nothing was erased.
DECLINED = 3
#: Items listed before "… and N more".
SHOWN = 40


def register(sub: Subcommands) -> None:
    """Add `forget`."""
    forget = add_command(
        sub,
        "forget",
        "erase a node, a session or a text from the library for good (audited)",
        cmd_forget,
        json_flag=True,
    )
    forget.add_argument(
        "scope",
        choices=["node", "session", "text", "scrub"],
        help="what to forget (scrub: only clean the database files again)",
    )
    forget.add_argument("target", nargs="?", default="", help="node id, session id or text")
    forget.add_argument("--reason", default="", help="why (recorded; never the text itself)")
    forget.add_argument("--regex", action="store_true", help="text: TEXT is a Python regex")
    forget.add_argument("--ignore-case", action="store_true", help="text: ignore case")
    forget.add_argument(
        "--with-messages",
        action="store_true",
        help="node: also the archived transcript messages its evidence quoted",
    )
    forget.add_argument("--yes", action="store_true", help="do not ask before erasing")
    forget.add_argument("--dry-run", action="store_true", help="show what would go; change nothing")


def cmd_forget(args: argparse.Namespace, read: Callable[[str], str] = input) -> int:
    if args.scope == "scrub":
        with open_library(args) as library:
            clean, notes = library.scrub()
        emit(args, {"scrubbed": clean, "notes": list(notes)}, _scrub_text(clean, notes))
        return 0 if clean else 1
    if not args.target:
        raise CliError(f"forget {args.scope} needs a {'TEXT' if args.scope == 'text' else 'ID'}")
    options = {
        "regex": args.regex,
        "ignore_case": args.ignore_case,
        "with_messages": args.with_messages,
    }
    with open_library(args) as library:
        plan = library.forget_plan(args.scope, args.target, **options)
        if args.dry_run or plan.empty:
            emit(args, _plan_data(plan), plan_text(plan))
            return 0
        if not args.yes:
            if args.json or (not sys.stdin.isatty() and read is input):
                raise CliError("confirm with --yes (or look first with --dry-run)")
            print(plan_text(plan))
            if ask("erase all of this for good? [y/N] ", read).lower() not in ("y", "yes"):
                print("nothing erased", file=sys.stderr)
                return DECLINED
        report = library.forget(args.scope, args.target, reason=args.reason, **options)
    emit(args, _report_data(report), report_text(report))
    return 0


def plan_text(plan: ForgetPlan) -> str:
    """What goes, item by item (previews mask a searched text), and what stays."""
    if plan.empty:
        return "nothing to forget: " + (
            "no text matches" if plan.scope == "text" else "it is forgotten already"
        )
    lines = [f"forget {plan.scope}{' ' + plan.target if plan.target else ''}: {_counts(plan)}"]
    lines += [
        f"  {i.what:<9} {one_line(i.where, 60):<60} {one_line(i.preview, 80)}"
        for i in plan.items[:SHOWN]
    ]
    if len(plan.items) > SHOWN:
        lines.append(f"  … and {len(plan.items) - SHOWN} more")
    if plan.nodes:
        lines.append(f"nodes forgotten (out of the queue, patterns and search): {_ids(plan.nodes)}")
    if plan.patterns:
        lines.append(f"patterns dissolved (consolidate rebuilds them): {_ids(plan.patterns)}")
    if plan.redactions:
        lines.append(f"events from before forgetting existed, redacted in place: {plan.redactions}")
    if plan.skills:
        lines.append(
            "SKILL.md files that may contain it are not changed (edit or retire them): "
            + ", ".join(one_line(s, 60) for s in plan.skills)
        )
    return "\n".join(lines)


def report_text(report: ForgetReport) -> str:
    plan = report.plan
    if not report.seq:
        return plan_text(plan)
    lines = [
        f"erased {report.blobs} blobs ({_counts(plan)}); forgot {len(plan.nodes)} nodes,"
        f" dissolved {len(plan.patterns)} patterns, redacted {report.redacted} old events,"
        f" dropped {report.embeddings} cached vectors (event {report.seq})",
        _scrub_text(report.scrubbed, report.notes),
    ]
    if plan.skills:
        lines.append("not changed (files): " + ", ".join(one_line(s, 60) for s in plan.skills))
    return "\n".join(lines)


def _scrub_text(clean: bool, notes: tuple[str, ...]) -> str:
    head = (
        "database files scrubbed (WAL checkpointed and truncated, VACUUM)"
        if clean
        else "database files not fully scrubbed"
    )
    return "\n".join([head, *(f"  note {one_line(n, 200)}" for n in notes)])


def _counts(plan: ForgetPlan) -> str:
    counts: dict[str, int] = {}
    for item in plan.items:
        counts[item.what] = counts.get(item.what, 0) + 1
    parts = [f"{n} {_plural(what, n)}" for what, n in sorted(counts.items())]
    sessions = f" in {len(plan.sessions)} {_plural('session', len(plan.sessions))}"
    sessions = sessions if plan.sessions else ""
    return (", ".join(parts) or "no text") + sessions


def _plural(word: str, count: int) -> str:
    """`summary` -> `summaries`, `evidence` -> `evidence`, `query` -> `queries`."""
    if count == 1 or word == "evidence":
        return word
    return word[:-1] + "ies" if word.endswith(("ry", "ly")) else word + "s"


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:8])
    return shown + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")


def _plan_data(plan: ForgetPlan) -> dict[str, Any]:
    data: dict[str, Any] = plain(plan)
    return data


def _report_data(report: ForgetReport) -> dict[str, Any]:
    data: dict[str, Any] = plain(report)
    return data
