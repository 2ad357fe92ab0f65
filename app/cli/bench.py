"""`librarian bench`: the issue budgets, measured (see `store.bench`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import CliError, Subcommands, add_command, say
from store.text import safe_json


def register(sub: Subcommands) -> None:
    """Add `bench` and `judge-kit`."""
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
    register_kit(sub)


def cmd_bench(args: argparse.Namespace) -> int:
    from store.bench import run_bench  # asyncio and the skill linter: only `bench` loads them

    results = run_bench(quick=args.quick, only=set(args.only))
    print(safe_json(results))
    return 0


def register_kit(sub: Subcommands) -> None:
    """Add `judge-kit`."""
    kit = add_command(
        sub,
        "judge-kit",
        "ingest transcript folders into a fresh library (warm tier) and write each pending"
        " node with the transcript around it as JSON lines, for an independent judge",
        cmd_judge_kit,
    )
    kit.add_argument("paths", nargs="+", type=Path, help="transcript files or folders")
    kit.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    kit.add_argument(
        "--radius", type=int, default=15, help="messages shown either side of the evidence"
    )
    kit.add_argument("--suppressed", action="store_true", help="also write the suppressed nodes")


def cmd_judge_kit(args: argparse.Namespace) -> int:
    from store.quality.kit import build_kit  # the embedding model: only this command loads it

    for path in args.paths:
        if not path.exists():
            raise CliError(f"no such file or folder: {path}")
    report = build_kit(args.paths, args.out, radius=max(0, args.radius), suppressed=args.suppressed)
    say(
        f"{report.pending} pending and {report.suppressed} suppressed nodes of"
        f" {report.sessions} sessions written to {report.path}"
    )
    return 0
