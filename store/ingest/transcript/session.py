"""Assembling a session: the records of its files, in file order, into messages and the
session's fields; subagent messages carried in `progress` records are settled at the end."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from store.ingest.transcript.discovery import _is_agent_file
from store.ingest.transcript.messages import (
    MAX_TEXT_CHARS,
    _bound,
    _clean,
    _digest,
    _Envelope,
    _Msg,
    _Piece,
    _skill_from_base_dir,
    _skill_from_input,
    _timestamp_key,
    _unique_skills,
)
from store.models.sessions import ParsedSession, ToolResult, ToolUse, TranscriptMessage

#: `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` without building an encoder
#: for every tool call.
_INPUT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class _Where:
    """The file a record comes from."""

    file: str  # relative to the main file's folder
    is_main: bool
    agent_id: str = ""  # from a subagent file's name, for records without `agentId`


class _Session:
    """Accumulates records of one session, file by file, in file order."""

    def __init__(self) -> None:
        self.messages: list[_Msg] = []
        self.by_message_id: dict[tuple[str, str], _Msg] = {}
        self.progress: list[_Piece] = []  # held apart until every file is read
        self.file_agents: set[str] = set()  # agents with records in a subagent file
        self.skipped: Counter[str] = Counter()
        # Counts in plain dicts (a `Counter`'s `+= 1` costs twice a dict's `get`).
        self.cwds: dict[str, int] = {}
        self.main_cwds: dict[str, int] = {}  # outside sidechains: where the user works
        self.session_ids: dict[str, int] = {}
        self.branch = self.version = ""
        self.first: tuple[datetime, str] | None = None
        self.last_stamp = ""  # the last stamp `_see_time` was given
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
        if message is None or self.bad:
            self._count(message)

    def _count(self, message: _Msg | None) -> None:
        if message is None:
            self.skipped["bad_field" if self.bad else "empty_message"] += 1
        elif self.bad:
            self.skipped["bad_field"] += 1

    def _odd(self, value: Any) -> str:
        """`_str`'s answer for a value that is not exactly a `str` (missing, null, a number)."""
        if isinstance(value, str):
            return value
        if value is not None:
            self.bad = True
        return ""

    def _envelope(self, record: dict[str, Any], where: _Where) -> _Envelope:
        # `_str` and `_flag` written out: this runs for every record.
        get = record.get
        stamp = get("timestamp", "")
        if stamp.__class__ is not str:
            stamp = self._odd(stamp)
        if stamp and stamp != self.last_stamp:  # the same stamp again changes nothing
            self._see_time(stamp)
            self.last_stamp = stamp
        side = get("isSidechain")
        if side is not None and side is not True and side is not False:
            self.bad = True
        sidechain = side is True
        if where.is_main:
            self._see_main(record, sidechain)
        agent_id = get("agentId", "")
        if agent_id.__class__ is not str:
            agent_id = self._odd(agent_id)
        meta = get("isMeta")
        if meta is not None and meta is not True and meta is not False:
            self.bad = True
        uuid = get("uuid", "")
        if uuid.__class__ is not str:
            uuid = self._odd(uuid)
        return _Envelope(uuid, stamp, sidechain, agent_id or where.agent_id, meta is True)

    def _see_main(self, record: dict[str, Any], sidechain: bool) -> None:
        get = record.get
        cwd, sid = get("cwd", ""), get("sessionId", "")
        branch, version = get("gitBranch", ""), get("version", "")
        if cwd.__class__ is not str:
            cwd = self._odd(cwd)
        if sid.__class__ is not str:
            sid = self._odd(sid)
        if branch.__class__ is not str:
            branch = self._odd(branch)
        if version.__class__ is not str:
            version = self._odd(version)
        if cwd:
            self.cwds[cwd] = self.cwds.get(cwd, 0) + 1
            if not sidechain:
                self.main_cwds[cwd] = self.main_cwds.get(cwd, 0) + 1
        if sid:
            self.session_ids[sid] = self.session_ids.get(sid, 0) + 1
        self.branch = branch or self.branch
        self.version = version or self.version

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
            text = _INPUT_JSON.encode(value)
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
        common = Counter(self.session_ids).most_common(1)
        return common[0][0] if common else stem

    def finish(
        self, session_id: str, read: list[tuple[str, str]], sources: list[str] | None = None
    ) -> ParsedSession:
        """The session; `read`: (absolute path, label) of every file read."""
        self._settle_progress(read)
        built = self._build_messages()
        project = Counter(self.main_cwds or self.cwds).most_common(1)
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
