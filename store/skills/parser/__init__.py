"""Lenient, safe SKILL.md parsing: bytes in, `ParsedSkill` or `ParseFailure` out.

The Agent Skills spec is strict but real skills are not, so deviations become
`SpecWarning`s and the skill still loads; only unreadable or unsafe files fail.
YAML is read with ruamel's safe loader after a streaming pre-pass over the
parse events that rejects alias bombs, deep nesting and non-standard tags.
Nothing here does I/O or executes anything.

This module checks the bytes and splits the frontmatter off; `frontmatter` loads it safely (with
the fixes in `repairs`), `fields` turns it into a `ParsedSkill`, and `values` holds what the
stages share.
"""

from __future__ import annotations

import re

from store.models.files import ParseFailure
from store.models.skills import ParsedSkill
from store.skills.parser.fields import (
    MAX_BODY_LINES,
    MAX_COMPATIBILITY_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    RELATION_KEYS,
    SPEC_KEYS,
    _build,
    is_valid_skill_name,
    split_relation_targets,
)
from store.skills.parser.frontmatter import MAX_ALIASES, MAX_DEPTH, MAX_NODES, _load_frontmatter
from store.skills.parser.values import _Reject

__all__ = [
    "MAX_ALIASES",
    "MAX_BODY_LINES",
    "MAX_COMPATIBILITY_CHARS",
    "MAX_DEPTH",
    "MAX_DESCRIPTION_CHARS",
    "MAX_FILE_BYTES",
    "MAX_FRONTMATTER_BYTES",
    "MAX_NAME_CHARS",
    "MAX_NODES",
    "RELATION_KEYS",
    "SPEC_KEYS",
    "is_valid_skill_name",
    "parse_skill_md",
    "split_relation_targets",
]

MAX_FILE_BYTES: int = 4 * 1024 * 1024
MAX_FRONTMATTER_BYTES: int = 256 * 1024

_OPENING_RE = re.compile(r"---[ \t]*(?:\n|$)")
_CLOSING_RE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def parse_skill_md(data: bytes, folder_name: str) -> ParsedSkill | ParseFailure:
    """Parse one SKILL.md; never raises, never executes anything."""
    try:
        text = _decode(data)
        front, body = _split_frontmatter(text)
        loaded = _load_frontmatter(front)
        return _build(loaded, body, folder_name)
    except _Reject as rejected:
        return rejected.failure


def _decode(data: bytes) -> str:
    """Check size and encoding; return text with LF line endings and no BOM."""
    if len(data) > MAX_FILE_BYTES:
        raise _Reject("too_large", f"file is {len(data):,} bytes (limit {MAX_FILE_BYTES:,})")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _Reject("binary", f"contains a NUL byte at byte {nul}; looks like a binary file")
    skipped = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Reject("invalid_utf8", f"not valid UTF-8 at byte {exc.start + skipped}") from None
    if not text.strip():
        raise _Reject("empty", "file is empty" if not text else "file contains only whitespace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_frontmatter(text: str) -> tuple[str, str]:
    """Return (frontmatter, body); the file must open with a `---` line."""
    opening = _OPENING_RE.match(text)
    if opening is None:
        raise _Reject("no_frontmatter", "file does not start with a '---' frontmatter line")
    closing = _CLOSING_RE.search(text, opening.end())
    if closing is None:
        raise _Reject("unterminated_frontmatter", "frontmatter opened on line 1 is never closed")
    front = text[opening.end() : closing.start()]
    size = len(front.encode("utf-8"))
    if size > MAX_FRONTMATTER_BYTES:
        raise _Reject(
            "frontmatter_too_large",
            f"frontmatter is {size:,} bytes (limit {MAX_FRONTMATTER_BYTES:,})",
        )
    return front, text[closing.end() + 1 :]
