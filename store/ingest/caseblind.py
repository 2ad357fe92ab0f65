"""Case-blind phrase patterns that are only asked whether they match.

Python's regex engine is several times slower with IGNORECASE on a long alternation of
phrases than without it. For a pattern written in lowercase (no capital letter anywhere, so
no `\\S`/`\\W`/`\\B` either), searching the lowercased text without IGNORECASE gives the same
answer on ASCII text (lowercasing keeps every offset and every word boundary there); other
text is searched as before. The answer is a bool, not a match: the match's text would be the
lowercased one.
"""

from __future__ import annotations

import re


class CaseBlind:
    """`pattern` (compiled with IGNORECASE, written in lowercase), for `search`/`match` as
    conditions."""

    __slots__ = ("blind", "lower")

    def __init__(self, pattern: re.Pattern[str]) -> None:
        if not pattern.flags & re.IGNORECASE or pattern.pattern != pattern.pattern.lower():
            raise ValueError("a case-blind pattern is compiled with IGNORECASE, in lowercase")
        self.blind = pattern
        self.lower = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)

    @property
    def pattern(self) -> str:
        return self.blind.pattern

    def search(self, text: str) -> bool:
        if text.isascii():
            return self.lower.search(text.lower()) is not None
        return self.blind.search(text) is not None

    def match(self, text: str) -> bool:
        if text.isascii():
            return self.lower.match(text.lower()) is not None
        return self.blind.match(text) is not None
