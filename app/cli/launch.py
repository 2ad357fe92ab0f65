"""`librarian app` and `librarian demo`: open the Textual app, on the user's library or on
a freshly built demo library."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import Subcommands, add_command, library_at, say
from store.paths import default_demo_dir, resolve_library_dir


def register(sub: Subcommands) -> None:
    """Add `app` and `demo`."""
    add_command(sub, "app", "open the app (the default)", cmd_app)
    demo = add_command(sub, "demo", "build the demo library and open the app on it", cmd_demo)
    demo.add_argument("--no-open", action="store_true", help="build only, do not open the app")
    demo.add_argument("--fresh", action="store_true", help="delete and rebuild the demo library")


def cmd_app(args: argparse.Namespace) -> int:
    return _run_app(resolve_library_dir(args.library))


def cmd_demo(args: argparse.Namespace) -> int:
    from tooling.demo.build import build_demo  # loads the whole store (numpy, hnswlib): only here

    target = Path(args.library).expanduser().resolve() if args.library else default_demo_dir()
    build_demo(target, fresh=args.fresh)
    with library_at(target) as library:  # the first scan's count misses the graduated skill
        count = library.skill_count()
    say(f"demo library at {target}: {count} skills")
    if args.no_open:
        return 0
    return _run_app(target)


def _run_app(root: Path) -> int:
    from app.factory import run_app  # Textual: the commands without the app never load it

    return run_app(root)
