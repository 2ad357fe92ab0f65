"""Lines and records: a file's lines read in bounded chunks, decoded as JSON tolerantly, and
classified into the records a session is built from (the rest counted by skip reason)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import IO, Any

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


class _Reader:
    """Chunks of the lines of a file's first `size` bytes, at most `_CHUNK` bytes each."""

    def __init__(self, handle: IO[bytes], size: int) -> None:
        self.handle, self.remaining = handle, size

    def chunk(self) -> bytes:
        if self.remaining <= 0:
            return b""
        data = self.handle.readline(min(_CHUNK, self.remaining))
        self.remaining = self.remaining - len(data) if data else 0  # empty: the file shrank
        return data


def _read_lines(handle: IO[bytes], size: int) -> Iterator[bytes | None]:
    """Lines of the first `size` bytes of `handle`; None for an overlong line."""
    reader = _Reader(handle, size)
    while chunk := reader.chunk():
        yield chunk if chunk.endswith(b"\n") else _long_line(reader, chunk)


def _long_line(reader: _Reader, first: bytes) -> bytes | None:
    """A line longer than one chunk (or an unterminated last line). Past `MAX_LINE_BYTES` the
    rest is read and dropped chunk by chunk, so no more than that is ever held."""
    parts, held = [first], len(first)
    while not parts[-1].endswith(b"\n") and (chunk := reader.chunk()):
        held += len(chunk)
        if held > MAX_LINE_BYTES:
            while not chunk.endswith(b"\n") and (chunk := reader.chunk()):
                pass
            return None
        parts.append(chunk)
    return b"".join(parts)


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
    for number, raw, last in _numbered(lines, start_line):
        obj, reason = _decode(raw, last)
        if reason:
            skipped[reason] += 1
            continue
        if obj is _BLANK:
            continue
        record = _classify(obj, skipped)
        if record is not None:
            record["_file"] = file
            record["_line"] = number
            yield record


def _numbered(
    lines: Iterable[bytes | None], start: int
) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, line, is it the last one)."""
    iterator = iter(lines)
    try:
        previous = next(iterator)
    except StopIteration:
        return
    number = start
    for line in iterator:
        yield number, previous, False
        number += 1
        previous = line
    yield number, previous, True


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
