"""`librarian scan`, `skills`, `show` and `suggest`: the skill catalog."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from app.cli.common import CliError, Subcommands, add_command, emit, open_library, plain
from app.cli.progress import MODEL_LOAD_SECONDS, Feedback, seconds
from store.models import ScanReport, SkillDetail, SkillSummary, Suggestion
from store.models.skills import FITS_WELL
from store.serving import masked
from store.text import neutralise, one_line


def register(sub: Subcommands) -> None:
    """Add `scan`, `skills`, `show` and `suggest`."""
    scan = add_command(
        sub, "scan", "reconcile the catalog with skill folders", cmd_scan, json_flag=True
    )
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
    skills = add_command(sub, "skills", "list skills", cmd_skills, json_flag=True, reads=True)
    skills.add_argument("--filter", default="", help="substring filter on name/status/root")
    skills.add_argument("--all", action="store_true", help="include uninstalled skills")
    show = add_command(sub, "show", "show one skill", cmd_show, json_flag=True, reads=True)
    show.add_argument("skill", help="name, id or path")
    show.add_argument("--no-body", action="store_true", help="omit the body")
    suggest = add_command(
        sub, "suggest", "rank skills for task contexts", cmd_suggest, json_flag=True
    )
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


def cmd_scan(args: argparse.Namespace) -> int:
    with open_library(args) as library, Feedback.for_args(args) as feedback:
        for root in args.roots:
            if not root.expanduser().is_dir():
                raise CliError(f"{root} is not a folder")
        first = feedback.enabled and library.skill_count() == 0
        embed = not args.no_embed

        def progress(done: int, total: int) -> None:
            if done == 0 and first:
                feedback.tell(first_scan_text(total, embed=embed))
            feedback.count(done, total, "scanning skills")

        report = library.scan(args.roots or None, embed=embed, progress=progress)
        if args.roots and not args.no_remember:
            library.remember_roots(args.roots)
    emit(args, scan_json(report), scan_text(report))
    return 0


#: Rough costs of a first scan on a laptop core, after loading the embedding model: each
#: skill read, linted and embedded (the third-party corpus: 217 skills in about 13 s).
SCAN_SECONDS = {True: 0.05, False: 0.02}


def first_scan_text(total: int, *, embed: bool) -> str:
    """What a first scan does, and roughly how long it takes."""
    work = "read, linted and embedded (the model loads once)" if embed else "read and linted"
    estimate = (MODEL_LOAD_SECONDS if embed and total else 0.0) + SCAN_SECONDS[embed] * total
    return (
        f"first scan: {total:,} skill{'s' if total != 1 else ''} found; each is {work},"
        f" {seconds(estimate)}; later scans only read what changed"
    )


def cmd_skills(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        rows = library.list_skills(args.filter, include_uninstalled=args.all)
    emit(args, [plain(r) for r in rows], skills_text(rows))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with open_library(args) as library:
        detail = library.get_skill(args.skill)
    emit(args, plain(detail), detail_text(detail, body=not args.no_body))
    return 0


def cmd_suggest(args: argparse.Namespace) -> int:
    contexts = _contexts(args)
    with open_library(args) as library:
        results = library.suggest_many(contexts, args.limit)
        for context, found in zip(contexts, results, strict=True):
            hits = [("skill", x.name, rank, x.score) for rank, x in enumerate(found, start=1)]
            library.log_retrieval("suggest", context, hits)
    results = masked(results)  # agents read this: no secret from a skill goes out
    data = [
        {"context": c, "suggestions": [plain(s) for s in r]}
        for c, r in zip(contexts, results, strict=True)
    ]
    emit(args, data if len(data) > 1 else data[0], suggest_text(contexts, results))
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


def scan_json(report: ScanReport) -> dict[str, Any]:
    data = asdict(report)
    data["collisions"] = [
        {"name": n, "winner": p[0], "shadowed": list(p[1:])} for n, p in report.collisions
    ]
    return data


def scan_text(report: ScanReport) -> str:
    lines = [
        f"scanned {len(report.roots)} roots in {report.seconds:.2f}s: {report.seen} skills found,"
        f" {report.installed} installed, {report.changed} changed, {report.unchanged} unchanged,"
        f" {report.uninstalled} uninstalled, {len(report.skipped)} skipped,"
        f" {report.embedded} texts embedded",
    ]
    lines += [
        f"  skipped {one_line(s.path, 120)}: {s.code}: {one_line(s.reason, 160)}"
        for s in report.skipped
    ]
    for name, paths in report.collisions:
        lines.append(
            f"  collision {one_line(name, 64)}: using {one_line(paths[0], 120)};"
            f" shadowed {', '.join(one_line(p, 120) for p in paths[1:])}"
        )
    lines += [
        f"  dangling {one_line(r.source, 64)} {r.type} {one_line(r.target, 64)} (no such skill)"
        for r in report.dangling
    ]
    lines += [f"  cycle {' -> '.join(one_line(n, 64) for n in (*c, c[0]))}" for c in report.cycles]
    lines += [f"  warning: {one_line(u.reason, 240)}" for u in report.unproven]
    return "\n".join(lines)


def skills_text(rows: list[SkillSummary]) -> str:
    if not rows:
        return "no skills (run `librarian scan`)"
    width = min(max(len(r.name) for r in rows), 40)
    lines = []
    for r in rows:
        flags = f"{r.warning_count}w {r.finding_count}f" + (" shadowed" if r.shadowed else "")
        lines.append(
            f"{one_line(r.name, width):<{width}}  {one_line(r.status, 11):<11} v{r.version_no:<3}"
            f" {flags:<14} {one_line(r.description, 80)}"
        )
    return "\n".join(lines)


def detail_text(d: SkillDetail, body: bool = True) -> str:
    s = d.summary
    lines = [
        f"{one_line(s.name, 80)}  [{one_line(s.status, 20)}]  v{s.version_no}  id {s.skill_id}",
        f"  path: {one_line(s.fs_path, 200)}",
        f"  root: {one_line(s.root, 200)} ({s.scope})",
        f"  description: {one_line(d.manifest['description'], 2000)}",
    ]
    if s.shadowed:
        lines.append(f"  shadowed by: {one_line(d.shadowed_by, 200)}")
    lines += governance_lines(d)
    lines += [
        f"  {'info' if w.code == 'license_missing' else 'warning'} {w.code}:"
        f" {one_line(w.message, 200)}"
        for w in d.warnings
    ]
    lines += [
        f"  finding [{f.severity}] {f.rule}{' (illustrative)' if f.context else ''}"
        f" {one_line(f.file, 80)}:{f.line}: {one_line(f.message, 160)}"
        for f in d.findings
    ]
    lines += [
        f"  {one_line(r.type, 32)} -> {one_line(r.target, 64)}"
        + (f"@{r.pin}" if r.pin else "")
        + (" (dangling)" if r.dangling else "")
        for r in d.relations
    ]
    lines += [
        f"  {one_line(r.source, 64)} {one_line(r.type, 32)} this skill"
        + (f" (pinned to v{r.pin})" if r.pin else "")
        for r in d.dependents
    ]
    lines += [
        f"  version {v.version_no}: {v.event} {one_line(v.created_at, 40)} {v.content_hash[:12]}"
        for v in d.versions
    ]
    if body:
        lines += ["", neutralise(d.body)]
    return "\n".join(lines)


def governance_lines(d: SkillDetail) -> list[str]:
    """Serving and candidate versions, unproven requirements, uses, approval, provenance."""
    m = d.manifest
    lines = []
    if d.served_version and d.served_version != d.summary.version_no:
        lines.append(f"  serving: v{d.served_version} (v{d.summary.version_no} is on disk)")
    if d.candidate is not None:
        lines.append(f"  candidate: {one_line(d.candidate.describe(), 200)}")
    lines += [f"  warning: {one_line(u.reason, 240)}" for u in d.unproven]
    last = one_line(str(m.get("last_used_at") or "never"), 40)
    lines.append(
        f"  uses: {m.get('use_count', 0)} (last {last}), importance {m.get('importance', 0):.2f}"
    )
    if m.get("approved_by"):
        lines.append(f"  approved by: {one_line(str(m['approved_by']), 120)}")
    provenance = m.get("provenance") or {}
    if provenance.get("patterns"):
        lines.append(
            f"  provenance: pattern {one_line(provenance['patterns'][0], 40)}"
            + (f", draft {one_line(provenance['drafts'][0], 40)}" if provenance["drafts"] else "")
            + f", {len(provenance['sessions'])} sessions, {len(provenance['nodes'])} nodes"
        )
    return lines


def suggest_text(contexts: list[str], results: list[list[Suggestion]]) -> str:
    blocks = []
    for context, hits in zip(contexts, results, strict=True):
        lines = [f"> {one_line(context, 160)}"] if len(contexts) > 1 else []
        if not hits:
            lines.append("  (no matching skills)")
        elif max(h.relevance for h in hits) < FITS_WELL:
            lines.append(
                f"  no skill fits well (best fit {max(h.relevance for h in hits):.2f}, below"
                f" {FITS_WELL:.2f}): the closest"
            )
        for rank, h in enumerate(hits, start=1):
            terms = ", ".join(h.matched_terms[:8]) or "-"
            lines.append(
                f"{rank:>3}. {one_line(h.name, 48):<48} {h.score:.3f}  fit {h.relevance:.2f}"
                f"  lex {h.lexical:.2f} dense {h.dense:.2f} imp {h.importance:.2f}"
                f"  [{one_line(h.status, 20)}{', ' + h.health.lower() if h.health else ''}]"
                f"  terms: {one_line(terms, 80)}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
