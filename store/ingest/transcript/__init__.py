"""Claude Code session transcripts (JSONL) into `ParsedSession`s (FORMATS §2, DESIGN §6).

The format is internal to Claude Code and drifts between releases, so reading is tolerant:
a bad line is skipped and counted under a reason, never raised. Reasons in `skipped`:

- line level: `invalid_json`, `invalid_utf8`, `not_an_object`, `line_too_long`, `too_deep`,
  `truncated_last_line` (an unterminated last line that does not parse: the file may be
  growing). Blank lines are ignored without a count.
- record level: `unknown_type` (plus `unknown_type:<type>` per type name), `ignored:<type>`
  for known types this parser has no use for (not bad data), `bad_field` (a line with a field
  of the wrong type: dropped when nothing usable is left, else kept with that value ignored),
  `empty_message` (a message with nothing readable, e.g. only thinking blocks).
- progress records: `ignored:progress:<data.type>` (hook, bash, MCP… progress; plain
  `ignored:progress` when `data` names no type), and for `agent_progress`:
  `agent_progress:no_message` (no message object: missing, null or bare text),
  `agent_progress:other_message` (a record other than user/assistant),
  `agent_progress:in_subagent_file` (the subagent's own file holds it) and
  `agent_progress:repeated` (a copy of a message an earlier progress record carried).
- session level: `subagent_binary` / `subagent_unreadable` (whole subagent files, not lines).

Subagents inside `progress` records: some Claude Code versions carry a subagent's messages
only as `progress` records in the main file (`data.type = "agent_progress"`, the message
under `data.message`, either a whole record `{type, message, uuid, timestamp…}` or a bare
message `{role, content, id…}`). Each becomes a message of the subagent's thread
(`agent_id` from `data.agentId`, else the record's own `agentId`, else the Task call's id
`parentToolUseID`; always a sidechain), located at the progress record's line of the main
file. They are held apart until the subagent files are read: a message a file also holds
(same uuid) is the file's; a message without a uuid is dropped when its agent has a file (its
copy cannot be told apart); the rest are deduplicated (by uuid, else by content), assistant
parts sharing `message.id` are merged, and they take their place in file order.

Files are read up to the size seen when opened, so lines appended meanwhile wait for the next
parse instead of being read half-written.

This module reads a session's files (`parse_session`, `parse_sources`); `discovery` finds the
files, `records` turns their lines into records, `messages` holds a message under
construction and `session` assembles the records into a `ParsedSession`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from store.files import open_regular
from store.ingest.transcript.discovery import (
    default_project_dirs,
    find_session_files,
    subagent_files,
)
from store.ingest.transcript.messages import MAX_TEXT_CHARS
from store.ingest.transcript.records import (
    MAX_LINE_BYTES,
    _classify,
    _iter_records,
    _read_lines,
    parse_lines,
)
from store.ingest.transcript.session import _Session, _Where
from store.models.files import ParseFailure
from store.models.sessions import ParsedSession

__all__ = [
    "MAX_EXPORT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_TEXT_CHARS",
    "default_project_dirs",
    "find_session_files",
    "parse_lines",
    "parse_session",
    "parse_sources",
    "subagent_files",
]

#: Largest single-JSON `{"loglines": [...]}` export read (it is loaded whole).
MAX_EXPORT_BYTES = 64 * 1024 * 1024
_SNIFF_BYTES = 4096


def parse_session(main_file: Path) -> ParsedSession | ParseFailure:
    """Read a session (main file, then its subagent files). Never raises for bad data."""
    if main_file.suffix == ".json":
        return _parse_export(main_file)
    session = _Session()
    failure = _read_file(main_file, _Where(main_file.name, True), session)
    if failure is not None:
        return failure
    if not session.has_messages():
        return _no_messages(main_file, session.skipped)
    session_id = session.session_id(main_file)
    read = [(os.path.abspath(main_file), main_file.name)]
    read += _read_subagents(main_file, "", session_id, session, set())
    return session.finish(session_id, read)


def parse_sources(
    mains: Iterable[Path], session_id: str, labels: Mapping[Path, str] | None = None
) -> ParsedSession | ParseFailure:
    """One session recorded in several main files (a transcript copied or moved keeps its
    `sessionId`): each main file in path order, then its subagent files, read as session
    `session_id`. A main file keeps the label it was first read under (`labels`: what
    messages and node keys call it); a new one is labelled by its name, or, when another
    main file has that label, by its name under as many of its folders as set it apart."""
    ordered = sorted({Path(os.path.abspath(main)) for main in mains})
    names = _main_labels(ordered, labels or {})
    session = _Session()
    read: list[tuple[str, str]] = []
    sources: list[str] = []
    for main in ordered:
        label = names[main]
        failure = _read_main(main, _Where(label, True), session)
        if failure is not None:
            session.skipped[f"source_{failure.code}"] += 1
            continue
        prefix = label.removesuffix(main.name) if label.endswith(main.name) else ""
        done = {path for path, _ in read}
        these = [(str(main), label), *_read_subagents(main, prefix, session_id, session, done)]
        read += these
        sources += [str(main)] * len(these)
    if not session.has_messages():
        return _no_messages(ordered[0], session.skipped)
    return session.finish(session_id, read, sources)


def _main_labels(mains: list[Path], known: Mapping[Path, str]) -> dict[Path, str]:
    labels = {main: known[main] for main in mains if main in known}
    taken = set(labels.values())
    for main in mains:
        if main in labels:
            continue
        folders = main.parent.parts[1:]
        label, depth = main.name, 0
        while label in taken and depth < len(folders):
            depth += 1
            label = "/".join((*folders[len(folders) - depth :], main.name))
        labels[main] = label
        taken.add(label)
    return labels


def _read_main(path: Path, where: _Where, session: _Session) -> ParseFailure | None:
    if path.suffix == ".json":
        return _read_export(path, where, session)
    return _read_file(path, where, session)


def _read_subagents(
    main_file: Path, prefix: str, session_id: str, session: _Session, done: set[str]
) -> list[tuple[str, str]]:
    """Read `main_file`'s subagent files not in `done`: (absolute path, label) of each read."""
    read: list[tuple[str, str]] = []
    for sub in subagent_files(main_file, session_id):
        path = os.path.abspath(sub)
        if path in done:
            continue
        label = prefix + _relative(sub, main_file.parent)
        where = _Where(label, False, sub.stem.removeprefix("agent-"))
        sub_failure = _read_file(sub, where, session)
        if sub_failure is None:
            read.append((path, label))
        elif sub_failure.code != "empty":
            session.skipped[f"subagent_{sub_failure.code}"] += 1
    return read


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.as_posix()


def _read_file(path: Path, where: _Where, session: _Session) -> ParseFailure | None:
    """Feed `path`'s records to `session`; a ParseFailure if the file cannot be read."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return ParseFailure("empty", f"{path.name}: empty file")
            if b"\x00" in handle.read(_SNIFF_BYTES):
                return ParseFailure("binary", f"{path.name}: binary file (NUL bytes)")
            handle.seek(0)
            lines = _read_lines(handle, size)
            for record in _iter_records(lines, where.file, 1, session.skipped):
                session.add(record, where)
    except OSError as exc:
        return ParseFailure("unreadable", f"{path.name}: {exc.strerror or exc}")
    return None


def _no_messages(path: Path, skipped: Mapping[str, int]) -> ParseFailure:
    lines = sum(n for key, n in skipped.items() if not key.startswith("unknown_type:"))
    reasons = ", ".join(f"{key} {n}" for key, n in sorted(skipped.items()))
    detail = f" ({lines} lines skipped: {reasons})" if lines else ""
    return ParseFailure("no_messages", f"{path.name}: no user or assistant message{detail}")


def _parse_export(path: Path) -> ParsedSession | ParseFailure:
    """The older single-JSON `{"loglines": [records…]}` export."""
    session = _Session()
    failure = _read_export(path, _Where(path.name, True), session)
    if failure is not None:
        return failure
    if not session.has_messages():
        return _no_messages(path, session.skipped)
    return session.finish(session.session_id(path), [(os.path.abspath(path), path.name)])


def _read_export(path: Path, where: _Where, session: _Session) -> ParseFailure | None:
    """Feed an export's records to `session`; `_line` is the record's 1-based position in
    `loglines` (the file has no meaningful lines)."""
    try:
        size = path.stat().st_size
        if size > MAX_EXPORT_BYTES:
            return ParseFailure("too_large", f"{path.name}: {size} bytes (max {MAX_EXPORT_BYTES})")
        with open_regular(path) as handle:
            data = handle.read(MAX_EXPORT_BYTES + 1)
    except OSError as exc:
        return ParseFailure("unreadable", f"{path.name}: {exc.strerror or exc}")
    if not data.strip():
        return ParseFailure("empty", f"{path.name}: empty file")
    if b"\x00" in data[:_SNIFF_BYTES]:
        return ParseFailure("binary", f"{path.name}: binary file (NUL bytes)")
    loglines = _loglines(data)
    if loglines is None:
        return ParseFailure(
            "unsupported", f'{path.name}: neither JSONL nor a {{"loglines": [...]}} export'
        )
    for number, obj in enumerate(loglines, start=1):
        record = _classify(obj, session.skipped)
        if record is not None:
            record["_file"], record["_line"] = where.file, number
            session.add(record, where)
    return None


def _loglines(data: bytes) -> list[Any] | None:
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None
    loglines = document.get("loglines") if isinstance(document, dict) else None
    return loglines if isinstance(loglines, list) else None
