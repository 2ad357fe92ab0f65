"""Untrusted text made safe to show: control and invisible characters become visible escapes.

Pure functions with no I/O, shared by the lint, the CLI and the widgets. Rich markup is not
touched here (it is only dangerous when parsed, and nothing parses it: widgets use `Text`).
"""

from __future__ import annotations

import json
import os
import unicodedata
from typing import Any

_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Format (bidi, zero-width, tags), line/paragraph separators and surrogates.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Cs"})


def visible(ch: str) -> str:
    """One character as it is safe to print: control and invisible ones become escapes."""
    if " " <= ch <= "~":
        return ch
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    category = unicodedata.category(ch)
    if category == "Cc":
        return f"\\x{ord(ch):02x}"
    if category in _INVISIBLE_CATEGORIES:
        return f"<U+{ord(ch):04X}>"
    return ch


def _line(line: str) -> str:
    # isprintable() runs in C and is False for every character `visible` would change.
    return line if line.isprintable() else "".join(map(visible, line))


def neutralise(text: str, *, keep_newlines: bool = True, tabs: int = 4) -> str:
    """Multi-line text with newlines kept (or folded to spaces) and tabs expanded."""
    text = text.replace("\r\n", "\n").expandtabs(tabs)
    lines = text.split("\n")
    return ("\n" if keep_newlines else " ").join(_line(line) for line in lines)


def one_line(text: str, limit: int = 200) -> str:
    """Whitespace folded to single spaces, neutralised, shortened with an ellipsis."""
    return excerpt(" ".join(text.split()), limit)


def excerpt(text: str, limit: int = 160) -> str:
    """Single-line, printable form of `text`, at most `limit` characters (cut with "…"),
    never cutting an escape in half."""
    if limit <= 0:
        return ""
    # Escapes only ever lengthen text, so limit + 1 source characters decide the cut.
    pieces = [visible(ch) for ch in text[: limit + 1]]
    if len(text) <= limit and sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > limit - 1:
            break
        kept.append(piece)
        used += len(piece)
    return "".join(kept) + "…"


def safe_json(value: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal: UTF-8 text kept readable, but every character `neutralise` would
    escape (C0 and C1 controls, DEL, bidi and zero-width format characters, separators) is a
    `\\uXXXX` escape. `json.dumps` escapes only U+0000–U+001F by itself, so a raw CSI (U+009B)
    or a bidi override would otherwise reach the terminal. The data decodes unchanged."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    # Outside strings JSON is printable ASCII, spaces and newlines: only strings change.
    return "\n".join(line if line.isprintable() else _json_line(line) for line in text.split("\n"))


def _json_line(line: str) -> str:
    return "".join(ch if ch.isprintable() else _json_escape(ch) for ch in line)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def home_relative(path: str, home: str | None = None) -> str:
    """`path` with the user's home folder written as `~` (shorter, and the same on every
    machine for files under the home); other paths unchanged."""
    base = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    if base and (path == base or path.startswith(base + "/")):
        return "~" + path[len(base) :]
    return path


def plural(count: int, one: str, many: str = "") -> str:
    """`1 event`, `2 events`, `1,200 decisions` (`many` for irregular plurals)."""
    return f"{count:,} {one if count == 1 else (many or one + 's')}"
