"""Messages under construction: text bounded and cleaned, skill names read from `Skill` calls
and base-directory lines, and the message a record (or several sharing `message.id`) becomes."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any, NamedTuple

from store.models.sessions import ToolResult, ToolUse, TranscriptMessage

#: Text kept per message, tool input and tool result; the rest is cut with a marker.
MAX_TEXT_CHARS = 20_000
SKILL_BASE_PREFIX = "Base directory for this skill:"

_CUT = "\n[… {} characters cut]"
_PATH_SEP = re.compile(r"[\\/]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _bound(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + _CUT.format(len(text) - MAX_TEXT_CHARS)


def _clean(text: str) -> str:
    """Replace lone surrogates (valid JSON escapes, invalid UTF-8) so the text can be stored."""
    if text.isascii():  # no surrogate; much cheaper than encoding
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _skill_from_input(value: Any) -> str:
    """The skill a `Skill` tool call launched (`skill`, else `command`, else `name`)."""
    if not isinstance(value, dict):
        return ""
    for key in ("skill", "command", "name"):
        name = value.get(key)
        if isinstance(name, str) and name.strip().lstrip("/"):
            return name.strip().lstrip("/")
    return ""


def _skill_from_base_dir(text: str) -> str:
    """`Base directory for this skill: /a/b/pdf` -> `pdf` (the folder's last component)."""
    if not text.startswith(SKILL_BASE_PREFIX):
        return ""
    folder = text[len(SKILL_BASE_PREFIX) :].split("\n", 1)[0].strip().rstrip("/\\")
    return _PATH_SEP.split(folder)[-1] if folder else ""


def _unique_skills(names: list[str]) -> tuple[str, ...]:
    """Names in first-seen order. `plugin:name` becomes `name` when `name` was also seen
    (a Skill call and its base directory name the same skill); otherwise it stays."""
    bare = set(names)
    out: dict[str, None] = {}
    for name in names:
        short = name.rsplit(":", 1)[-1]
        out[short if short in bare else name] = None
    return tuple(out)


def _digest(agent_id: str, record: dict[str, Any]) -> str:
    """The identity of a message without a uuid: a digest of its agent and content ("" if
    it cannot be encoded)."""
    try:
        text = json.dumps(record, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return ""
    return hashlib.blake2b(f"{agent_id}\0{text}".encode(), digest_size=16).hexdigest()


def _timestamp_key(value: str) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


class _Msg:
    """A message under construction (assistant lines sharing `message.id` land in one)."""

    __slots__ = (
        "agent_id",
        "cut",
        "file",
        "is_meta",
        "is_sidechain",
        "kind",
        "line_end",
        "line_start",
        "lines",
        "parts",
        "role",
        "size",
        "timestamp",
        "tool_results",
        "tool_uses",
        "uuid",
        "uuids",
    )

    def __init__(self, record: dict[str, Any], env: _Envelope, role: str, kind: str) -> None:
        self.file: str = record["_file"]
        self.line_start = self.line_end = int(record["_line"])
        self.lines = 1
        self.uuid, self.timestamp = env.uuid, env.timestamp
        self.is_sidechain, self.agent_id, self.is_meta = env.sidechain, env.agent_id, env.meta
        self.role, self.kind = role, kind
        self.parts: list[str] = []
        self.size = self.cut = 0
        self.tool_uses: list[ToolUse] = []
        self.tool_results: list[ToolResult] = []
        self.uuids = {env.uuid} if env.uuid else set()

    def add_text(self, text: str) -> None:
        room = MAX_TEXT_CHARS - self.size
        if not text:
            return
        if room <= 0:
            self.cut += len(text)
            return
        self.parts.append(text[:room])
        self.size += min(len(text), room) + 1
        self.cut += max(0, len(text) - room)

    def absorb(self, other: _Msg) -> None:
        """Take in a later part of the same message (another line sharing `message.id`)."""
        self.line_end = max(self.line_end, other.line_end)
        self.lines += other.lines
        self.uuids |= other.uuids
        for part in other.parts:
            self.add_text(part)
        self.cut += other.cut
        self.tool_uses += other.tool_uses

    def text(self) -> str:
        text = "\n".join(self.parts)
        return text + _CUT.format(self.cut) if self.cut else text

    def build(self, index: int) -> TranscriptMessage:
        text = self.text()
        kind = self.kind
        if self.role == "assistant":
            kind = "tool_use" if self.tool_uses and not text else "text"
        return TranscriptMessage(  # positional: half the cost of keywords, once per message
            index,
            self.file,
            self.line_start,
            self.line_end,
            _clean(self.uuid),
            self.role,
            kind,
            _clean(text),
            _clean(self.timestamp),
            tuple(self.tool_uses),
            tuple(self.tool_results),
            self.is_sidechain,
            _clean(self.agent_id),
            self.is_meta,
        )


class _Envelope(NamedTuple):
    """The per-record fields every message keeps."""

    uuid: str
    timestamp: str
    sidechain: bool
    agent_id: str
    meta: bool


class _Piece(NamedTuple):
    """A subagent's message read from one `agent_progress` record, before it is settled."""

    key: str  # the message's uuid, else a digest of its content ("" if neither)
    message_id: str  # `message.id` of an assistant message (its parts are merged)
    message: _Msg
