"""What an edit changed, shown so a reader sees the difference (issue 11, round 13; rule 10
of `store.ingest.reviewer_rules`).

A line cut to a width from its start hides a change made past that width: both sides of
`old → new` then read the same. `windows` keeps, of each side, the part around where the two
lines differ, with the words just before it for context. `first_added` picks, of the lines
an edit added, the one that does something (a call, an assignment) over an import that only
makes it possible (`import sys` before `sys.path.insert(…)`).
"""

from __future__ import annotations

import re

_CONTEXT = 16  # characters of what both lines share, kept before the difference


def windows(old: str, new: str, width: int) -> tuple[str, str]:
    """`old` and `new` as they would be quoted at `width`, each cut to the part around their
    difference when cutting from the start would hide it ("…" where a side was cut)."""
    if len(old) <= width and len(new) <= width:
        return old, new
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if prefix + _CONTEXT < width - 1:
        return old, new  # the difference shows within the width already
    start = max(0, prefix - _CONTEXT)
    space = old.rfind(" ", 0, start + 1)
    if space > start - _CONTEXT // 2 and space > 0:
        start = space + 1
    return _cut(old, start, width), _cut(new, start, width)


def _cut(line: str, start: int, width: int) -> str:
    room = width - 2  # an ellipsis at each end
    part = line[start : start + room]
    tail = "…" if start + room < len(line) else ""
    return f"…{part}{tail}"


_IMPORT = re.compile(r"^(?:import\s|from\s+\S+\s+import\s|#include\b|using\s|require\(|use\s)")
_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|;|\"\"\"|\'\'\'|<!--)")


def first_added(lines: list[str]) -> str:
    """The added line to show: the first that is neither an import nor a comment, when one
    is; else the first that is no comment; else the first."""
    code = [x for x in lines if not _COMMENT.match(x)]
    return next((x for x in code if not _IMPORT.match(x)), code[0] if code else lines[0])
