"""`librarian verify`, `rebuild` and `config`: checking, regenerating and configuring the
library itself."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app.cli.common import CliError, Subcommands, add_command, emit, open_library, say
from store.config import Config
from store.errors import LibrarianError
from store.paths import LibraryPaths, resolve_library_dir
from store.text import one_line, safe_json

if TYPE_CHECKING:
    from store.verify import VerifyReport


def register(sub: Subcommands) -> None:
    """Add `verify`, `rebuild` and `config`."""
    add_command(
        sub,
        "verify",
        "check the library against its event log",
        cmd_verify,
        json_flag=True,
        reads=True,
    )
    add_command(
        sub,
        "rebuild",
        "regenerate projections and the vector index from events",
        cmd_rebuild,
        json_flag=True,
    )
    config = add_command(sub, "config", "read or change config.toml", cmd_config)
    config.add_argument("action", choices=["get", "set", "path", "show"])
    config.add_argument("key", nargs="?")
    config.add_argument("value", nargs="?")


def cmd_verify(args: argparse.Namespace) -> int:
    from store.verify import unopened, verify  # numpy: `librarian hook` must not load it

    try:
        library = open_library(args)
    except LibrarianError as exc:  # a database that cannot be opened is a failed check
        report = unopened(LibraryPaths(resolve_library_dir(args.library)).head, str(exc))
    else:
        with library:
            report = verify(library.kernel)
    emit(args, report.as_dict(), verify_text(report))
    return 0 if report.ok else 1


def cmd_rebuild(args: argparse.Namespace) -> int:
    from store.verify import rebuild  # numpy: `librarian hook` must not load it

    with open_library(args) as library:
        counts = rebuild(library.kernel)
    emit(args, counts, f"replayed {counts['events']} events; indexed {counts['surfaces']} surfaces")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    paths = LibraryPaths(resolve_library_dir(args.library))
    config = Config(paths.config, create=args.action == "set")  # reading writes nothing
    if args.action == "path":
        say(str(paths.config))
    elif args.action == "show":
        say(config.text(), end="")
    elif args.action == "get":
        if not args.key:
            raise CliError("config get needs a KEY")
        value = config.get(args.key)
        if value is None:
            raise CliError(f"no config key {args.key!r}")
        say(safe_json(value, indent=None) if not isinstance(value, str) else value)
    else:
        if not args.key or args.value is None:
            raise CliError("config set needs KEY and VALUE")
        say(safe_json(config.set(args.key, args.value), indent=None))
    return 0


def verify_text(report: VerifyReport) -> str:
    lines = []
    for check in report.checks:
        lines.append(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
        lines += [f"       {one_line(p, 200)}" for p in check.problems]
    if report.head is not None:  # for comparing with a copy kept elsewhere
        lines.append(f"chain head: {report.head.events} events, last hash {report.head.hash}")
    lines.append("library is intact" if report.ok else "library has problems (see above)")
    return "\n".join(lines)
