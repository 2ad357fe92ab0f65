"""Untrusted text made safe to show: control characters become visible escapes.

Pure functions with no I/O, shared by the CLI and the widgets. Rich markup is not touched
here (it is only dangerous when parsed, and nothing parses it: widgets use `Text`).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def neutralise(text: str, *, keep_newlines: bool = True, tabs: int = 4) -> str:
    """Replace control, bidi and zero-width characters by visible escapes."""
    if not keep_newlines:
        text = text.replace("\r\n", " ").replace("\n", " ")
    text = text.replace("\t", " " * tabs)
    return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))


def one_line(text: str, limit: int = 200) -> str:
    """Single line, neutralised, shortened with an ellipsis."""
    flat = " ".join(neutralise(text, keep_newlines=False).split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"
