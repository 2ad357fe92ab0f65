"""`librarian lint`, `budget` and `overlap`: the catalog's health the way skill users hurt —
CI checks on skill files, Claude Code's skill-listing budget, and skills routing confuses."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from datetime import date
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from app.cli.common import (
    CliError,
    Subcommands,
    add_command,
    emit,
    library_at,
    open_library,
    plain,
    say,
)
from store.models.listing import ListingReport
from store.models.overlap import OverlapPair
from store.skills.ci import baseline, reports
from store.skills.ci.check import SEVERITIES, check_paths
from store.skills.listing import routing
from store.text import one_line, safe_json


def register(sub: Subcommands) -> None:
    """Add `lint`, `budget` and `overlap`."""
    budget = add_command(
        sub,
        "budget",
        "Claude Code's skill listing for a folder against its character budget",
        cmd_budget,
        json_flag=True,
        reads=True,
    )
    budget.add_argument(
        "folder", nargs="?", type=Path, default=None, metavar="DIR",
        help="the folder a Claude Code session starts in (default: the current folder)",
    )  # fmt: skip
    budget.add_argument("--context-tokens", type=int, help="the model's context window")
    budget.add_argument("--fraction", type=float, help="the listing's share of the window")
    budget.add_argument("--chars", type=int, help="a fixed budget in characters")
    budget.add_argument("--all", action="store_true", help="list hidden and shadowed skills too")
    budget.add_argument(
        "--routing",
        action="store_true",
        help="also measure what the cut costs routing: the routing evaluation over the corpus"
        " skills with every description, then with this budget's cut (loads the model, ~1 min)",
    )
    budget.add_argument(
        "--corpus", type=Path, metavar="DIR",
        help="corpus skills folder for --routing (default: $LIBRARIAN_CORPUS/skills)",
    )  # fmt: skip
    overlap = add_command(
        sub,
        "overlap",
        "skills routing confuses, and exact duplicates under different names",
        cmd_overlap,
        json_flag=True,
        reads=True,
    )
    overlap.add_argument("skill", nargs="?", help="only this skill's pairs (name, id or path)")
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


def cmd_budget(args: argparse.Namespace) -> int:
    folder = (args.folder or Path.cwd()).expanduser()
    if not folder.is_dir():
        raise CliError(f"{folder} is not a folder")
    if args.fraction is not None and not 0 < args.fraction <= 1:
        raise CliError("--fraction must be above 0 and at most 1")
    options = {
        key: value
        for key, value in (
            ("context_tokens", args.context_tokens),
            ("fraction", args.fraction),
            ("chars", args.chars),
        )
        if value is not None
    }
    with open_library(args) as library:
        found = library.listing(folder.resolve(), **options)
    data: dict[str, Any] = plain(found)
    text = budget_text(found, show_all=args.all)
    if args.routing:
        loss = _routing(args, found.settings.char_budget, found.settings.max_desc_chars)
        data["routing"] = loss
        text += "\n" + routing_text(loss)
    emit(args, data, text)
    return 0


def _routing(args: argparse.Namespace, budget: int, cap: int) -> dict[str, Any]:
    corpus = args.corpus or Path(os.environ.get("LIBRARIAN_CORPUS", "")) / "skills"
    if not corpus.is_dir():
        raise CliError(f"{corpus}: no corpus skills folder (pass --corpus or set LIBRARIAN_CORPUS)")
    with tempfile.TemporaryDirectory(prefix="librarian-routing-") as work:
        return routing.routing_loss(library_at, corpus, Path(work), [budget], cap)


def routing_text(loss: dict[str, Any]) -> str:
    lines = [f"Routing evaluation ({loss['queries']} tasks over {loss['skills']} corpus skills):"]
    for label, run in loss.items():
        if isinstance(run, dict):
            lines.append(
                f"  {label:<14} recall@1 {run['recall@1']:.2f}  @5 {run['recall@5']:.2f}"
                f"  @10 {run['recall@10']:.2f}  ({run['name_only']} of {loss['skills']}"
                " listed by name only)"
            )
    return "\n".join(lines)


_STATE_LABEL = {
    "full": "listed",
    "dropped": "NAME ONLY",
    "name_only": "name only",
    "hidden": "hidden",
    "shadowed": "shadowed",
}


def budget_text(r: ListingReport, *, show_all: bool = False) -> str:
    s = r.settings
    lines = [
        f"Claude Code's skill listing for {one_line(r.folder, 200)}",
        f"  budget {s.char_budget:,} characters ({s.context_tokens:,} tokens x {s.fraction:g}"
        f" x {s.chars_per_token:g} chars/token; descriptions cut at {s.max_desc_chars:,})",
        *(f"    {one_line(what, 40)}: {one_line(where, 160)}" for what, where in s.sources),
        f"  listing {r.used_chars:,} characters as cut; {r.full_chars:,} with every description;"
        f" usage from {r.sessions:,} ingested sessions",
        "",
        f"  {'state':<9} {'chars':>6} {'desc':>6} {'uses':>5} {'drop':>4}  skill",
    ]
    for e in r.entries:
        if e.state in ("hidden", "shadowed") and not show_all:
            continue
        drop = str(e.drop_rank) if e.drop_rank else "-"
        cap = "+" if e.capped else " "
        lines.append(
            f"  {_STATE_LABEL[e.state]:<9} {e.listed_chars:>6,} {e.description_chars:>5,}{cap}"
            f" {e.uses:>5} {drop:>4}  {one_line(e.name, 60)} ({e.scope})"
            + ("" if e.in_library else " [not in the library]")
        )
        if e.state in ("dropped", "hidden", "shadowed", "name_only") and show_all:
            lines.append(f"  {'':<33} {one_line(e.reason, 120)}")
    hidden = sum(1 for e in r.entries if e.state in ("hidden", "shadowed"))
    if hidden and not show_all:
        lines.append(f"  ({hidden} hidden or shadowed skills not shown: --all)")
    lines.append("")
    lines += [f"* {one_line(a.message, 600)}" for a in r.advice]
    lines += [f"! not read: {one_line(u, 200)}" for u in r.unread]
    return "\n".join(lines)


def cmd_overlap(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        pairs = library.overlaps(args.skill)
    emit(args, [plain(p) for p in pairs], overlap_text(pairs))
    return 0


_SUGGESTION = {"retire_one": "retire one", "merge": "merge", "sharpen": "sharpen one"}


def overlap_text(pairs: list[OverlapPair]) -> str:
    if not pairs:
        return "no overlapping skills"
    lines = []
    for p in pairs:
        lines.append(
            f"{one_line(p.a, 60)} <-> {one_line(p.b, 60)}: {p.kind}, {_SUGGESTION[p.suggestion]}"
        )
        lines.append(
            f"  routing: {one_line(p.b, 60)} scores {p.a_to_b:.0%} of {one_line(p.a, 60)} on"
            f" {one_line(p.a, 60)}'s own description, {p.b_to_a:.0%} the other way;"
            f" card cosine {p.cosine:.2f}; bodies {p.body_similarity:.0%} alike"
        )
        if p.shared_terms:
            lines.append(f"  shared words: {one_line(', '.join(p.shared_terms), 200)}")
        lines.append(f"  {one_line(p.reason, 300)}")
    return "\n".join(lines)


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
