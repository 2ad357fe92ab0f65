"""What every `librarian` command shares: registering a subcommand, opening the library,
printing, asking, and turning errors into exit codes.

Everything printed goes through `emit` or `say`, which make untrusted text (from transcripts,
skill files, paths, arguments) safe for a terminal: control and invisible characters become
visible escapes in text, and `\\uXXXX` escapes in `--json` output. Renderers also fold each
untrusted field to one line (`store.text.one_line`), so a field cannot forge lines of its own.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeAlias

from store.errors import LibrarianError
from store.paths import resolve_library_dir
from store.text import neutralise, one_line, safe_json

if TYPE_CHECKING:
    from store.library import Library

#: A command: the parsed arguments in, the exit status out.
Command = Callable[[argparse.Namespace], int]
#: Whether a command, given its arguments, leaves the library as it is.
ReadsOnly = Callable[[argparse.Namespace], bool]
#: What `ArgumentParser.add_subparsers` returns; domain modules add their commands to it.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

#: Exit status of a command that failed (an error was printed on stderr).
FAILED = 2


class CliError(LibrarianError):
    """An error reported as one line with a non-zero exit."""


def add_command(
    sub: Subcommands,
    name: str,
    help_text: str,
    command: Command,
    *,
    json_flag: bool = False,
    reads: bool | ReadsOnly = False,
) -> argparse.ArgumentParser:
    """Add the subcommand `name`, run by `command`; `reads` says whether it only reads the
    library (True, or a test of its arguments), which opens the library read-only."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    # `librarian COMMAND --library P` works as well as `librarian --library P COMMAND`; unset
    # here, the value given before the command stands.
    parser.add_argument(
        "--library", metavar="PATH", default=argparse.SUPPRESS, help="library directory"
    )
    if json_flag:
        parser.add_argument("--json", action="store_true", help="machine-readable output")
    check = reads if callable(reads) else (_always if reads else _never)
    parser.set_defaults(command_fn=command, reads_only_fn=check)
    return parser


def actions(*names: str) -> ReadsOnly:
    """Reads only when the command's `action` argument is one of `names`."""
    return lambda args: getattr(args, "action", None) in names


def _always(args: argparse.Namespace) -> bool:
    return True


def _never(args: argparse.Namespace) -> bool:
    return False


def reads_only(args: argparse.Namespace) -> bool:
    """Whether the command in `args` leaves the library as it is."""
    check: ReadsOnly = getattr(args, "reads_only_fn", _never)
    return check(args)


def open_library(args: argparse.Namespace) -> Library:
    """The library `--library` names; read-only for commands that only read (SQLite
    `mode=ro`: no migration, no config or folder created, the vector index in memory only)."""
    return library_at(resolve_library_dir(args.library), read_only=reads_only(args))


def library_at(root: Path, *, read_only: bool = False) -> Library:
    """The library in the folder `root`."""
    from store.library import Library  # numpy and hnswlib: `librarian hook` must not load them

    return Library(root, read_only=read_only)


def run(command: Command, args: argparse.Namespace) -> int:
    """Run `command`; what goes wrong becomes one line on stderr and an exit status."""
    try:
        return command(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): not an error
        return 0
    except (LibrarianError, OSError) as exc:
        return fail(str(exc))
    except sqlite3.Error as exc:  # damage found after opening (a truncated or torn file)
        return fail(f"the library database cannot be read: {exc}")
    except Exception as exc:
        if os.environ.get("LIBRARIAN_DEBUG"):
            raise
        return fail(f"unexpected {type(exc).__name__}: {exc} (LIBRARIAN_DEBUG=1 shows where)")


def fail(message: str) -> int:
    """Print `librarian: error: MESSAGE` on stderr; the exit status of a failure."""
    say(f"librarian: error: {neutralise(message, keep_newlines=False)}", file=sys.stderr)
    return FAILED


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print `data` as JSON with `--json`, else `text`; either way safe for a terminal."""
    if getattr(args, "json", False):
        print(safe_json(data))
    else:
        say(text)


def say(text: str, file: TextIO | None = None, end: str = "\n") -> None:
    """Print text with control and invisible characters shown as escapes (lines kept)."""
    print(neutralise(text), file=file, end=end)


def plain(value: Any) -> Any:
    """A dataclass as JSON-ready data."""
    return asdict(value)


def ask(question: str, read: Callable[[str], str]) -> str:
    """The answer to `question`, stripped; empty when input has ended."""
    try:
        return read(question).strip()
    except EOFError:
        return ""


def short_id(session_id: str) -> str:
    """The first 8 characters of a session id (as git shortens hashes), printable."""
    return one_line(session_id[:8], 8)
