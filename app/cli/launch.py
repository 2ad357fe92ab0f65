"""`librarian app` and `librarian demo`: open the Textual app, on the user's library or on
a freshly built demo library."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from app.cli.common import Subcommands, add_command, library_at, say
from app.cli.progress import Feedback
from store.paths import default_demo_dir, resolve_library_dir


def register(sub: Subcommands) -> None:
    """Add `app` and `demo`."""
    add_command(sub, "app", "open the app (the default)", cmd_app)
    demo = add_command(sub, "demo", "build the demo library and open the app on it", cmd_demo)
    demo.add_argument("--no-open", action="store_true", help="build only, do not open the app")
    demo.add_argument("--fresh", action="store_true", help="delete and rebuild the demo library")
    demo.add_argument(
        "--team",
        action="store_true",
        help="also a team story: a local hub (embedded PostgreSQL), two developers' pushes, a"
        " review and a pull (the Team screen, key 9, and the review queue's team source, T)",
    )


def cmd_app(args: argparse.Namespace) -> int:
    return _run_app(resolve_library_dir(args.library))


#: Rough seconds of a first demo build on a laptop core (the embedding model loaded).
DEMO_SECONDS = 25


def cmd_demo(args: argparse.Namespace) -> int:
    from tooling.demo.build import build_demo  # loads the whole store (numpy, hnswlib): only here

    target = Path(args.library).expanduser().resolve() if args.library else default_demo_dir()
    first = args.fresh or not (target / "demo-skills").exists()
    with Feedback.for_args(args) as feedback:
        if first and feedback.enabled:
            feedback.tell(
                f"building the demo library at {target}: 26 skills scanned and embedded, six"
                " sessions ingested and reviewed, patterns, eight weeks of runs"
                f" (~{DEMO_SECONDS} s, the first time only)"
            )

        def progress(done: int, total: int, stage: str) -> None:
            feedback.count(done, total, stage or "done")

        build_demo(target, fresh=args.fresh, progress=progress, team=args.team)
    with library_at(target) as library:  # the first scan's count misses the graduated skill
        count = library.skill_count()
    say(demo_text(target, count))
    if not args.team:
        return 0 if args.no_open else _run_app(target)
    from tooling.demo.team import hub_folder, stop_hub

    stop = f"librarian team hub --local {shlex.quote(str(hub_folder(target)))} --stop"
    if args.no_open:
        say(f"the demo's team hub keeps running; stop it with: {stop}")
        return 0
    try:
        return _run_app(target)
    finally:
        stop_hub(target)


def demo_text(target: Path, count: int) -> str:
    """Where the demo library lives and how to point the CLI at it."""
    where = shlex.quote(str(target))
    return "\n".join(
        (
            f"demo library at {target}: {count} skills",
            "the CLI uses your own library unless told otherwise; on the demo:",
            f"  librarian --library {where} audit    (any command: skills, health, audit…)",
            f"  export LIBRARIAN_HOME={where}    (every command in this shell)",
        )
    )


def _run_app(root: Path) -> int:
    from app.factory import run_app  # Textual: the commands without the app never load it

    return run_app(root)
