"""The `librarian` command: builds the parser from the domain modules and dispatches.

Each domain module registers its subcommands; the order of `DOMAINS` is the order
`librarian --help` lists them in. Without a command, `librarian` opens the app.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

from app.cli import (
    bench,
    catalog,
    enrich,
    forget,
    hooks,
    launch,
    lifecycle,
    lineage,
    maintenance,
    mcp,
    patterns,
    runbook,
    sessions,
    skills,
    team,
)
from app.cli.common import Command, run
from store.text import neutralise

#: The domain modules, in the order their commands are listed.
DOMAINS = (
    launch,
    skills,
    catalog,
    maintenance,
    bench,
    sessions,
    hooks,
    patterns,
    mcp,
    lifecycle,
    runbook,
    lineage,
    enrich,
    forget,
    team,
)


class _Parser(argparse.ArgumentParser):
    """argparse, with its error messages (which quote arguments) made safe to print."""

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        super().exit(status, neutralise(message) if message else message)


def build_parser() -> argparse.ArgumentParser:
    """The parser for every `librarian` command."""
    parser = _Parser(
        prog="librarian", description="Skill Librarian: curate what coding agents learn."
    )
    parser.add_argument(
        "--library",
        metavar="PATH",
        help="library directory (default: $LIBRARIAN_HOME, else the platform data dir)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for domain in DOMAINS:
        domain.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `librarian` with `argv` (default: the process's arguments); the exit status."""
    args = build_parser().parse_args(argv)
    command: Command = args.command_fn if args.command else launch.cmd_app
    return run(command, args)
