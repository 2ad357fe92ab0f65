"""`librarian bench`: the issue budgets, measured (see `store.bench`)."""

from __future__ import annotations

import argparse

from app.cli.common import Subcommands, add_command
from store.text import safe_json


def register(sub: Subcommands) -> None:
    """Add `bench`."""
    bench = add_command(
        sub, "bench", "run the benchmarks and print JSON", cmd_bench, json_flag=True
    )
    bench.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    bench.add_argument(
        "--only",
        action="append",
        default=[],
        help="run only these parts (scan, suggest, app, ingest, review, routing, consolidate,"
        " session_start, mcp, lifecycle, quality, secrets, budget, overlap, lint, prompt_hook)",
    )


def cmd_bench(args: argparse.Namespace) -> int:
    from store.bench import run_bench  # asyncio and the skill linter: only `bench` loads them

    results = run_bench(quick=args.quick, only=set(args.only))
    print(safe_json(results))
    return 0
