"""The `librarian` console script: checks that `app`, `widgets`, `store` and `tooling` are one
installation's packages before anything of them runs, then hands over to `app.cli.main`.

The packages have generic names; with a user's folder on `sys.path` (`PYTHONPATH=.`,
say) another `store` or `widgets` could be imported in place of ours. `find_spec` locates a
package without running it, so the check itself executes nothing it finds.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path

PACKAGES = ("app", "widgets", "store", "tooling")


def installation_problem() -> str:
    """Empty when the packages come from one folder; else what is wrong, in one line."""
    homes: dict[str, Path] = {}
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if not origin or Path(origin).name != "__init__.py":
            return f"package {name!r} is not this installation's (found: {origin or 'none'})"
        homes[name] = Path(origin).resolve().parent.parent
    if len(set(homes.values())) > 1:
        found = ", ".join(f"{name} from {home}" for name, home in homes.items())
        return f"app, widgets, store and tooling come from different installations ({found})"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    problem = installation_problem()
    if problem:
        print(f"librarian: error: {problem}; refusing to run", file=sys.stderr)
        return 2
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["bench-child"]:  # one of `librarian bench`'s measurements (hidden)
        from app.bench_app import run_child

        return run_child(args[1:])
    # Imported only once the packages are known to be ours.
    from app import hook_main

    hook = hook_main.parse(args)
    if hook is not None:  # Claude Code's hooks: the short import path
        return hook_main.run(*hook)
    from app.cli.main import main as cli_main

    return cli_main(argv)
