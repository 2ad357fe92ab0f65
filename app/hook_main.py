"""The processes Claude Code's hooks start, kept off the CLI's import path.

`librarian hook stop|session-end` runs on every turn end: it reads the hook's JSON (with a
deadline), queues the transcript and, only when no worker holds the spool and none is on its
way (the pending mark one hook of a burst creates), starts one. `librarian hook user-prompt`
runs before every prompt: it relays what the resident ranker says fits the prompt
(`store.skills.prompt_context`, loaded by that hook only). They import the standard library,
`store.paths` and `store.hooks` (and that module), nothing else. `hook drain`
is that worker: it takes the spool's lock before it loads the library, so a burst of hooks
costs one library load, and after letting the lock go it looks at the queue once more (a
hook that found the lock held left its entry for this worker).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from store import hooks
from store.paths import LibraryPaths, resolve_library_dir
from store.process import own_module

#: The worker starts this many seconds after the hook, so the hook process exits without
#: competing for the CPU, and a burst of turns is drained at once.
WORKER_DELAY = 0.5
#: The most a hook reads from stdin (Claude Code's hook JSON is a few hundred bytes).
MAX_INPUT = 4_000_000
QUEUEING = ("stop", "session-end")
#: The UserPromptSubmit hook: skills that fit the prompt, as context (or nothing).
PROMPT = "user-prompt"


def parse(argv: Sequence[str]) -> tuple[str | None, str, float] | None:
    """(library, action, delay) for `[--library P] hook stop|session-end|drain [--delay S]`;
    None for anything else (the full CLI handles it, errors and help included)."""
    args = list(argv)
    library = None
    if args[:1] == ["--library"] and len(args) >= 2:
        library, args = args[1], args[2:]
    elif args and args[0].startswith("--library="):
        library, args = args[0].split("=", 1)[1], args[1:]
    if len(args) < 2 or args[0] != "hook" or args[1] not in (*QUEUEING, PROMPT, "drain"):
        return None
    rest, delay = args[2:], 0.0
    if args[1] == "drain" and len(rest) == 2 and rest[0] == "--delay":
        try:
            delay, rest = float(rest[1]), []
        except ValueError:
            return None
    return (library, args[1], delay) if not rest else None


def run(library: str | None, action: str, delay: float = 0.0) -> int:
    """Run one hook action; `stop`/`session-end`/`user-prompt` exit 0 whatever happens."""
    if action == "drain":
        return drain(library, delay)
    if action == PROMPT:
        return user_prompt(library)
    try:
        root = resolve_library_dir(library)
        spool = LibraryPaths(root).spool
        raw = hooks.read_stdin(sys.stdin, MAX_INPUT)
        if (
            hooks.enqueue(spool, raw, action)
            and not hooks.worker_running(spool)
            and hooks.reserve_worker(spool)
        ):
            worker = [*own_module("app"), "--library", str(root), "hook", "drain"]
            try:
                hooks.spawn_worker([*worker, "--delay", str(WORKER_DELAY)], spool / "worker.log")
            except BaseException:
                hooks.release_reservation(spool)  # the next hook starts one instead
                raise
    except BaseException:  # a hook never fails Claude Code's turn
        pass
    return 0


def user_prompt(library: str | None) -> int:
    """Print the skills that fit the prompt (or nothing); exit 0 whatever happens."""
    try:
        # only this hook loads it (tomllib, hashlib, socket): the Stop hook stays bare
        from store.skills import prompt_context, prompt_hook

        root = resolve_library_dir(library)
        raw = hooks.read_stdin(sys.stdin, prompt_context.MAX_INPUT)
        output = prompt_hook.run_hook(root, raw)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:  # a hook never fails the prompt
        pass
    return 0


def drain(library: str | None, delay: float) -> int:
    """The worker: drain while anything is queued and this process can hold the lock."""
    time.sleep(max(0.0, min(delay, 10.0)))
    root = resolve_library_dir(library)
    spool = LibraryPaths(root).spool
    spool.mkdir(parents=True, exist_ok=True)
    while True:
        with hooks.worker_lock(spool) as owner:
            if not owner:
                print("drained: nothing (another worker is running)")
                return 0
            hooks.release_reservation(spool)
            if hooks.has_queue(spool):
                _drain_locked(root)
        if not hooks.has_queue(spool):
            return 0


def _drain_locked(root: Path) -> None:
    from store.library import Library  # heavy: only the worker that holds the lock loads it

    with Library(root) as library:
        report = library.drain_spool(locked=True)
    print(
        f"drained: {report.sessions} sessions, {report.ingested} ingested, {report.failed} failed"
    )
    for problem in report.problems:
        print(f"  set aside: {problem}")
