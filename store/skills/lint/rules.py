"""What every lint rule is made of (a pattern, its triggers and a describe function), the
hits rules produce, the helpers their describe functions share, and the matcher that runs
rules over a text and its lowercased, line-capped copies."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from store.text import excerpt

# Command and phrase rules read only this much of a line: their windows are bounded, but a
# multi-megabyte line of repeated keywords would still cost O(length * window).
_MAX_SCAN_LINE = 4_096
# A file full of hits gets a line-0 summary instead of thousands of rows in the UI.
_MAX_PER_RULE = 50

_Verdict = tuple[str, str] | None  # (severity, message), or None to drop the match
# Gets the match and the original text (matches may come from the lowercased copy).
_Describe = Callable[[re.Match[str], str], _Verdict]


@dataclass(frozen=True, slots=True)
class _Rule:
    rule: str
    pattern: re.Pattern[str]
    describe: _Describe
    triggers: tuple[str, ...] = ()  # lowercase substrings; without one the regex can't match
    lower: bool = False  # match the lowercased text (pattern written in lowercase)
    boundary: bool = True  # the match must start a token, not sit inside one
    long_lines: bool = False  # tightly anchored, so safe on over-long lines too


@dataclass(frozen=True, slots=True)
class _Hit:
    rule: str
    severity: str
    message: str
    start: int  # offset in the text; -1 for whole-file findings
    mask: tuple[int, int] | None = None  # secret span to hide in excerpts
    more: int = 0  # further hits of this rule that were counted, not listed


# Excerpts and messages go through the one neutraliser the whole app uses.
neutralise = excerpt


def _mask(value: str) -> str:
    return neutralise(value[:4], 4) + "****"


def _is_token_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] in "_-")


def _const(severity: str, message: str) -> _Describe:
    def describe(m: re.Match[str], text: str) -> _Verdict:
        return severity, message

    return describe


def _line_before(text: str, start: int, limit: int = 1_000) -> str:
    """The (bounded) part of start's line before it, for look-behind checks in Python."""
    return text[max(text.rfind("\n", 0, start) + 1, start - limit) : start]


def _original(m: re.Match[str], text: str, group: str | int = 0) -> str:
    start, end = m.span(group)
    return text[start:end] if start >= 0 else ""


@dataclass(frozen=True, slots=True)
class _Texts:
    """The original text and the copies rules match against; all share offsets."""

    text: str
    low: str
    view: str  # over-long lines blanked past _MAX_SCAN_LINE
    low_view: str
    seen: dict[str, bool]  # trigger -> occurs in `low`; rules share triggers

    def has(self, trigger: str) -> bool:
        if trigger not in self.seen:
            self.seen[trigger] = trigger in self.low
        return self.seen[trigger]


def _lowered(text: str) -> str:
    low = text.lower()
    # A few characters (İ) lowercase to two; offsets must keep lining up.
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _texts(text: str, lines: Sequence[str]) -> _Texts:
    low = _lowered(text)
    if max(map(len, lines)) <= _MAX_SCAN_LINE:
        return _Texts(text, low, text, low, {})
    cut = _MAX_SCAN_LINE
    view = "\n".join(ln if len(ln) <= cut else ln[:cut] + " " * (len(ln) - cut) for ln in lines)
    return _Texts(text, low, view, _lowered(view), {})


def _run(rules: Iterable[_Rule], t: _Texts) -> Iterator[_Hit]:
    for rule in rules:
        if rule.triggers and not any(map(t.has, rule.triggers)):
            continue
        if rule.long_lines:
            source = t.low if rule.lower else t.text
        else:
            source = t.low_view if rule.lower else t.view
        for m in rule.pattern.finditer(source):
            if rule.boundary and _is_token_char(t.text, m.start() - 1):
                continue
            verdict = rule.describe(m, t.text)
            if verdict is not None:
                mask = m.span("v") if "v" in rule.pattern.groupindex else None
                yield _Hit(rule.rule, verdict[0], verdict[1], m.start(), mask)
