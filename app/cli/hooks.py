"""`librarian hook` (what Claude Code's hooks run) and `librarian hooks` (installing them).

`librarian hook stop|session-end|drain` normally never gets here: `app.entry` hands those to
`app.hook_main` before this package is imported. Arguments it cannot take on its short path
(and `session-start`, which answers with context) come through this module."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from app import hook_main
from app.cli.common import Subcommands, add_command, say
from store import hooks
from store.errors import LibrarianError
from store.paths import resolve_library_dir
from store.patterns.session_start import MAX_INPUT, run_hook
from store.process import own_module


def register(sub: Subcommands) -> None:
    """Add `hook` and `hooks`."""
    hook = add_command(
        sub, "hook", "entry point for Claude Code hooks (reads hook JSON on stdin)", cmd_hook
    )
    hook.add_argument(
        "action",
        choices=[
            "stop",
            "session-end",
            "session-start",
            "user-prompt",
            "drain",
            "prompt-server",
            "prompt-stop",
        ],
        help="user-prompt: skills that fit the prompt (UserPromptSubmit); prompt-server: the"
        " resident ranker it asks (started on demand); prompt-stop: ask that ranker to leave",
    )
    hook.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help="drain: wait this long first (lets the hook exit, batches turns)",
    )
    installer = add_command(
        sub,
        "hooks",
        "install or remove the librarian's Claude Code hooks (Stop, SessionEnd, SessionStart,"
        " UserPromptSubmit)",
        cmd_hooks,
    )
    installer.add_argument("action", choices=["install", "uninstall"])
    where = installer.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="~/.claude/settings.json (default)")
    where.add_argument("--project", action="store_true", help=".claude/settings.json here")
    installer.add_argument("--dry-run", action="store_true", help="show the diff, change nothing")


def cmd_hook(args: argparse.Namespace) -> int:
    """Claude Code's hooks, exit 0 whatever happens. `stop`/`session-end`: queue the
    transcript and return at once; `user-prompt`: the skills that fit the prompt (both in
    `app.hook_main`, which `librarian` reaches without this CLI). `session-start`: print the
    context to inject (or nothing). `prompt-server`/`prompt-stop`: the resident ranker."""
    if args.action in ("prompt-server", "prompt-stop"):
        # the ranker loads the library and the model: only its own process imports it
        from app import prompt_server

        root = resolve_library_dir(args.library)
        if args.action == "prompt-stop":
            say("ranker stopped" if prompt_server.stop(root) else "no ranker was running")
            return 0
        return prompt_server.serve(root)
    if args.action != "session-start":
        return hook_main.run(args.library, args.action, args.delay)
    try:
        raw = hooks.read_stdin(sys.stdin, MAX_INPUT)
        output = run_hook(resolve_library_dir(args.library), raw)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:
        pass
    return 0


def cmd_hooks(args: argparse.Namespace) -> int:
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
