"""From hits to findings: line numbers, masked and neutralised excerpts, one finding per
rule and place, a cap per rule with a summary of the rest, and the order findings are shown in."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from store.models.skills import LintFinding
from store.skills.lint.rules import _MAX_PER_RULE, _Hit, _mask, neutralise

_EXCERPT_CHARS = 160
_LEAD = 40  # context kept before a hit that sits far into a long line
_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}


class _Lines:
    """Maps offsets to 1-based line numbers and builds masked, neutralised excerpts."""

    def __init__(self, lines: Sequence[str], masks: Iterable[tuple[int, int]]) -> None:
        self.lines = lines
        self.starts = [0]
        for line in lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.masks: dict[int, list[tuple[int, int]]] = {}
        for start, end in sorted(masks):
            index = self.index(start)
            base = self.starts[index]
            self.masks.setdefault(index, []).append((start - base, end - base))

    def index(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def excerpt(self, offset: int) -> str:
        index = self.index(offset)
        line = self.lines[index]
        masks = self.masks.get(index, [])
        col = offset - self.starts[index]
        start = col - _LEAD if col > _LEAD + 20 else 0
        end = min(len(line), start + 2 * _EXCERPT_CHARS)
        for s, e in masks:  # never cut through a secret: its tail would show
            start = s if s < start < e else start
            end = e if s < end < e else end
        piece = _masked(line, start, end, masks).strip(" \t\r")
        return neutralise(("…" if start else "") + piece, _EXCERPT_CHARS)


def _masked(line: str, start: int, end: int, masks: Iterable[tuple[int, int]]) -> str:
    out: list[str] = []
    pos = start
    for s, e in masks:
        if s >= pos and e <= end:
            out += [line[pos:s], _mask(line[s:e])]
            pos = e
    out.append(line[pos:end])
    return "".join(out)


_Located = tuple[int, _Hit]  # (1-based line or 0, hit)


def _capped(located: list[_Located], relpath: str) -> tuple[list[_Located], list[LintFinding]]:
    """Keep the first _MAX_PER_RULE hits of each rule; summarise the rest at line 0."""
    by_rule: dict[str, list[_Located]] = {}
    for item in located:
        by_rule.setdefault(item[1].rule, []).append(item)
    kept: list[_Located] = []
    summaries: list[LintFinding] = []
    for rule, group in by_rule.items():
        plain = [item for item in group if not item[1].more]
        kept += plain[:_MAX_PER_RULE]
        rest = [hit for _, hit in plain[_MAX_PER_RULE:]] + [h for _, h in group if h.more]
        count = sum(hit.more or 1 for hit in rest)
        if count:
            severity = min((h.severity for h in rest), key=_SEVERITY_RANK.__getitem__)
            message = f"{count:,} more {rule} findings in this file are not listed"
            summaries.append(LintFinding(rule, severity, message, relpath, 0, ""))
    return kept, summaries


def _findings(relpath: str, lines: Sequence[str], hits: list[_Hit]) -> list[LintFinding]:
    if not hits:
        return []
    index = _Lines(lines, [h.mask for h in hits if h.mask is not None])
    unique: dict[tuple[int, str, str], _Located] = {}
    starts: set[tuple[str, int]] = set()
    for hit in sorted(hits, key=lambda h: (h.start, h.rule, h.message)):
        if hit.start >= 0 and (hit.rule, hit.start) in starts:
            continue  # two patterns of one rule on the same text: one finding
        starts.add((hit.rule, hit.start))
        line = index.index(hit.start) + 1 if hit.start >= 0 else 0
        unique.setdefault((line, hit.rule, hit.message), (line, hit))
    kept, summaries = _capped(sorted(unique.values(), key=lambda i: (i[0], i[1].start)), relpath)
    found = [
        LintFinding(hit.rule, hit.severity, hit.message, relpath, line, _excerpt(index, line, hit))
        for line, hit in kept
    ]
    return sorted(found + summaries, key=_sort_key)


def _excerpt(index: _Lines, line: int, hit: _Hit) -> str:
    return index.excerpt(hit.start) if line else ""


def _sort_key(f: LintFinding) -> tuple[bool, str, int, str, int, str, str]:
    rank = _SEVERITY_RANK.get(f.severity, 3)
    return (f.file != "SKILL.md", f.file, f.line, f.rule, rank, f.message, f.excerpt)
