"""`librarian retire` (the retirement runbook, step by step) and `librarian runs`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    CliError,
    Subcommands,
    actions,
    add_command,
    ask,
    emit,
    open_library,
    plain,
    say,
)
from store.lifecycle.runbook_abandon import describe
from store.models import Run, StepPlan
from store.text import one_line

if TYPE_CHECKING:
    from store.library import Library

#: Exit status when a run stops before its end (declined, or waiting for an input).
PAUSED = 3


def register(sub: Subcommands) -> None:
    """Add `retire` and `runs`."""
    retire = add_command(
        sub,
        "retire",
        "the retirement runbook for a skill: 7 recorded steps, resumable",
        cmd_retire,
        json_flag=True,
    )
    retire.add_argument("skill")
    retire.add_argument("--reason", default="", help="why it is retired (needed to start)")
    retire.add_argument("--yes", action="store_true", help="do every step without asking")
    retire.add_argument("--successor", default="", help="step 5: the skill that replaces it")
    retire.add_argument(
        "--no-replacement",
        action="store_true",
        help="step 5: retire it without a repair or a successor",
    )
    retire.add_argument("--note", default="", help="step 5: a note on the repair")
    retire.add_argument("--cause", default="", help="step 7: the cause (default: the reason)")
    retire.add_argument("--scope", default="", help="step 7: the scope (default: computed)")
    retire.add_argument(
        "--regression",
        default="",
        help="step 7: the regression case to test for (default: the last failure)",
    )
    retire.add_argument(
        "--steps", type=int, default=7, help="stop after this step (e.g. 1: quarantine only)"
    )
    runs = add_command(
        sub,
        "runs",
        "runbook runs: list, show one, or abandon an open one",
        cmd_runs,
        json_flag=True,
        reads=actions("list", "show"),
    )
    runs.add_argument("action", nargs="?", choices=["list", "show", "abandon"], default="list")
    runs.add_argument("run_id", nargs="?", metavar="RUN")
    runs.add_argument("--all", action="store_true", help="list done and abandoned runs too")
    runs.add_argument("--reason", default="", help="why the run is abandoned")
    statuses = runs.add_mutually_exclusive_group()
    statuses.add_argument(
        "--keep-statuses",
        action="store_true",
        help="abandon: keep the statuses the run changed (default: put them back)",
    )
    statuses.add_argument(
        "--restore-statuses",
        action="store_true",
        help="abandon: put back the statuses the run changed without asking",
    )


def step_inputs(args: argparse.Namespace) -> dict[str, str]:
    inputs = {
        "successor": args.successor,
        "note": args.note,
        "cause": args.cause,
        "scope": args.scope,
        "regression": args.regression,
    }
    if args.no_replacement:
        inputs["mode"] = "none"
    return {k: v for k, v in inputs.items() if v}


def plan_text(plan: StepPlan) -> str:
    lines = [f"Step {plan.step}/7 · {plan.title}"]
    lines += [f"  will: {one_line(a, 300)}" for a in plan.actions]
    if plan.waiting:
        lines.append(f"  waiting: {one_line(plan.waiting, 300)}")
    return "\n".join(lines)


def run_text(run: Run) -> str:
    lines = [
        f"{run.run_id}  {one_line(run.skill_name, 60)}  {run.status}, step {run.step}/7"
        f"  (started {run.started_at[:16]} by {one_line(run.actor, 40)})",
        f"  reason: {one_line(run.reason, 200)}",
    ]
    for s in run.steps:
        mark = "✓" if s.done else ("→" if s.step == run.next_step else " ")
        detail = f"  {one_line(s.summary, 160)}" if s.done else ""
        lines.append(f"  {mark} {s.step} {s.title:<26}{detail}".rstrip())
    return "\n".join(lines)


def cmd_retire(args: argparse.Namespace, read: Callable[[str], str] = input) -> int:
    """Run (or resume) the skill's runbook: show each step's plan, then do it."""
    interactive = not args.yes
    if interactive and not sys.stdin.isatty() and read is input:
        say("not a terminal: pass --yes to run the steps without asking", file=sys.stderr)
        return 2
    inputs = step_inputs(args)
    with open_library(args) as library:
        run = library.open_run(args.skill)
        if run is None:
            reason = args.reason
            if not reason and interactive:
                reason = ask("Why is it retired? ", read)
            run = library.start_run(args.skill, reason)
            say(f"started {run.run_id} for {one_line(run.skill_name, 80)}")
        else:
            say(f"resuming {run.run_id} at step {run.next_step}/7")
        while run.next_step is not None and run.next_step <= args.steps:
            plan = library.plan_step(run.run_id, **inputs)
            if plan.waiting and interactive:
                say(plan_text(plan))
                answer = _input_for(plan, read)
                if not answer:
                    return _paused(args, library.run(run.run_id), plan)
                inputs.update(answer)
                plan = library.plan_step(run.run_id, **inputs)
            say(plan_text(plan))
            if plan.waiting:
                return _paused(args, run, plan)
            if interactive:
                choice = ask("  do it? [y]es / [n]o, stop here (resume later) ", read).lower()
                if choice not in ("y", "yes"):
                    return _paused(args, run, plan)
            run = library.run_step(run.run_id, plan.step, **inputs)
            say(f"  done: {one_line(run.steps[plan.step - 1].summary, 300)}")
        emit(args, _run_data(run), run_text(run))
    return 0 if run.status == "done" or run.step >= args.steps else PAUSED


def _input_for(plan: StepPlan, read: Callable[[str], str]) -> dict[str, str]:
    if plan.name == "repair":
        answer = ask(
            "  successor skill name, 'none' (no replacement), or enter to stop and repair"
            " SKILL.md first: ",
            read,
        )
        if answer.lower() == "none":
            return {"mode": "none"}
        return {"successor": answer} if answer else {}
    if plan.name == "incident":
        answer = ask("  regression case to test for (enter to stop): ", read)
        return {"regression": answer} if answer else {}
    return {}


def _paused(args: argparse.Namespace, run: Run, plan: StepPlan) -> int:
    why = plan.waiting or "stopped before it"
    say(
        f"paused at step {plan.step}/7 ({why}); resume with: {resume_hint(run, plan)}",
        file=sys.stderr,
    )
    return PAUSED


def resume_hint(run: Run, plan: StepPlan) -> str:
    """The command that resumes the run, with the options its waiting step needs."""
    command = f"librarian retire {one_line(run.skill_name, 80)}"
    if not plan.waiting:
        return command
    if plan.name == "repair":
        return (
            f"{command} --successor NAME, or {command} --no-replacement (or edit its SKILL.md,"
            f" `librarian scan`, then {command})"
        )
    if plan.name == "incident":
        return f"{command} --regression TEXT (optionally --cause TEXT --scope TEXT)"
    return command


def _run_data(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = plain(run)
    data["next_step"] = run.next_step
    return data


def cmd_runs(args: argparse.Namespace, read: Callable[[str], str] = input) -> int:
    with open_library(args) as library:
        if args.action == "list":
            found = library.runs(status=None if args.all else "open")
            text = "\n".join(
                f"{r.run_id}  {r.status:<9} step {r.step}/7  {one_line(r.skill_name, 50):<50}"
                f"  {r.updated_at[:16]}  {one_line(r.reason, 60)}"
                for r in found
            ) or ("no runs" if args.all else "no open runs (--all lists finished ones)")
            emit(args, [_run_data(r) for r in found], text)
            return 0
        if not args.run_id:
            raise CliError(f"runs {args.action} needs a RUN id")
        if args.action == "show":
            run = library.run(args.run_id)
            emit(args, _run_data(run), run_text(run))
        else:
            return _abandon(args, library, read)
    return 0


def _abandon(args: argparse.Namespace, library: Library, read: Callable[[str], str]) -> int:
    """Abandon a run, saying what it leaves behind: statuses put back (the default) or kept.
    On a terminal, without either flag, it shows both and asks."""
    found = library.left_behind(args.run_id)
    restore = not args.keep_statuses
    reason = args.reason
    asking = not (args.keep_statuses or args.restore_statuses or args.json)
    if asking and (sys.stdin.isatty() or read is not input):
        if not reason:
            reason = ask(f"Why is {args.run_id} abandoned? ", read)
        if found.restorable:
            say("Abandoning leaves, with the statuses put back:")
            say("\n".join(f"  - {one_line(line, 300)}" for line in describe(found, restore=True)))
            say("or, with them kept:")
            say("\n".join(f"  - {one_line(line, 300)}" for line in describe(found, restore=False)))
            choice = ask("  [r]estore them (default) / [k]eep them / [c]ancel: ", read).lower()
            if choice in ("c", "cancel"):
                say("nothing changed: the run stays open", file=sys.stderr)
                return PAUSED
            restore = choice not in ("k", "keep")
    run = library.abandon_run(args.run_id, reason, restore=restore)
    lines = describe(found, restore=restore)
    data = _run_data(run) | {
        "left_behind": lines,
        "restored": [c.name for c in found.restorable] if restore else [],
    }
    text = run_text(run) + "\n" + "\n".join(f"  - {one_line(line, 300)}" for line in lines)
    emit(args, data, text)
    return 0
