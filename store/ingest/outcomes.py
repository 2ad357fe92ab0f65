"""Outcomes inferred from transcripts (issue 5): did the turn a skill ran in end well?

A `Skill` tool call opens a window that runs to the end of its turn (the next genuine user
prompt, not a tool result, in the same stream: the main conversation or one subagent). A
tool error in that window counts against the skill unless a later call of the same tool on
the same target succeeds (same `file_path` for the file tools, same first command word for
Bash — a command that succeeds vouches for every program of its `&&` chain —, the tool name
otherwise). Any unresolved error: an inferred FAILURE; none: an inferred
SUCCESS. A `Skill` call whose own result is an error never launched the skill: no outcome.

The outcome is dated at the `Skill` call (the transcript's time, not the ingest time), so
health windows see when the skill ran. One outcome per (session, skill, call): re-ingesting a
session (the Stop hook fires every turn) records only calls it has not recorded yet.
Everything here is one pass over the messages.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from store.ingest.redact import redact
from store.models import ParsedSession, ToolResult, ToolUse, TranscriptMessage
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

#: Tools whose target is the file they touch.
FILE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "Read", "NotebookEdit"})
#: Unresolved errors named in an outcome's detail (the rest are counted).
DETAIL_ERRORS = 3
UNKNOWN_TOOL = "unknown tool"

_FIELD = re.compile(r'"(file_path|notebook_path|command)"\s*:\s*"((?:[^"\\]|\\.)*)')
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

Key = tuple[str, str]  # (tool name, target)


@dataclass(frozen=True)
class InferredOutcome:
    """One `Skill` call's inferred outcome, before it is matched to the catalog."""

    skill: str  # the name the call used (may carry a plugin prefix)
    at: str  # the call's transcript time, UTC ISO-8601 with microseconds
    call: str  # where the call is: "file:line"
    success: bool
    detail: str  # neutralised, one line


def infer(parsed: ParsedSession) -> list[InferredOutcome]:
    """The inferred outcome of every `Skill` call in a session, in transcript order."""
    messages = parsed.messages
    if not any(u.skill for m in messages for u in m.tool_uses):
        return []
    results: dict[str, ToolResult] = {}
    for message in messages:
        for result in message.tool_results:
            results.setdefault(result.tool_use_id, result)
    called = {u.id for m in messages for u in m.tool_uses if u.id}
    streams: dict[tuple[str, str], list[TranscriptMessage]] = defaultdict(list)
    for message in messages:
        lane = (message.agent_id or "sidechain") if message.is_sidechain else ""
        streams[(message.file, lane)].append(message)
    found: list[InferredOutcome] = []
    for stream in streams.values():
        found += _stream(stream, results, called, _stamp(parsed.started_at))
    return found


def _stream(
    stream: list[TranscriptMessage],
    results: dict[str, ToolResult],
    called: set[str],
    fallback: str,
) -> list[InferredOutcome]:
    found: list[InferredOutcome] = []
    turn: list[TranscriptMessage] = []
    stamps: list[str] = []
    last = fallback
    for message in stream:
        if message.role == "user" and message.kind == "prompt" and turn:
            found += _judge(turn, stamps, results, called)
            turn, stamps = [], []
        last = _stamp(message.timestamp) or last
        turn.append(message)
        stamps.append(last)
    if turn:
        found += _judge(turn, stamps, results, called)
    return found


def _judge(
    turn: list[TranscriptMessage],
    stamps: list[str],
    results: dict[str, ToolResult],
    called: set[str],
) -> list[InferredOutcome]:
    """Outcomes of the turn's `Skill` calls: one backward pass over its tool calls (in call
    order; a result whose call is unknown sits where the result is)."""
    if not any(u.skill for m in turn for u in m.tool_uses):
        return []
    steps: list[tuple[int, ToolUse | None, ToolResult | None]] = []
    for position, message in enumerate(turn):
        steps += [(position, use, results.get(use.id)) for use in message.tool_uses]
        steps += [
            (position, None, r)
            for r in message.tool_results
            if r.is_error and r.tool_use_id not in called
        ]
    succeeded: set[Key] = set()
    unresolved: list[Key] = []  # latest first
    found: list[InferredOutcome] = []
    for position, use, result in reversed(steps):
        if use is not None and use.skill and not (result is not None and result.is_error):
            message = turn[position]
            if stamps[position]:  # without any time the run cannot be placed in a window
                found.append(
                    InferredOutcome(
                        skill=use.skill,
                        at=stamps[position],
                        call=f"{message.file}:{message.line_start}",
                        success=not unresolved,
                        detail=describe(unresolved[::-1]),
                    )
                )
        if result is None:
            continue
        if use is None:
            unresolved.append((UNKNOWN_TOOL, ""))
        elif not result.is_error:
            succeeded.update(resolved_by(use))
        elif (key := target(use)) not in succeeded:
            unresolved.append(key)
    return found[::-1]


def target(use: ToolUse) -> Key:
    """What a later call must succeed on to resolve an error of `use`."""
    if use.name in FILE_TOOLS:
        return use.name, _field(use.input_text, ("file_path", "notebook_path"))
    if use.name == "Bash":
        return use.name, first_word(_field(use.input_text, ("command",)))
    if use.skill:
        return use.name, use.skill
    return use.name, ""


def resolved_by(use: ToolUse) -> list[Key]:
    """The targets a successful call vouches for: its own, and for a Bash `a && b && c`
    every program of the chain (each one ran and succeeded)."""
    if use.name != "Bash":
        return [target(use)]
    return [(use.name, word) for word in programs(_field(use.input_text, ("command",)))]


def first_word(command: str) -> str:
    """The program a shell command runs: after `cd … &&` and `VAR=value` prefixes, by its
    base name (`.venv/bin/pytest -q` -> `pytest`)."""
    found = programs(command)
    return found[0] if found else ""


def programs(command: str) -> list[str]:
    """The programs of a command's `&&` chain, in order, `cd` left out (quotes are not
    parsed: a rough reading is enough to match an error with a later success)."""
    found = []
    for part in command.split("&&"):
        for word in part.split():
            if not _ASSIGNMENT.match(word):
                program = word.rstrip(";").rsplit("/", 1)[-1]
                if program != "cd":
                    found.append(program)
                break
    return found


def _field(input_text: str, names: tuple[str, ...]) -> str:
    try:
        value: Any = json.loads(input_text)
    except (ValueError, RecursionError):  # cut to the size bound: look for the field itself
        value = {m.group(1): _unescape(m.group(2)) for m in _FIELD.finditer(input_text)}
    if not isinstance(value, dict):
        return ""
    for name in names:
        found = value.get(name)
        if isinstance(found, str) and found:
            return found
    return ""


def _unescape(raw: str) -> str:
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw


def describe(unresolved: list[Key]) -> str:
    """A short, neutral account of the turn's unresolved errors (oldest first)."""
    if not unresolved:
        return "turn ended without unresolved errors"
    counts = Counter(unresolved)
    named = [_label(key, n) for key, n in list(counts.items())[:DETAIL_ERRORS]]
    more = len(counts) - DETAIL_ERRORS
    tail = f", and {more} more" if more > 0 else ""
    total = len(unresolved)
    plural = "s" if total != 1 else ""
    return one_line(
        f"turn ended with {total} unresolved error{plural}: {', '.join(named)}{tail}", 300
    )


def _label(key: Key, count: int) -> str:
    tool, what = key
    if tool in FILE_TOOLS and what:
        what = "/".join(what.replace("\\", "/").rstrip("/").split("/")[-2:])
    text = f"{one_line(tool, 32)} `{one_line(redact(what), 48)}`" if what else one_line(tool, 32)
    return f"{text} ×{count}" if count > 1 else text


def _stamp(value: str) -> str:
    """A transcript timestamp as the event log writes times (UTC, microseconds); "" if it
    is not one."""
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


# -- recording -------------------------------------------------------------------------------


def record(
    library: Kernel, conn: sqlite3.Connection, session_id: str, found: list[InferredOutcome]
) -> int:
    """Append a `skill.outcome_recorded` (inferred) event for every outcome of a catalog skill
    not recorded before; inside the caller's write transaction. Returns how many."""
    skills: dict[str, tuple[int, str, int] | None] = {}
    recorded: dict[tuple[int, str], int] = {}
    added = 0
    for outcome in found:
        if outcome.skill not in skills:
            skills[outcome.skill] = _resolve(conn, outcome.skill)
        skill = skills[outcome.skill]
        if skill is None:
            continue  # not a skill the catalog knows (yet): nothing to keep it against
        skill_id, name, version = skill
        key = (skill_id, outcome.at)
        if key not in recorded:
            recorded[key] = _recorded(conn, skill_id, outcome.at, session_id)
        recorded[key] -= 1
        if recorded[key] >= 0:
            continue  # this call's outcome is already on record
        library.append_event(
            conn,
            "skill.outcome_recorded",
            f"skill:{name}",
            {
                "skill_id": skill_id,
                "reason": outcome.detail,
                "detail": outcome.detail,
                "version_no": version,
                "success": outcome.success,
                "session_id": session_id,
                "inferred": True,
                "at": outcome.at,
                "call": outcome.call,
            },
        )
        added += 1
    return added


def _resolve(conn: sqlite3.Connection, used: str) -> tuple[int, str, int] | None:
    """(skill id, name, current version) for the name a `Skill` call used; a `plugin:name`
    call falls back to the bare name. Retired and uninstalled skills count (their outcomes
    are part of their record)."""
    names = [used]
    if ":" in used:
        names.append(used.rsplit(":", 1)[-1])
    for name in names:
        row = conn.execute(
            "SELECT skill_id, name, current_version FROM skills WHERE name=?"
            " ORDER BY status = 'uninstalled', scope_rank, root_rank, fs_path LIMIT 1",
            (name,),
        ).fetchone()
        if row is not None and row[2]:
            return int(row[0]), str(row[1]), int(row[2])
    return None


def _recorded(conn: sqlite3.Connection, skill_id: int, at: str, session_id: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM outcomes WHERE skill_id=? AND ts=? AND session_id=? AND inferred=1",
        (skill_id, at, session_id),
    ).fetchone()
    return int(row[0])
