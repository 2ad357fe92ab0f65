"""The UserPromptSubmit hook: the skills that fit what the user just asked, added as context
(issue 15, item 5). It is also an answer to the listing budget: a skill whose description
Claude Code dropped can still be brought up when a prompt fits it.

Claude Code runs the hook before every prompt and waits for it (code.claude.com/docs/en/
hooks, "UserPromptSubmit"), so the hook process must be quick and can never fail the prompt:
on any problem it prints nothing and exits 0. Ranking with `suggest` needs the embedding
model, which takes seconds to load, so the hook does not load it: it asks a small resident
ranker (`app.prompt_server`, one per library, started on demand and gone after
`prompt_hook.idle_minutes` without prompts) over a Unix socket in a private runtime folder,
and relays its answer (waiting at most `prompt_hook.wait_ms` for it). When no ranker is up the
hook answers from the library's lexical index alone (`prompt_lexical`) and starts the ranker
for the next prompt.

This module is the hook's side: standard library only (plus `store.hooks` and
`store.process`, which are too), so `python -E -P -m app … hook user-prompt` starts in tens of
milliseconds. Everything it prints was masked for secrets by the ranker or the fallback.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import time
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from store import hooks
from store.process import own_module
from store.query_terms import query_terms

HOOK_EVENT = "UserPromptSubmit"
#: The retrieval log's tool name for what the hook served.
TOOL = "user-prompt"
#: Stdin beyond this is not a hook input.
MAX_INPUT = 1_000_000
#: The part of a prompt that is ranked (a pasted log is not a task description).
MAX_PROMPT_CHARS = 2_000
#: Claude Code saves hook output longer than this to a file and shows a preview.
OUTPUT_CAP = 10_000
#: The most a reply from the ranker may be.
MAX_REPLY = 200_000


# NamedTuples rather than dataclasses: `dataclasses` imports `inspect`, ~10 ms of the hook.


class Request(NamedTuple):
    prompt: str
    cwd: str
    session_id: str


class Settings(NamedTuple):
    """`[prompt_hook]` in the library's config.toml (read with the standard library)."""

    floor: float = 0.40  # cosine of the prompt with a skill's card or use text
    lexical_floor: float = 0.30  # share of the prompt's (IDF-weighted) words a skill covers
    skills: int = 3
    max_chars: int = 1200
    wait_ms: int = 1000
    idle_minutes: float = 30.0
    server: bool = True

    @classmethod
    def from_config(cls, path: Path) -> Settings:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8")).get("prompt_hook", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        defaults = cls()
        values: dict[str, Any] = {}
        for name in ("floor", "lexical_floor", "idle_minutes"):
            values[name] = _number(data.get(name), float, getattr(defaults, name), 0.0, 10_000.0)
        for name, top in (("skills", 10), ("max_chars", OUTPUT_CAP), ("wait_ms", 5_000)):
            values[name] = _number(data.get(name), int, getattr(defaults, name), 0, top)
        server = data.get("server", defaults.server)
        values["server"] = server if isinstance(server, bool) else defaults.server
        return cls(**values)


def _number(raw: Any, kind: type[int] | type[float], default: Any, low: float, high: float) -> Any:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return default
    return kind(min(max(raw, low), high))


class Pick(NamedTuple):
    """A skill the prompt fits, with why (its text already masked for secrets)."""

    name: str
    description: str
    relevance: float
    matched: tuple[str, ...] = ()
    evidence: str = "dense"  # "dense" (the ranker) | "lexical" (the index alone)
    skill_id: int = 0


def parse_request(raw: str) -> Request | None:
    """The prompt, cwd and session from Claude Code's hook JSON; None when it is not one."""
    try:
        data = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("hook_event_name", HOOK_EVENT) != HOOK_EVENT:
        return None
    prompt, cwd, session = data.get("prompt"), data.get("cwd"), data.get("session_id")
    if not isinstance(prompt, str):
        return None
    return Request(
        prompt[:MAX_PROMPT_CHARS],
        cwd if isinstance(cwd, str) else "",
        session if isinstance(session, str) else "",
    )


def worth_ranking(prompt: str) -> bool:
    """A prompt that names a task: not a slash command, not "ok" or "thanks"."""
    text = prompt.strip()
    return bool(text) and not text.startswith("/") and len(query_terms(text)) >= 2


# -- the text ----------------------------------------------------------------------------------


def _inert(text: str, limit: int) -> str:
    """One printable line without tag-like brackets (the text is already masked)."""
    folded = " ".join(text.split())
    folded = "".join(c if c.isprintable() else " " for c in folded)
    folded = folded.replace("<", "‹").replace(">", "›").replace("`", "'")
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    cut = text.find(". ", 40)
    return text[: cut + 1] if cut > 0 else text


def render(picks: Sequence[Pick], max_chars: int) -> str:
    """Factual lines (Claude Code's advice for injected context), cut at a line boundary."""
    if not picks:
        return ""
    head = "skill-librarian: installed skills whose descriptions match this request:"
    lines = [head]
    used = len(head)
    for pick in picks:
        why = f"relevance {pick.relevance:.2f}"
        if pick.matched:
            why += "; matched " + ", ".join(_inert(t, 30) for t in pick.matched[:5])
        line = (
            f"- Skill `{_inert(pick.name, 80)}`: {_inert(_first_sentence(pick.description), 220)}"
            f" ({why})"
        )
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) if len(lines) > 1 else ""


def hook_output(text: str) -> str:
    """The JSON Claude Code reads from a UserPromptSubmit hook's stdout ("" for nothing)."""
    if not text:
        return ""
    data = {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": text}}
    return json.dumps(data, ensure_ascii=True)


# -- the ranker's address ------------------------------------------------------------------------


#: Unix socket paths longer than this do not fit `sockaddr_un` (108 bytes on Linux).
MAX_SOCKET_PATH = 100


def runtime_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """A folder only this user can use, for the ranker's socket and lock: under
    `$XDG_RUNTIME_DIR`, else (or when that path is too long for a socket) in /tmp. None when
    no such folder can be had: then there is no ranker, only the lexical answer."""
    environ = os.environ if env is None else env
    base = environ.get("XDG_RUNTIME_DIR", "")
    fallback = Path(f"/tmp/skill-librarian-{os.getuid()}")
    folder = Path(base) / "skill-librarian" if base else fallback
    if len(str(folder)) + 26 > MAX_SOCKET_PATH:
        folder = fallback
    return _private(folder)


def _private(folder: Path) -> Path | None:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    private = info.st_uid == os.getuid() and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    return folder if stat.S_ISDIR(info.st_mode) and private else None


def ranker_paths(root: Path, env: Mapping[str, str] | None = None) -> tuple[Path, Path] | None:
    """(socket, lock) of the ranker for the library at `root`."""
    folder = runtime_dir(env)
    if folder is None:
        return None
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:20]
    return folder / f"{key}.sock", folder / f"{key}.lock"


#: How long connecting to the ranker may take (a local socket: at once, or never).
CONNECT_SECONDS = 0.05


def ask_ranker(sock: Path, request: Request, seconds: float) -> str | None:
    """The ranker's hook output for `request` ("" for nothing to add); None when there is no
    ranker, or it does not answer within `seconds` once connected."""
    message = {"prompt": request.prompt, "cwd": request.cwd, "session_id": request.session_id}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(CONNECT_SECONDS)
            client.connect(str(sock))
            client.settimeout(seconds)
            client.sendall(json.dumps(message).encode("utf-8") + b"\n")
            reply = _read_line(client, MAX_REPLY)
    except (OSError, ValueError):
        return None
    try:
        answer = json.loads(reply)
    except (ValueError, RecursionError):
        return None
    output = answer.get("output") if isinstance(answer, dict) else None
    return output if isinstance(output, str) else None


def _read_line(conn: socket.socket, limit: int) -> bytes:
    data = b""
    while b"\n" not in data and len(data) < limit:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0]


def ranker_running(lock: Path) -> bool:
    """True while a ranker holds the lock."""
    return hooks.lock_held(lock)


#: A ranker is started at most this often (one that cannot start must not cost every prompt
#: a model load).
RESTART_SECONDS = 60.0


def start_ranker(root: Path, log: Path, marker: Path) -> None:
    """The ranker, fully detached (it outlives the hook; it leaves when idle), unless one was
    started less than RESTART_SECONDS ago (`marker` records when)."""
    try:
        if time.time() - marker.stat().st_mtime < RESTART_SECONDS:
            return
    except OSError:
        pass
    marker.touch()
    hooks.spawn_worker([*own_module("app"), "--library", str(root), "hook", "prompt-server"], log)
