"""Plain-text and JSON views of store results for the CLI. Untrusted text is neutralised."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from store.models import ScanReport, SkillDetail, SkillSummary, Suggestion
from store.text import neutralise, one_line
from store.verify import VerifyReport


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
    return "\n".join(lines)


def summary_json(row: SkillSummary) -> dict[str, Any]:
    return asdict(row)


def skills_text(rows: list[SkillSummary]) -> str:
    if not rows:
        return "no skills (run `librarian scan`)"
    width = min(max(len(r.name) for r in rows), 40)
    lines = []
    for r in rows:
        flags = f"{r.warning_count}w {r.finding_count}f" + (" shadowed" if r.shadowed else "")
        lines.append(
            f"{one_line(r.name, width):<{width}}  {r.status:<11} v{r.version_no:<3}"
            f" {flags:<14} {one_line(r.description, 80)}"
        )
    return "\n".join(lines)


def detail_json(detail: SkillDetail) -> dict[str, Any]:
    return asdict(detail)


def detail_text(d: SkillDetail, body: bool = True) -> str:
    s = d.summary
    lines = [
        f"{one_line(s.name, 80)}  [{s.status}]  v{s.version_no}  id {s.skill_id}",
        f"  path: {one_line(s.fs_path, 200)}",
        f"  root: {one_line(s.root, 200)} ({s.scope})",
        f"  description: {one_line(d.manifest['description'], 2000)}",
    ]
    if s.shadowed:
        lines.append(f"  shadowed by: {one_line(d.shadowed_by, 200)}")
    lines += [f"  warning {w.code}: {one_line(w.message, 200)}" for w in d.warnings]
    lines += [
        f"  finding [{f.severity}] {f.rule} {one_line(f.file, 80)}:{f.line}:"
        f" {one_line(f.message, 160)}"
        for f in d.findings
    ]
    lines += [
        f"  {r.type} -> {one_line(r.target, 64)}" + (" (dangling)" if r.dangling else "")
        for r in d.relations
    ]
    lines += [f"  {one_line(r.source, 64)} {r.type} this skill" for r in d.dependents]
    lines += [
        f"  version {v.version_no}: {v.event} {v.created_at} {v.content_hash[:12]}"
        for v in d.versions
    ]
    if body:
        lines += ["", neutralise(d.body)]
    return "\n".join(lines)


def suggestion_json(s: Suggestion) -> dict[str, Any]:
    return asdict(s)


def suggest_text(contexts: list[str], results: list[list[Suggestion]]) -> str:
    blocks = []
    for context, hits in zip(contexts, results, strict=True):
        lines = [f"> {one_line(context, 160)}"] if len(contexts) > 1 else []
        if not hits:
            lines.append("  (no matching skills)")
        for rank, h in enumerate(hits, start=1):
            terms = ", ".join(h.matched_terms[:8]) or "-"
            lines.append(
                f"{rank:>3}. {one_line(h.name, 48):<48} {h.score:.3f}"
                f"  lex {h.lexical:.2f} dense {h.dense:.2f} imp {h.importance:.2f}"
                f"  [{h.status}]  terms: {one_line(terms, 80)}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def verify_text(report: VerifyReport) -> str:
    lines = []
    for check in report.checks:
        lines.append(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
        lines += [f"       {one_line(p, 200)}" for p in check.problems]
    lines.append("library is intact" if report.ok else "library has problems (see above)")
    return "\n".join(lines)
