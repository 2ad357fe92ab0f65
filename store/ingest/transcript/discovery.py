"""Finding session files: Claude Code's `projects` folders, the main session files below a
folder, a session's subagent files, and the `sessionId` a file's first lines carry."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path

from store.files import open_regular
from store.ingest.transcript.records import _read_lines

_MAX_WALK_DEPTH = 8
_MAX_WALK_FILES = 200_000
_SESSION_ID_LINES = 32
_SESSION_ID_BYTES = 4 * 1024 * 1024


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
            except OSError:
                continue
            if is_dir and entry.name != "subagents" and depth < _MAX_WALK_DEPTH:
                stack.append((Path(entry.path), depth + 1))
            elif not is_dir and entry.name.endswith(".jsonl"):
                # A FIFO, device or dangling link is yielded too: ingest reports it (it never
                # opens one for a blocking read) instead of passing over it in silence.
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
