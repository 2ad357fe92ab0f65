"""Lines and records: a file's lines read in bounded chunks, decoded as JSON tolerantly, and
classified into the records a session is built from (the rest counted by skip reason)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from json.scanner import make_scanner
from typing import IO, Any, cast

#: Longer lines (newline included) are skipped as `line_too_long`, read in bounded chunks.
MAX_LINE_BYTES = 8 * 1024 * 1024

#: Record types turned into messages (and `progress` records of `AGENT_PROGRESS`).
USED_TYPES = frozenset({"user", "assistant", "system", "summary"})
#: The `progress` data type that carries a subagent's message (FORMATS §2.3).
AGENT_PROGRESS = "agent_progress"
#: Record types Claude Code writes that carry nothing for the librarian (FORMATS §2.2);
#: `progress` counts here unless it is a subagent's message.
IGNORED_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
        "custom-title",
        "ai-title",
        "agent-name",
        "agent-setting",
        "permission-mode",
        "mode",
        "pr-link",
        "last-prompt",
        "bridge-session",
    }
)

_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_MAX_SKIP_KEYS = 64  # hostile type names must not grow `skipped` without bound


def _read_lines(handle: IO[bytes], size: int) -> Iterator[bytes | None]:
    """Lines of the first `size` bytes of `handle`; None for a line longer than
    `MAX_LINE_BYTES`. Read in blocks of `_CHUNK` bytes: an overlong line is dropped block by
    block, so no more than that is ever held."""
    remaining = size
    carried: list[bytes] = []  # the start of a line that runs past the block read so far
    held = 0
    overlong = False  # the carried line is past `MAX_LINE_BYTES`: its rest is dropped
    while remaining > 0 and (block := handle.read(min(_CHUNK, remaining))):
        remaining -= len(block)  # a short read: the file shrank, and the next read is empty
        start = 0
        while (end := block.find(b"\n", start)) >= 0:
            line = block[start : end + 1]
            start = end + 1
            if carried or overlong:
                held += len(line)
                yield None if overlong or held > MAX_LINE_BYTES else b"".join([*carried, line])
                carried, held, overlong = [], 0, False
            else:
                yield line  # within one block: never overlong
        if start < len(block) and not overlong:
            held += len(block) - start
            overlong = held > MAX_LINE_BYTES
            carried = [] if overlong else [*carried, block[start:]]
    if carried or overlong:  # an unterminated last line
        yield None if overlong else b"".join(carried)


def parse_lines(
    lines: Iterable[bytes], file: str, start_line: int = 1
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Tolerant JSONL decoding: the records of the types in `USED_TYPES` and the
    `agent_progress` records, each with `_file` and `_line` (1-based) added, and the skipped
    lines counted by reason."""
    skipped: Counter[str] = Counter()
    records = list(_iter_records(lines, file, start_line, skipped))
    return records, dict(skipped)


def _iter_records(
    lines: Iterable[bytes | None], file: str, start_line: int, skipped: Counter[str]
) -> Iterator[dict[str, Any]]:
    iterator = iter(lines)
    raw = next(iterator, _END)
    number = start_line
    loads = _loads_line
    while raw is not _END:
        following = next(iterator, _END)
        try:  # the usual line: `_decode`'s answer without its checks
            if raw is None or len(raw) > MAX_LINE_BYTES or raw[:1] == b"\xef":  # or a BOM
                raise ValueError
            obj, reason = loads(raw.decode("utf-8")), ""
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            obj, reason = _decode(raw, following is _END)
        if reason:
            skipped[reason] += 1
        elif obj is not _BLANK:
            kind = obj.get("type") if obj.__class__ is dict else None
            used = kind.__class__ is str and kind in USED_TYPES
            record = obj if used else _classify(obj, skipped)
            if record is not None:
                record["_file"] = file
                record["_line"] = number
                yield record
        raw = following
        number += 1


_END: Any = object()  # past the last line


#: The C scanner `json.loads` ends up in, for a line that is one JSON value.
_SCAN: Callable[[str, int], tuple[Any, int]] = make_scanner(cast(Any, json.JSONDecoder()))


def _loads_line(text: str) -> Any:
    """`json.loads(text)` without its layers, for the usual line: a value from its first
    character to its line end. Anything else (leading blanks, a BOM, extra data, no value)
    raises ValueError, and the caller's `_decode` reads the line with `json.loads` itself."""
    try:
        obj, end = _SCAN(text, 0)
    except StopIteration:
        raise ValueError("no JSON value at the line's start") from None
    if end != len(text) and text[end:].strip(" \t\n\r"):
        raise ValueError("extra data after the value")
    return obj


_BLANK = object()


def _decode(raw: bytes | None, last: bool) -> tuple[Any, str]:
    """(decoded JSON, "") or (None, skip reason); `_BLANK` for a blank line."""
    if raw is None or len(raw) > MAX_LINE_BYTES:
        return None, "line_too_long"
    # Only a file reader's last line can lack its newline: half-written, not corrupt.
    unterminated = last and not raw.endswith(b"\n")
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "truncated_last_line" if unterminated else "invalid_utf8"
    try:
        return json.loads(text), ""
    except RecursionError:
        return None, "truncated_last_line" if unterminated else "too_deep"
    except ValueError:  # JSONDecodeError, and ints longer than Python's digit limit
        if not text.strip():
            return _BLANK, ""
        return None, "truncated_last_line" if unterminated else "invalid_json"


def _classify(obj: Any, skipped: Counter[str]) -> dict[str, Any] | None:
    """The record if its type is used; otherwise count why not."""
    if not isinstance(obj, dict):
        skipped["not_an_object"] += 1
        return None
    kind = obj.get("type")
    if isinstance(kind, str) and kind in USED_TYPES:
        return obj
    if kind == "progress":
        return _classify_progress(obj, skipped)
    if isinstance(kind, str) and kind in IGNORED_TYPES:
        skipped[f"ignored:{kind}"] += 1
        return None
    skipped["unknown_type"] += 1
    if isinstance(kind, str) and kind:
        key = f"unknown_type:{kind[:40]}"
        if key in skipped or len(skipped) < _MAX_SKIP_KEYS:
            skipped[key] += 1
    return None


def _classify_progress(obj: dict[str, Any], skipped: Counter[str]) -> dict[str, Any] | None:
    """A subagent's message (`agent_progress`) is used; other progress is counted by kind."""
    data = obj.get("data")
    kind = data.get("type") if isinstance(data, dict) else None
    if kind == AGENT_PROGRESS:
        return obj
    key = f"ignored:progress:{kind[:40]}" if isinstance(kind, str) and kind else ""
    if not key or (key not in skipped and len(skipped) >= _MAX_SKIP_KEYS):
        key = "ignored:progress"
    skipped[key] += 1
    return None
