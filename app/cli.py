"""The `librarian` command. Thin: parses arguments, calls the store, prints results.

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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from store.errors import LibrarianError
from store.paths import default_demo_dir, resolve_library_dir
from store.text import neutralise, safe_json

Command = Callable[[argparse.Namespace], int]


class CliError(LibrarianError):
    """An error reported as one line with a non-zero exit."""


class _Parser(argparse.ArgumentParser):
    """argparse, with its error messages (which quote arguments) made safe to print."""

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        super().exit(status, neutralise(message) if message else message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="librarian", description="Skill Librarian: curate what coding agents learn."
    )
    parser.add_argument(
        "--library",
        metavar="PATH",
        help="library directory (default: $LIBRARIAN_HOME, else the platform data dir)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add(sub, "app", "open the app (the default)")
    demo = _add(sub, "demo", "build the demo library and open the app on it")
    demo.add_argument("--no-open", action="store_true", help="build only, do not open the app")
    demo.add_argument("--fresh", action="store_true", help="delete and rebuild the demo library")
    scan = _add(sub, "scan", "reconcile the catalog with skill folders", json_flag=True)
    scan.add_argument(
        "roots",
        nargs="*",
        type=Path,
        metavar="ROOT",
        help="folders to scan (default: the configured or usual roots)",
    )
    scan.add_argument(
        "--no-remember", action="store_true", help="do not add ROOTs to skills.extra_roots"
    )
    scan.add_argument("--no-embed", action="store_true", help="skip embeddings (lexical only)")
    skills = _add(sub, "skills", "list skills", json_flag=True)
    skills.add_argument("--filter", default="", help="substring filter on name/status/root")
    skills.add_argument("--all", action="store_true", help="include uninstalled skills")
    show = _add(sub, "show", "show one skill", json_flag=True)
    show.add_argument("skill", help="name, id or path")
    show.add_argument("--no-body", action="store_true", help="omit the body")
    suggest = _add(sub, "suggest", "rank skills for task contexts", json_flag=True)
    suggest.add_argument(
        "contexts",
        nargs="*",
        metavar="CONTEXT",
        help="task descriptions ('-' or none: one per line on stdin)",
    )
    suggest.add_argument(
        "--batch", type=Path, metavar="FILE", help="file with one context per line"
    )
    suggest.add_argument("--limit", type=int, default=None, help="how many skills per context")
    _add(sub, "verify", "check the library against its event log", json_flag=True)
    _add(sub, "rebuild", "regenerate projections and the vector index from events", json_flag=True)
    config = _add(sub, "config", "read or change config.toml")
    config.add_argument("action", choices=["get", "set", "path", "show"])
    config.add_argument("key", nargs="?")
    config.add_argument("value", nargs="?")
    bench = _add(sub, "bench", "run the benchmarks and print JSON", json_flag=True)
    from app import cli_sessions

    cli_sessions.add_parsers(sub, _add)
    from app import cli_patterns

    cli_patterns.add_parsers(sub, _add)
    from app import cli_lifecycle

    cli_lifecycle.add_parsers(sub, _add)
    from app import cli_runbook

    cli_runbook.add_parsers(sub, _add)
    from app import cli_lineage

    cli_lineage.add_parsers(sub, _add)
    from app import cli_forget

    cli_forget.add_parsers(sub, _add)
    bench.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    bench.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only these parts (scan, suggest, app, ingest, review, routing, consolidate,"
        " session_start, mcp, lifecycle, quality, secrets)",
    )
    return parser


def _add(sub: Any, name: str, help_text: str, json_flag: bool = False) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    # `librarian COMMAND --library P` works as well as `librarian --library P COMMAND`; unset
    # here, the value given before the command stands.
    parser.add_argument(
        "--library", metavar="PATH", default=argparse.SUPPRESS, help="library directory"
    )
    if json_flag:
        parser.add_argument("--json", action="store_true", help="machine-readable output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = _all_commands()[args.command or "app"]
    try:
        return command(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # the reader went away (`| head`): not an error
        return 0
    except (LibrarianError, OSError) as exc:
        return _fail(str(exc))
    except sqlite3.Error as exc:  # damage found after opening (a truncated or torn file)
        return _fail(f"the library database cannot be read: {exc}")
    except Exception as exc:
        if os.environ.get("LIBRARIAN_DEBUG"):
            raise
        return _fail(f"unexpected {type(exc).__name__}: {exc} (LIBRARIAN_DEBUG=1 shows where)")


def _fail(message: str) -> int:
    say(f"librarian: error: {neutralise(message, keep_newlines=False)}", file=sys.stderr)
    return 2


#: Commands that only read: they open the library read-only (SQLite `mode=ro`; no
#: migration, no config or folder created, the vector index rebuilt in memory only).
READ_ONLY_COMMANDS = frozenset(
    {"skills", "show", "verify", "sessions", "session", "nodes", "audit", "patterns", "pattern"}
    | {"retrievals", "blast", "graph", "lineage"}
)
#: Commands that only read when their action is one of these.
READ_ONLY_ACTIONS = {"runs": ("list", "show"), "drafts": ("list", "show"), "proposals": ("list",)}


def reads_only(args: argparse.Namespace) -> bool:
    """Whether the command in `args` leaves the library as it is."""
    if args.command == "health":
        return not args.apply
    actions = READ_ONLY_ACTIONS.get(args.command, ())
    return args.command in READ_ONLY_COMMANDS or getattr(args, "action", None) in actions


def open_library(args: argparse.Namespace) -> Any:
    from store.library import Library

    return Library(resolve_library_dir(args.library), read_only=reads_only(args))


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print `data` as JSON with `--json`, else `text`; either way safe for a terminal."""
    if getattr(args, "json", False):
        print(safe_json(data))
    else:
        say(text)


def say(text: str, file: TextIO | None = None, end: str = "\n") -> None:
    """Print text with control and invisible characters shown as escapes (lines kept)."""
    print(neutralise(text), file=file, end=end)


def cmd_app(args: argparse.Namespace) -> int:
    from app.factory import run_app

    return run_app(resolve_library_dir(args.library))


def cmd_demo(args: argparse.Namespace) -> int:
    from store.demo import build_demo
    from store.library import Library

    target = Path(args.library).expanduser().resolve() if args.library else default_demo_dir()
    build_demo(target, fresh=args.fresh)
    with Library(target) as library:  # the first scan's count misses the graduated skill
        count = library.skill_count()
    say(f"demo library at {target}: {count} skills")
    if args.no_open:
        return 0
    from app.factory import run_app

    return run_app(target)


def cmd_scan(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        for root in args.roots:
            if not root.expanduser().is_dir():
                raise CliError(f"{root} is not a folder")
        report = library.scan(args.roots or None, embed=not args.no_embed)
        if args.roots and not args.no_remember:
            library.remember_roots(args.roots)
    emit(args, render.scan_json(report), render.scan_text(report))
    return 0


def cmd_skills(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        rows = library.list_skills(args.filter, include_uninstalled=args.all)
    emit(args, [render.plain(r) for r in rows], render.skills_text(rows))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        detail = library.get_skill(args.skill)
    emit(args, render.plain(detail), render.detail_text(detail, body=not args.no_body))
    return 0


def _contexts(args: argparse.Namespace) -> list[str]:
    contexts = [c for c in args.contexts if c != "-"]
    if args.batch:
        contexts += args.batch.read_text(encoding="utf-8", errors="replace").splitlines()
    wants_stdin = (not contexts and not args.batch) or "-" in args.contexts
    if wants_stdin and sys.stdin is not None and not sys.stdin.isatty():
        contexts += sys.stdin.read().splitlines()
    contexts = [c.strip() for c in contexts if c.strip()]
    if not contexts:
        raise CliError("no context given (pass CONTEXT, --batch FILE, or lines on stdin)")
    return contexts


def cmd_suggest(args: argparse.Namespace) -> int:
    from app import render
    from store.serving import masked

    contexts = _contexts(args)
    with open_library(args) as library:
        results = library.suggest_many(contexts, args.limit)
        for context, found in zip(contexts, results, strict=True):
            hits = [("skill", x.name, rank, x.score) for rank, x in enumerate(found, start=1)]
            library.log_retrieval("suggest", context, hits)
    results = masked(results)  # agents read this: no secret from a skill goes out
    data = [
        {"context": c, "suggestions": [render.plain(s) for s in r]}
        for c, r in zip(contexts, results, strict=True)
    ]
    emit(args, data if len(data) > 1 else data[0], render.suggest_text(contexts, results))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from app import render
    from store.paths import LibraryPaths
    from store.verify import unopened, verify

    try:
        library = open_library(args)
    except LibrarianError as exc:  # a database that cannot be opened is a failed check
        report = unopened(LibraryPaths(resolve_library_dir(args.library)).head, str(exc))
    else:
        with library:
            report = verify(library)
    emit(args, report.as_dict(), render.verify_text(report))
    return 0 if report.ok else 1


def cmd_rebuild(args: argparse.Namespace) -> int:
    from store.verify import rebuild

    with open_library(args) as library:
        counts = rebuild(library)
    emit(args, counts, f"replayed {counts['events']} events; indexed {counts['surfaces']} surfaces")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    from store.config import Config
    from store.paths import LibraryPaths

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


def cmd_bench(args: argparse.Namespace) -> int:
    from store.bench import run_bench

    results = run_bench(quick=args.quick, only=set(args.only))
    print(safe_json(results))
    return 0


def _all_commands() -> dict[str, Command]:
    from app.cli_forget import COMMANDS as FORGET_COMMANDS
    from app.cli_lifecycle import COMMANDS as LIFECYCLE_COMMANDS
    from app.cli_lineage import COMMANDS as LINEAGE_COMMANDS
    from app.cli_patterns import COMMANDS as PATTERN_COMMANDS
    from app.cli_runbook import COMMANDS as RUNBOOK_COMMANDS
    from app.cli_sessions import COMMANDS

    return {
        **_COMMANDS,
        **COMMANDS,
        **PATTERN_COMMANDS,
        **LIFECYCLE_COMMANDS,
        **RUNBOOK_COMMANDS,
        **LINEAGE_COMMANDS,
        **FORGET_COMMANDS,
    }


_COMMANDS: dict[str, Command] = {
    "app": cmd_app,
    "demo": cmd_demo,
    "scan": cmd_scan,
    "skills": cmd_skills,
    "show": cmd_show,
    "suggest": cmd_suggest,
    "verify": cmd_verify,
    "rebuild": cmd_rebuild,
    "config": cmd_config,
    "bench": cmd_bench,
}
