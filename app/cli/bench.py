"""`librarian bench`: the issue budgets, measured (see `store.bench`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import CliError, Subcommands, add_command, say
from app.cli.progress import Feedback
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
        " session_start, mcp, lifecycle, quality, secrets, budget, overlap, lint, prompt_hook,"
        " team)",
    )
    register_kit(sub)


#: Rough wall-clock minutes of a whole first run on two cores, full and `--quick` (the
#: lifecycle library and the team hub are built, then cached; see the README's budgets).
BENCH_MINUTES = {False: 30, True: 5}


def cmd_bench(args: argparse.Namespace) -> int:
    from store.bench import run_bench  # asyncio and the skill linter: only `bench` loads them

    with Feedback.for_args(args) as feedback:
        if feedback.enabled:
            feedback.tell(bench_text(args.quick, args.only))

        def progress(done: int, total: int, phase: str) -> None:
            feedback.count(done, total, f"bench: {phase}" if phase else "bench: done")

        results = run_bench(quick=args.quick, only=set(args.only), progress=progress)
    print(safe_json(results))
    return 0


def bench_text(quick: bool, only: list[str]) -> str:
    """What a bench run does, and roughly how long it takes."""
    sizes = "small sizes (--quick)" if quick else "full sizes"
    parts = f"{len(set(only))} part(s)" if only else "every part"
    whole = f"~{BENCH_MINUTES[quick]} min for every part"
    return (
        f"bench: builds synthetic libraries in its cache folder and measures {parts} at {sizes}"
        f" ({whole}); the JSON results follow"
    )


def register_kit(sub: Subcommands) -> None:
    """Add `judge-kit` and `judge-replay`."""
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
    again = add_command(
        sub,
        "judge-replay",
        "replay judges' verdicts on a judged kit against a new kit of the same sessions",
        cmd_judge_replay,
        json_flag=True,
    )
    again.add_argument("judged", type=Path, help="the kit the judges scored (JSONL)")
    again.add_argument("current", type=Path, help="the new kit of the same sessions (JSONL)")
    again.add_argument(
        "--verdicts",
        type=Path,
        action="append",
        required=True,
        help="one judge's verdicts (JSONL: id, verdict); repeat per judge",
    )


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


def cmd_judge_replay(args: argparse.Namespace) -> int:
    from store.quality.replay import judged, replay

    old = judged(_jsonl(args.judged), [_jsonl(path) for path in args.verdicts])
    report = replay(old, _jsonl(args.current))
    if args.json:
        print(safe_json(report.as_dict()))
        return 0
    share = "n/a" if report.share is None else f"{report.share:.0%}"
    say(
        f"{report.pending} pending now · approved by every judge: {report.approved[0]} of"
        f" {report.approved[1]} kept · by some: {report.split[0]} of {report.split[1]} ·"
        f" by none: {report.rejected[0]} of {report.rejected[1]} kept · judged share of what"
        f" is kept {share} · {len(report.unjudged)} new, unjudged"
    )
    for record in report.unjudged:
        say(f"  new  {record['type']}  {record['file']}:{record['lines']}  {record['summary']}")
    return 0


def _jsonl(path: Path) -> list[dict[str, object]]:
    """The JSON objects of a JSONL file (a bad line is a clear error, not a crash)."""
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    out: list[dict[str, object]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise CliError(f"{path}:{number}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise CliError(f"{path}:{number}: not a JSON object")
        out.append(value)
    return out
