"""`librarian lint`, `budget` and `overlap`: the catalog's health the way skill users hurt —
CI checks on skill files, Claude Code's skill-listing budget, and skills routing confuses."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from app.cli.common import CliError, Subcommands, add_command, say
from store.skills.ci import baseline, reports
from store.skills.ci.check import SEVERITIES, check_paths
from store.text import safe_json


def register(sub: Subcommands) -> None:
    """Add `lint`."""
    lint = add_command(
        sub,
        "lint",
        "check skill folders for CI: spec warnings and security findings (no library needed)",
        cmd_lint,
        reads=True,
    )
    lint.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="skill folders, SKILL.md files or"
        " folders of skills (default: the current folder)"
    )  # fmt: skip
    lint.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    lint.add_argument(
        "--fail-on",
        choices=[*SEVERITIES, "never"],
        default="high",
        help="exit 1 when an unsuppressed issue is this severe or more (default: high)",
    )
    lint.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help=f"suppression file (default: {baseline.DEFAULT_NAME} in the current folder, if any)",
    )
    lint.add_argument("--no-baseline", action="store_true", help="ignore any baseline file")
    lint.add_argument("--output", type=Path, metavar="FILE", help="write the report to FILE")
    lint.add_argument(
        "--print-baseline",
        action="store_true",
        help="print baseline entries (with empty reasons to fill in) for the open issues",
    )


def cmd_lint(args: argparse.Namespace) -> int:
    here = Path.cwd()
    result = check_paths(args.paths or [here], here)
    entries, problems = _baseline(args, here)
    applied = baseline.apply(result.issues, entries, date.today())
    applied.problems[:0] = problems
    outcome = reports.Outcome(result, applied, args.fail_on, _version())
    if args.print_baseline:
        say(baseline.template(outcome.applied.open))
        return 0
    if args.format == "sarif":
        rendered = json.dumps(reports.sarif(outcome), indent=2, ensure_ascii=False)
    elif args.format == "json":
        rendered = safe_json(reports.json_data(outcome))
    else:
        rendered = reports.text(outcome)
    if args.output:
        args.output.write_text(rendered + "\n", encoding="utf-8")
        say(reports.text(outcome).splitlines()[-1], file=sys.stderr)
    elif args.format == "text":
        say(rendered)
    else:
        print(safe_json(json.loads(rendered)))
    return outcome.exit_code


def _baseline(
    args: argparse.Namespace, here: Path
) -> tuple[list[baseline.Suppression], list[baseline.Problem]]:
    if args.no_baseline:
        return [], []
    path = args.baseline or here / baseline.DEFAULT_NAME
    if args.baseline is None and not path.is_file():
        return [], []
    if not path.is_file():
        raise CliError(f"{path}: no such baseline file")
    return baseline.load(path)


def _version() -> str:
    try:
        return version("skill-librarian")
    except PackageNotFoundError:
        return "0"
