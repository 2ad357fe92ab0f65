"""Claude Code hooks: queue transcripts fast, ingest them in a detached worker, and install
or remove the hook entries in Claude Code's settings.json.

`enqueue`, `read_hook_input`, `worker_running` and `spawn_worker` run inside Claude Code's
Stop hook, so this module imports only the standard library: the whole `librarian hook stop`
process must return in well under 200 ms, and 20 of them at once must not pile up. A hook
spawns a worker only when none holds the spool's lock and none is on its way (the first hook
of a burst leaves a pending mark that the worker removes once it holds the lock; a running
worker looks at the queue again after it lets the lock go, so nothing queued meanwhile is
stranded); a worker takes the lock before it loads anything heavy. The SessionStart hook
(`store.patterns.session_start`) injects what the library knows about the session's
project; it is installed with a matcher, so it does not run on `fork`.

What only installing or spawning needs (`difflib`, `shlex`, `subprocess`) is imported where it
is used, and `typing` only for the type checker: the Stop hook's process is mostly imports.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

TYPE_CHECKING = False  # `typing` costs the hook ~8 ms of CPU to import
if TYPE_CHECKING:
    from typing import IO, Any

QUEUE = "queue.jsonl"
#: Entries a worker could not finish (it died, hung or the file is unreadable), with why.
FAILED = "failed.jsonl"
#: Beside a work file while a worker ingests one of its entries: the entry in progress.
CURRENT = ".current"
#: Created by the one hook that starts a worker, removed by that worker once it holds the
#: lock: hooks of a burst that see it leave their entry to the worker on its way.
PENDING = "worker.pending"
#: A pending mark older than this belongs to a worker that never started; it is taken over.
PENDING_SECONDS = 10.0
#: How long a hook waits for Claude Code to finish writing its JSON input.
STDIN_SECONDS = 3.0
#: Hook events the librarian installs, and the `librarian hook` action each one runs.
EVENTS = {
    "Stop": "stop",
    "SessionEnd": "session-end",
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
}
#: Matchers for the events that take one (events not listed get a group without a matcher).
MATCHERS = {"SessionStart": "startup|resume|clear|compact"}
HOOK_TIMEOUT_SECONDS = 10
_OURS = re.compile(
    r"""(librarian['"]?|\s-m\s+app)(\s+--library\s+('[^']*'|"[^"]*"|\S+))?\s+hook\s+"""
    r"""(stop|session-end|session-start|user-prompt)\s*$"""
)


# -- the hook itself (fast path) ---------------------------------------------------------------


def read_stdin(stream: IO[str] | None, limit: int, seconds: float = STDIN_SECONDS) -> str:
    """A hook's input from `stream` (normally `sys.stdin`): through its descriptor with a
    deadline (`read_hook_input`); a stream without one (a test's StringIO) is read as is."""
    if stream is None:
        return ""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream.read(limit)
    return read_hook_input(fd, limit, seconds)


def read_hook_input(fd: int, limit: int, seconds: float = STDIN_SECONDS) -> str:
    """What Claude Code wrote on the hook's stdin, up to `limit` bytes: read until end of
    file or `seconds` have passed (a stdin nobody closes must not hang the hook); "" for a
    terminal or a closed descriptor."""
    try:
        if os.isatty(fd):
            return ""
    except OSError:
        return ""
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
            chunk = os.read(fd, min(65536, limit - size))
        except (OSError, ValueError):
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def enqueue(spool: Path, raw: str, event: str) -> bool:
    """Append the transcript named in a hook's JSON input to the spool; False if none."""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return False
    if not isinstance(data, dict) or not isinstance(data.get("transcript_path"), str):
        return False
    entry = {
        "queued_at": time.time(),
        "event": event,
        "transcript_path": os.path.expanduser(data["transcript_path"]),
        "session_id": str(data.get("session_id", "")),
        "cwd": str(data.get("cwd", "")),
    }
    spool.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry) + "\n").encode("utf-8")
    # O_APPEND writes of one small line are atomic: concurrent hooks never interleave.
    fd = os.open(spool / QUEUE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return True


def worker_running(spool: Path) -> bool:
    """True while a worker holds the spool (a non-blocking try of its lock, let go at once)."""
    return lock_held(spool / "worker.lock")


def lock_held(path: Path) -> bool:
    """True while some process holds the `flock` on `path` (tried without waiting)."""
    try:
        handle = open(path, "a")  # noqa: SIM115 - closed below either way
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def reserve_worker(spool: Path, now: float | None = None) -> bool:
    """True for the one hook of a burst that should start a worker: it creates the pending
    mark (atomically, `O_EXCL`). Later hooks find the mark and start nothing, until the
    worker, holding the lock, removes it; a mark left by a worker that never started is
    stale after `PENDING_SECONDS` and taken over."""
    mark = spool / PENDING
    try:
        os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return True
    except FileExistsError:
        pass
    except OSError:
        return True  # cannot mark: starting a worker is the safe side
    try:
        age = (time.time() if now is None else now) - mark.stat().st_mtime
    except OSError:
        return True
    if age < PENDING_SECONDS:
        return False
    with suppress(OSError):
        os.utime(mark)
    return True


def release_reservation(spool: Path) -> None:
    """The worker holds the lock: hooks from now on see it running instead of pending."""
    with suppress(OSError):
        (spool / PENDING).unlink()


def has_queue(spool: Path) -> bool:
    """Anything queued or left claimed (cheap: no file is read)."""
    return (spool / QUEUE).exists() or any(spool.glob("*.work"))


def spawn_worker(argv: list[str], log: Path) -> None:
    """Start the spool worker fully detached (it outlives the hook and Claude's session)."""
    import subprocess  # only the hook that starts a worker pays for it

    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
        )


# -- the worker ----------------------------------------------------------------------------------


@contextmanager
def worker_lock(spool: Path) -> Iterator[bool]:
    """Yields True for the one worker that holds the spool; others get False and leave."""
    spool.mkdir(parents=True, exist_ok=True)
    with (spool / "worker.lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def claim(spool: Path) -> tuple[Path | None, list[dict[str, Any]]]:
    """Take the queue atomically (or a work file left by a worker that died) and return its
    entries. Call with the spool's lock held: every work file then present was abandoned.
    An entry that was being ingested when its worker stopped is set aside (`FAILED`), so a
    transcript that kills or hangs workers cannot wedge the queue."""
    for left in sorted(spool.glob("*.work")):
        return left, _without_culprit(left, read_entries(left))
    queue = spool / QUEUE
    if not queue.exists():
        return None, []
    work = spool / f"queue.{os.getpid()}.{time.time_ns()}.work"
    try:
        os.replace(queue, work)
    except FileNotFoundError:
        return None, []
    return work, read_entries(work)


def _without_culprit(work: Path, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    marker = work.with_name(work.name + CURRENT)
    try:
        culprit = marker.read_text(encoding="utf-8")
    except OSError:
        return entries
    set_aside(work.parent, culprit, "a worker stopped while ingesting it (killed or hung)")
    marker.unlink(missing_ok=True)
    return [e for e in entries if e["transcript_path"] != culprit]


def mark_current(work: Path, transcript: str | None) -> None:
    """Record the entry a worker is ingesting now (None: it finished it)."""
    marker = work.with_name(work.name + CURRENT)
    if transcript is None:
        marker.unlink(missing_ok=True)
    else:
        marker.write_text(transcript, encoding="utf-8")


def finish(work: Path) -> None:
    """A work file fully handled: gone, with its marker."""
    mark_current(work, None)
    work.unlink(missing_ok=True)


def set_aside(spool: Path, transcript: str, reason: str) -> None:
    """Keep a transcript the worker will not retry in `FAILED`, with the reason."""
    line = json.dumps({"at": time.time(), "transcript_path": transcript, "reason": reason})
    with (spool / FAILED).open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def failed_entries(spool: Path) -> list[dict[str, Any]]:
    """What was set aside, oldest first."""
    path = spool / FAILED
    return read_entries(path) if path.exists() else []


def read_entries(path: Path) -> list[dict[str, Any]]:
    entries = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("transcript_path"), str):
            entries.append(item)
    return entries


def pending_count(spool: Path) -> int:
    files = [spool / QUEUE, *spool.glob("*.work")]
    return sum(len(read_entries(f)) for f in files if f.exists())


# -- settings.json ---------------------------------------------------------------------------


class SettingsChange:
    """What `install`/`uninstall` did (or would do) to a settings.json."""

    __slots__ = ("backup", "changed", "diff", "path")

    def __init__(self, path: Path, diff: str, changed: bool, backup: Path | None) -> None:
        self.path, self.diff, self.changed, self.backup = path, diff, changed, backup

    def __repr__(self) -> str:
        return (
            f"SettingsChange(path={self.path!r}, diff={self.diff!r}, changed={self.changed!r},"
            f" backup={self.backup!r})"
        )


def settings_path(scope: str, home: Path, cwd: Path, env: Mapping[str, str]) -> Path:
    """`--user`: $CLAUDE_CONFIG_DIR (or ~/.claude)/settings.json; `--project`: .claude/ here."""
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    configured = env.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    base = Path(configured).expanduser() if configured else home / ".claude"
    return base / "settings.json"


def hook_command(prefix: list[str], library: Path | None, action: str) -> str:
    """The shell command Claude Code runs, e.g. `/usr/bin/librarian --library L hook stop`."""
    import shlex

    parts = [*prefix, *(["--library", str(library)] if library else []), "hook", action]
    return shlex.join(parts)


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(_OURS.search(str(handler.get("command", ""))))


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def _without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return settings
    cleaned: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            cleaned[event] = groups
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [h for h in group["hooks"] if not is_ours(h)]
                if handlers:
                    kept.append({**group, "hooks": handlers})
            else:
                kept.append(group)
        if kept:
            cleaned[event] = kept
    result = {**settings, "hooks": cleaned}
    if not cleaned:
        del result["hooks"]
    return result


def with_hooks(settings: dict[str, Any], commands: Mapping[str, str]) -> dict[str, Any]:
    """Settings with exactly one librarian handler per event (others untouched)."""
    result = _without_ours(settings)
    hooks = dict(result.get("hooks") or {})
    for event, command in commands.items():
        handler = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
        groups = list(hooks.get(event) or [])
        matcher = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
        groups.append({**matcher, "hooks": [handler]})
        hooks[event] = groups
    result["hooks"] = hooks
    return result


def apply_settings(path: Path, new: dict[str, Any], dry_run: bool) -> SettingsChange:
    """Write settings atomically (backing up the old file) unless `dry_run`; always diff."""
    import difflib

    old_text = path.read_text(encoding="utf-8") if path.exists() else ""
    new_text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    old_pretty = json.dumps(_load(path), indent=2, ensure_ascii=False) + "\n" if old_text else ""
    diff = "".join(
        difflib.unified_diff(
            old_pretty.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            str(path),
            str(path),
        )
    )
    changed = old_pretty != new_text
    backup = None
    if changed and not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        if old_text:
            backup = path.with_name(f"{path.name}.bak-{time.strftime('%Y%m%d-%H%M%S')}")
            backup.write_text(old_text, encoding="utf-8")
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(new_text, encoding="utf-8")
        os.replace(tmp, path)
    return SettingsChange(path, diff, changed, backup)


def install(path: Path, commands: Mapping[str, str], dry_run: bool = False) -> SettingsChange:
    return apply_settings(path, with_hooks(_load(path), commands), dry_run)


def uninstall(path: Path, dry_run: bool = False) -> SettingsChange:
    return apply_settings(path, _without_ours(_load(path)), dry_run)
