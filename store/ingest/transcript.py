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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import IO, Any, NamedTuple

from store.files import open_regular
from store.models import ParsedSession, ParseFailure, ToolResult, ToolUse, TranscriptMessage

#: Longer lines (newline included) are skipped as `line_too_long`, read in bounded chunks.
MAX_LINE_BYTES = 8 * 1024 * 1024
#: Text kept per message, tool input and tool result; the rest is cut with a marker.
MAX_TEXT_CHARS = 20_000
#: Largest single-JSON `{"loglines": [...]}` export read (it is loaded whole).
MAX_EXPORT_BYTES = 64 * 1024 * 1024

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
SKILL_BASE_PREFIX = "Base directory for this skill:"

_SNIFF_BYTES = 4096
_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_CUT = "\n[… {} characters cut]"
_MAX_SKIP_KEYS = 64  # hostile type names must not grow `skipped` without bound
_MAX_WALK_DEPTH = 8
_MAX_WALK_FILES = 200_000
_SESSION_ID_LINES = 32
_SESSION_ID_BYTES = 4 * 1024 * 1024
_PATH_SEP = re.compile(r"[\\/]")
_SURROGATE = re.compile("[\ud800-\udfff]")


# -- discovery -------------------------------------------------------------------------------


def default_project_dirs(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Claude Code's existing `projects` folders: `CLAUDE_CONFIG_DIR` (comma-separated list)
    or else `~/.claude` and the legacy `~/.config/claude`."""
    raw = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if raw:
        bases = [_expand_home(part.strip(), home) for part in raw.split(",") if part.strip()]
    else:
        bases = [home / ".claude", home / ".config" / "claude"]
    found: list[Path] = []
    seen: set[Path] = set()
    for base in bases:
        projects = base / "projects"
        key = projects.resolve()
        if key not in seen and projects.is_dir():
            seen.add(key)
            found.append(projects)
    return found


def _expand_home(value: str, home: Path) -> Path:
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(value)


def find_session_files(root: Path) -> list[Path]:
    """Main session files: `root` itself if it is a file, else every `*.jsonl` below it that is
    not a subagent file. A legacy `agent-*.jsonl` counts as a session only when its parent
    (`<sessionId>.jsonl` in the same folder) is absent."""
    root = Path(os.path.abspath(root))
    if root.is_file():
        return [root] if root.suffix in (".jsonl", ".json") else []
    if not root.is_dir():
        return []
    return sorted(path for path in _walk_jsonl(root) if not _attached_agent_file(path))


def _walk_jsonl(root: Path) -> Iterator[Path]:
    """`*.jsonl` files below `root`, outside `subagents` folders. Follows folder symlinks but
    visits each folder once (no loops), to a bounded depth and file count."""
    seen: set[tuple[int, int]] = set()
    stack = [(root, 0)]
    count = 0
    while stack:
        folder, depth = stack.pop()
        try:
            stat = folder.stat()
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if is_dir and entry.name != "subagents" and depth < _MAX_WALK_DEPTH:
                stack.append((Path(entry.path), depth + 1))
            elif is_file and entry.name.endswith(".jsonl"):
                count += 1
                if count > _MAX_WALK_FILES:
                    return
                yield Path(entry.path)


def _is_agent_file(path: Path) -> bool:
    return path.name.startswith("agent-") and path.suffix == ".jsonl"


def _attached_agent_file(path: Path) -> bool:
    """A legacy subagent file whose parent session file sits beside it."""
    if not _is_agent_file(path):
        return False
    sid = _first_session_id(path)
    if not sid or any(char in sid for char in "/\\\x00"):  # a name, never a path
        return False
    return (path.parent / f"{sid}.jsonl").is_file()


def subagent_files(main_file: Path, session_id: str) -> list[Path]:
    """The session's subagent files, sorted by name: `<stem>/subagents/agent-*.jsonl`, plus
    legacy `agent-*.jsonl` beside the main file whose records carry `session_id`."""
    found = _glob(main_file.parent / main_file.stem / "subagents", "agent-*.jsonl")
    if not _is_agent_file(main_file):  # an orphan agent file adopts no siblings
        found += [
            path
            for path in _glob(main_file.parent, "agent-*.jsonl")
            if path != main_file and _first_session_id(path) == session_id
        ]
    return sorted(found, key=lambda path: (path.name, str(path)))


def _glob(folder: Path, pattern: str) -> list[Path]:
    try:
        return [path for path in folder.glob(pattern) if path.is_file()]
    except OSError:
        return []


def _first_session_id(path: Path) -> str:
    """The first `sessionId` in the first lines of `path` ("" if none or unreadable)."""
    try:
        stat = path.stat()
    except OSError:
        return ""
    return _cached_session_id(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _cached_session_id(path: str, mtime_ns: int, size: int) -> str:
    # mtime and size are part of the key so that a changed file is read again.
    del mtime_ns
    try:
        with open_regular(path) as handle:
            lines = _read_lines(handle, min(size, _SESSION_ID_BYTES))
            for number, raw in enumerate(lines):
                if number >= _SESSION_ID_LINES:
                    break
                sid = _session_id_of(raw)
                if sid:
                    return sid
    except OSError:
        return ""
    return ""


def _session_id_of(raw: bytes | None) -> str:
    if raw is None:
        return ""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return ""
    sid = record.get("sessionId") if isinstance(record, dict) else None
    return sid if isinstance(sid, str) else ""


# -- lines and records -----------------------------------------------------------------------


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


# -- text helpers ----------------------------------------------------------------------------


def _bound(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + _CUT.format(len(text) - MAX_TEXT_CHARS)


def _clean(text: str) -> str:
    """Replace lone surrogates (valid JSON escapes, invalid UTF-8) so the text can be stored."""
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


# -- assembling a session --------------------------------------------------------------------


@dataclass(frozen=True)
class _Where:
    """The file a record comes from."""

    file: str  # relative to the main file's folder
    is_main: bool
    agent_id: str = ""  # from a subagent file's name, for records without `agentId`


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
        return TranscriptMessage(
            index=index,
            file=self.file,
            line_start=self.line_start,
            line_end=self.line_end,
            uuid=_clean(self.uuid),
            role=self.role,
            kind=kind,
            text=_clean(text),
            timestamp=_clean(self.timestamp),
            tool_uses=tuple(self.tool_uses),
            tool_results=tuple(self.tool_results),
            is_sidechain=self.is_sidechain,
            agent_id=_clean(self.agent_id),
            is_meta=self.is_meta,
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


class _Session:
    """Accumulates records of one session, file by file, in file order."""

    def __init__(self) -> None:
        self.messages: list[_Msg] = []
        self.by_message_id: dict[tuple[str, str], _Msg] = {}
        self.progress: list[_Piece] = []  # held apart until every file is read
        self.file_agents: set[str] = set()  # agents with records in a subagent file
        self.skipped: Counter[str] = Counter()
        self.cwds: Counter[str] = Counter()
        self.main_cwds: Counter[str] = Counter()  # outside sidechains: where the user works
        self.session_ids: Counter[str] = Counter()
        self.branch = self.version = ""
        self.first: tuple[datetime, str] | None = None
        self.last: tuple[datetime, str] | None = None
        self.compactions = 0
        self.skills: list[str] = []
        self.bad = False  # the current record had a field of the wrong type

    # -- fields

    def _str(self, record: dict[str, Any], key: str) -> str:
        value = record.get(key)
        if isinstance(value, str):
            return value
        if value is not None:
            self.bad = True
        return ""

    def _flag(self, record: dict[str, Any], key: str) -> bool:
        value = record.get(key)
        if value is not None and not isinstance(value, bool):
            self.bad = True  # only a real `true` counts ("yes" is not an error flag)
        return value is True

    # -- records

    def add(self, record: dict[str, Any], where: _Where) -> None:
        self.bad = False
        kind = record["type"]
        if kind == "progress":
            self._agent_progress(record)
            return
        env = self._envelope(record, where)
        if not where.is_main and env.agent_id:
            self.file_agents.add(env.agent_id)
        if kind == "user":
            message = self._user(record, env)
        elif kind == "assistant":
            message = self._assistant(record, env)
        elif kind == "system":
            message = self._system(record, env)
        else:
            message = self._summary(record, env)
        self._count(message)

    def _count(self, message: _Msg | None) -> None:
        if message is None:
            self.skipped["bad_field" if self.bad else "empty_message"] += 1
        elif self.bad:
            self.skipped["bad_field"] += 1

    def _envelope(self, record: dict[str, Any], where: _Where) -> _Envelope:
        stamp = self._str(record, "timestamp")
        if stamp:
            self._see_time(stamp)
        sidechain = self._flag(record, "isSidechain")
        if where.is_main:
            self._see_main(record, sidechain)
        agent_id = self._str(record, "agentId") or where.agent_id
        meta = self._flag(record, "isMeta")
        return _Envelope(self._str(record, "uuid"), stamp, sidechain, agent_id, meta)

    def _see_main(self, record: dict[str, Any], sidechain: bool) -> None:
        cwd = self._str(record, "cwd")
        if cwd:
            self.cwds[cwd] += 1
            if not sidechain:
                self.main_cwds[cwd] += 1
        sid = self._str(record, "sessionId")
        if sid:
            self.session_ids[sid] += 1
        self.branch = self._str(record, "gitBranch") or self.branch
        self.version = self._str(record, "version") or self.version

    def _see_time(self, stamp: str) -> None:
        key = _timestamp_key(stamp)
        if key is None:
            return
        if self.first is None or key < self.first[0]:
            self.first = (key, stamp)
        if self.last is None or key > self.last[0]:
            self.last = (key, stamp)

    def _user(self, record: dict[str, Any], env: _Envelope) -> _Msg | None:
        message = self._user_message(record, env)
        return self._append(message) if message else None

    def _user_message(self, record: dict[str, Any], env: _Envelope) -> _Msg | None:
        body = record.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        texts: list[str] = []
        results: list[ToolResult] = []
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts, results = self._user_blocks(content)
        else:  # `message: null`, `content: 7`, a missing `content`
            self.bad = True
            return None
        if not texts and not results:
            return None
        if results:
            kind = "tool_result"
        elif self._flag(record, "isCompactSummary"):
            kind = "compact"
        else:
            kind = "meta" if env.meta else "prompt"
        message = _Msg(record, env, "user", kind)
        for text in texts + [result.text for result in results]:
            message.add_text(text)
        message.tool_results = results
        if kind == "meta":
            self._note_skill(_skill_from_base_dir(texts[0].lstrip()))
        return message

    def _user_blocks(self, content: list[Any]) -> tuple[list[str], list[ToolResult]]:
        texts: list[str] = []
        results: list[ToolResult] = []
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_result":
                results.append(self._tool_result(block))
            elif kind == "text":
                text = self._str(block, "text")
                if text:
                    texts.append(text)
            elif kind in ("image", "document"):
                texts.append(f"[{kind}]")
            elif not isinstance(block, dict):
                self.bad = True
        return texts, results

    def _tool_result(self, block: dict[str, Any]) -> ToolResult:
        return ToolResult(
            tool_use_id=_clean(self._str(block, "tool_use_id")),
            text=_clean(self._result_text(block.get("content"))),
            is_error=self._flag(block, "is_error"),
        )

    def _result_text(self, content: Any) -> str:
        if content is None:
            return ""
        if isinstance(content, str):
            return _bound(content)
        if not isinstance(content, list):
            self.bad = True
            return ""
        parts: list[str] = []
        size = 0
        for block in content:
            if size > MAX_TEXT_CHARS:
                break  # enough for `_bound`; skip the rest early
            part = self._result_part(block)
            if part:
                parts.append(part)
                size += len(part) + 1
        return _bound("\n".join(parts))

    def _result_part(self, block: Any) -> str:
        if not isinstance(block, dict):
            self.bad = True
            return ""
        kind = block.get("type")
        if kind == "text":
            return self._str(block, "text")[: MAX_TEXT_CHARS + 1]
        if kind == "image":
            return "[image]"
        if kind == "tool_reference":
            name = block.get("tool_name")
            return f"[tool_reference: {name}]" if isinstance(name, str) else "[tool_reference]"
        return ""

    def _assistant_content(self, record: dict[str, Any]) -> tuple[str, list[Any]] | None:
        """(`message.id`, content blocks) of an assistant record; None when unreadable."""
        body = record.get("message")
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(body, dict) or not isinstance(content, list):
            self.bad = True
            return None
        return self._str(body, "id"), content

    def _assistant(self, record: dict[str, Any], env: _Envelope) -> _Msg | None:
        found = self._assistant_content(record)
        if found is None:
            return None
        message_id, content = found
        key = (record["_file"], message_id)
        message = self.by_message_id.get(key) if message_id else None
        if message is None:
            message = self._append(_Msg(record, env, "assistant", "text"))
            if message_id:
                self.by_message_id[key] = message
        elif self._merge(message, record, env):
            return message  # the same line written twice: already counted
        self._assistant_blocks(message, content)
        return message

    @staticmethod
    def _merge(message: _Msg, record: dict[str, Any], env: _Envelope) -> bool:
        """Extend `message` to this line; True when the line's uuid was already merged."""
        message.line_end = max(message.line_end, int(record["_line"]))
        message.lines += 1
        if env.uuid and env.uuid in message.uuids:
            return True
        if env.uuid:
            message.uuids.add(env.uuid)
        return False

    def _assistant_blocks(self, message: _Msg, content: list[Any]) -> None:
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                text = self._str(block, "text")
                if text:
                    message.add_text(text)
            elif kind == "tool_use":
                message.tool_uses.append(self._tool_use(block))
            elif not isinstance(block, dict):
                self.bad = True
            # thinking, redacted_thinking and server-side blocks are not message text

    def _tool_use(self, block: dict[str, Any]) -> ToolUse:
        name = self._str(block, "name")
        value = block.get("input")
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            self.bad = True
            text = ""
        skill = _skill_from_input(value) if name == "Skill" else ""
        self._note_skill(skill)
        return ToolUse(
            id=_clean(self._str(block, "id")),
            name=_clean(name),
            input_text=_clean(_bound(text)),
            skill=_clean(skill),
        )

    def _system(self, record: dict[str, Any], env: _Envelope) -> _Msg:
        subtype = self._str(record, "subtype")
        if subtype == "compact_boundary":
            self.compactions += 1
        message = _Msg(record, env, "system", "system")
        message.add_text(self._str(record, "content") or subtype)
        return self._append(message)

    def _summary(self, record: dict[str, Any], env: _Envelope) -> _Msg | None:
        text = self._str(record, "summary")
        if not text:
            return None
        message = _Msg(record, env, "summary", "system")
        message.add_text(text)
        return self._append(message)

    def _append(self, message: _Msg) -> _Msg:
        self.messages.append(message)
        return message

    # -- subagents inside progress records

    def _agent_progress(self, record: dict[str, Any]) -> None:
        """Hold the subagent message an `agent_progress` record carries (`_settle_progress`
        decides whether it is kept)."""
        data: dict[str, Any] = record["data"]
        inner = self._inner_record(data.get("message"))
        if inner is None:
            return
        stamp = self._str(record, "timestamp")
        if stamp:
            self._see_time(stamp)
        body = {**inner, "_file": record["_file"], "_line": record["_line"]}
        agent_id = (
            self._str(data, "agentId")
            or self._str(inner, "agentId")
            or self._str(record, "parentToolUseID")
        )
        env = _Envelope(
            self._str(inner, "uuid"),
            self._str(inner, "timestamp") or stamp,
            True,  # the subagent's thread, whatever the outer record says
            agent_id,
            self._flag(inner, "isMeta"),
        )
        message_id = ""
        message: _Msg | None = None
        if inner["type"] == "user":
            message = self._user_message(body, env)
        elif (found := self._assistant_content(body)) is not None:
            message_id, content = found
            message = _Msg(body, env, "assistant", "text")
            self._assistant_blocks(message, content)
        self._count(message)
        if message is not None:
            key = env.uuid or _digest(agent_id, inner)
            self.progress.append(_Piece(key, message_id, message))

    def _inner_record(self, value: Any) -> dict[str, Any] | None:
        """`data.message` as a user/assistant record: a whole record as is, a bare message
        `{role, content…}` wrapped as one; None (counted) when it is neither."""
        if value is None or isinstance(value, str):
            self.skipped["agent_progress:no_message"] += 1
            return None
        if not isinstance(value, dict):
            self.skipped["bad_field"] += 1
            return None
        kind, role = value.get("type"), value.get("role")
        if kind in ("user", "assistant"):
            return value
        if role in ("user", "assistant") and "content" in value:
            return {"type": role, "message": value}
        reason = "agent_progress:other_message" if isinstance(kind, str) else "bad_field"
        self.skipped[reason] += 1
        return None

    def _settle_progress(self, read: list[tuple[str, str]]) -> None:
        """Keep the progress messages no file holds, each once, assistant parts merged, in
        file order among the others."""
        if not self.progress:
            return
        held = {uuid for m in self.messages for uuid in m.uuids}  # every file's records
        seen: set[str] = set()
        parts: dict[tuple[str, str], _Msg] = {}
        kept: list[_Msg] = []
        for piece in self.progress:
            message = piece.message
            if message.uuid in held or (not message.uuid and message.agent_id in self.file_agents):
                self.skipped["agent_progress:in_subagent_file"] += 1
                continue
            if piece.key in seen:
                self.skipped["agent_progress:repeated"] += 1
                continue
            if piece.key:
                seen.add(piece.key)
            first = parts.get((message.agent_id, piece.message_id)) if piece.message_id else None
            if first is not None:
                first.absorb(message)
                continue
            if piece.message_id:
                parts[(message.agent_id, piece.message_id)] = message
            kept.append(message)
        self.progress = []
        if not kept:
            return
        rank: dict[str, int] = {}
        for _, label in read:
            rank.setdefault(label, len(rank))
        self.messages = sorted(
            self.messages + kept, key=lambda m: (rank.get(m.file, len(rank)), m.line_start)
        )

    def _note_skill(self, name: str) -> None:
        if name:
            self.skills.append(_clean(name))

    # -- the result

    def has_messages(self) -> bool:
        """At least one user message or non-empty assistant message (those of a subagent
        carried in progress records included)."""
        pieces = (piece.message for piece in self.progress)
        return any(
            m.role == "user" or (m.role == "assistant" and (m.parts or m.tool_uses))
            for m in chain(self.messages, pieces)
        )

    def session_id(self, main_file: Path) -> str:
        """The file's own id when its records carry it, else their most common `sessionId`.
        A legacy agent file read on its own keeps its name: its records carry the parent's."""
        stem = main_file.stem
        if stem in self.session_ids or _is_agent_file(main_file):
            return stem
        common = self.session_ids.most_common(1)
        return common[0][0] if common else stem

    def finish(
        self, session_id: str, read: list[tuple[str, str]], sources: list[str] | None = None
    ) -> ParsedSession:
        """The session; `read`: (absolute path, label) of every file read."""
        self._settle_progress(read)
        built = self._build_messages()
        project = (self.main_cwds or self.cwds).most_common(1)
        return ParsedSession(
            session_id=_clean(session_id),
            project=_clean(project[0][0]) if project else "",
            branch=_clean(self.branch),
            client_version=_clean(self.version),
            started_at=_clean(self.first[1]) if self.first else "",
            ended_at=_clean(self.last[1]) if self.last else "",
            messages=tuple(built),
            turns=sum(m.kind == "prompt" and not m.is_sidechain for m in built),
            tool_calls=sum(len(m.tool_uses) for m in built),
            errors=sum(r.is_error for m in built for r in m.tool_results),
            skills_used=_unique_skills(self.skills),
            skipped=dict(self.skipped),
            files=tuple(path for path, _ in read),
            labels=tuple(label for _, label in read),
            sources=tuple(sources or ()),
            # Older files mark a compaction only by its summary message.
            compactions=max(self.compactions, sum(m.kind == "compact" for m in built)),
        )

    def _build_messages(self) -> list[TranscriptMessage]:
        built: list[TranscriptMessage] = []
        for message in self.messages:
            if message.role == "assistant" and not message.parts and not message.tool_uses:
                self.skipped["empty_message"] += message.lines  # e.g. only thinking blocks
                continue
            built.append(message.build(len(built)))
        return built


# -- reading files ---------------------------------------------------------------------------


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
