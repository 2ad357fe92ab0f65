"""Rules about what text hides rather than what it says: invisible or bidirectional characters
(`hidden_unicode`), raw control characters (`terminal_escape`) and over-long lines, encoded
blobs or files (`oversized_blob`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from store.skills.lint.rules import _MAX_PER_RULE, _Hit
from store.text import visible

#: A single line, or a base64/hex run or block, longer than this is an `oversized_blob`.
MAX_BLOB_CHARS: int = 20_000
_MAX_FILE_CHARS = 1_000_000


# --------------------------------------------------------------------------- per-line char rules

_HIDDEN = re.compile(
    "[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# Legitimate uses, removed before looking: emoji ZWJ sequences, subdivision flags
# (black flag + tag letters), and ZWJ/ZWNJ inside Arabic-script and Indic words.
_EMOJI = "\u2600-\u27bf\ufe0f\U0001f000-\U0001faff"
_SCRIPT = "\u0600-\u08ff\u0900-\u0dff\ufb50-\ufdff\ufe70-\ufefc"
_BENIGN_HIDDEN = re.compile(
    f"(?<=[{_EMOJI}])\u200d(?=[{_EMOJI}])"
    "|(?<=\U0001f3f4)[\U000e0020-\U000e007e]{1,8}\U000e007f"
    f"|(?<=[{_SCRIPT}])[\u200c\u200d](?=[{_SCRIPT}])"
)
_CHAR_WINDOW = 4_096
_CONTROL_CHARS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{_CONTROL_CHARS}]")
_CONTROL_LINE = re.compile(f"[^\n{_CONTROL_CHARS}]*[{_CONTROL_CHARS}][^\n]*")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _per_line(
    text: str, pattern: re.Pattern[str], pos: int, clean: re.Pattern[str] | None = None
) -> Iterator[tuple[int, list[str]]]:
    """(offset of the first hit, distinct characters) for each line `pattern` matches."""
    while (m := pattern.search(text, pos)) is not None:
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        # Look at a bounded window so one huge line costs O(window), not O(line) per hit.
        window_end = min(end, m.start() + _CHAR_WINDOW)
        # One character of lead-in: `clean` looks behind (emoji before a ZWJ).
        seg_start = max(m.start() - 1, text.rfind("\n", 0, m.start()) + 1, 0)
        segment = text[seg_start:window_end]
        if clean is not None:
            segment = clean.sub(_blank, segment)  # same length: offsets stay exact
        first = pattern.search(segment)
        if first is None:  # only benign uses so far: keep looking further along this line
            pos = window_end
            continue
        yield seg_start + first.start(), list(dict.fromkeys(pattern.findall(segment)))
        pos = end + 1


def _hidden_hits(text: str) -> Iterator[_Hit]:
    start = 1 if text.startswith("\ufeff") else 0  # a leading BOM is normal
    for offset, chars in _per_line(text, _HIDDEN, start, _BENIGN_HIDDEN):
        names = ", ".join(f"U+{ord(c):04X}" for c in chars[:8])
        more = f" and {len(chars) - 8} more" if len(chars) > 8 else ""
        yield _Hit("hidden_unicode", "high", f"invisible or bidi characters: {names}{more}", offset)


def _control_hits(text: str) -> Iterator[_Hit]:
    lines = _per_line(text, _CONTROL, 0)
    for count, (offset, chars) in enumerate(lines, 1):
        message = "raw control characters: " + ", ".join(visible(c) for c in chars[:8])
        yield _Hit("terminal_escape", "medium", message, offset)
        if count == _MAX_PER_RULE:
            # Colour-coded logs put ESC on every line; count the rest in one C-level pass.
            rest_from = text.find("\n", offset) + 1
            rest = len(_CONTROL_LINE.findall(text, rest_from)) if rest_from else 0
            if rest:
                yield _Hit("terminal_escape", "medium", "", -1, more=rest)
            return


# --------------------------------------------------------------------------- oversized_blob

_NOT_B64 = re.compile(r"[^A-Za-z0-9+/=_-]+")
_B64_BLOCK = re.compile(r"\n(?:[A-Za-z0-9+/]{60,100}={0,2}\r?\n)+")


def _line_blob(line: str) -> str:
    longest = max(map(len, _NOT_B64.split(line)))
    if longest > MAX_BLOB_CHARS:
        return f"base64/hex-like run of {longest:,} characters"
    return f"line of {len(line):,} characters"


def _blob_hits(text: str, lines: Sequence[str]) -> Iterator[_Hit]:
    if len(text) > _MAX_FILE_CHARS:
        message = f"file is {len(text):,} characters (over {_MAX_FILE_CHARS:,})"
        yield _Hit("oversized_blob", "medium", message, -1)
    if max(map(len, lines)) > MAX_BLOB_CHARS:
        offset = 0
        for line in lines:
            if len(line) > MAX_BLOB_CHARS:
                yield _Hit("oversized_blob", "medium", _line_blob(line), offset)
            offset += len(line) + 1
    if len(text) > MAX_BLOB_CHARS:
        yield from _block_hits(text)


def _block_hits(text: str) -> Iterator[_Hit]:
    """Base64 wrapped at 60-100 columns (PEM, MIME) hides as much as one long line."""
    for m in _B64_BLOCK.finditer(text):
        block = m.group(0)
        size = len(block) - block.count("\n") - block.count("\r")
        if size > MAX_BLOB_CHARS:
            message = f"base64 block of {size:,} characters over {block.count(chr(10)) - 1} lines"
            yield _Hit("oversized_blob", "medium", message, m.start() + 1)
