"""The detached worker behind the Stop hook: drains the spool, one worker at a time.

Each transcript gets `INGEST_SECONDS` (a watchdog alarm, in the worker process's main
thread): one that hangs or fails is set aside in the spool's `failed.jsonl` with the reason,
and the rest of the queue goes on.
"""

from __future__ import annotations

import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.hooks import claim, finish, mark_current, set_aside, worker_lock
from store.ingest.pipeline import ingest_file

if TYPE_CHECKING:
    from store.kernel import Kernel

MAX_ROUNDS = 1000
#: The longest one transcript may take (the warm tier does ≥ 10 MB/s: minutes are GBs).
INGEST_SECONDS = 300


@dataclass(frozen=True)
class DrainReport:
    busy: bool  # another worker holds the spool (it will pick up what was queued)
    sessions: int
    ingested: int
    failed: int
    problems: tuple[str, ...]
    seconds: float


class IngestTimeout(Exception):
    """A transcript took longer than `INGEST_SECONDS`."""


def drain(library: Kernel, *, locked: bool = False) -> DrainReport:
    """Ingest every queued transcript (each path once per round); never raises for data.
    `locked`: the caller already holds the spool's lock (the hook worker takes it before it
    opens the library)."""
    started = time.perf_counter()
    spool = library.paths.spool
    with nullcontext(True) if locked else worker_lock(spool) as owner:
        if not owner:
            return DrainReport(True, 0, 0, 0, (), 0.0)
        sessions, ingested, problems = _rounds(library, spool)
    return DrainReport(
        False,
        sessions,
        ingested,
        len(problems),
        tuple(problems),
        round(time.perf_counter() - started, 3),
    )


def _rounds(library: Kernel, spool: Path) -> tuple[int, int, list[str]]:
    sessions = ingested = 0
    problems: list[str] = []
    for _ in range(MAX_ROUNDS):
        work, entries = claim(spool)
        if work is None:
            break
        for path in dict.fromkeys(e["transcript_path"] for e in entries):
            sessions += 1
            mark_current(work, path)
            problem, count = _one(library, spool, path)
            ingested += count
            if problem:
                problems.append(f"{path}: {problem}")
                set_aside(spool, path, problem)
            mark_current(work, None)
        finish(work)
    return sessions, ingested, problems


def _one(library: Kernel, spool: Path, path: str) -> tuple[str, int]:
    """(problem or "", sessions ingested) for one queued transcript."""
    try:
        with _deadline(INGEST_SECONDS):
            outcome = ingest_file(library, Path(path))
    except IngestTimeout:
        return f"took longer than {INGEST_SECONDS} s; set aside", 0
    except Exception as exc:  # a bug must not wedge the queue: log, go on
        _log(spool, traceback.format_exc())
        return f"{exc.__class__.__name__}: {exc}", 0
    if outcome.failure is not None:
        return f"{outcome.failure.code}: {outcome.failure.reason}", int(outcome.ingested)
    return "", int(outcome.ingested)


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Raise `IngestTimeout` after `seconds` (only where signals can be used: the main
    thread; elsewhere, e.g. the app's workers, it does nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise IngestTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _log(spool: Path, text: str) -> None:
    with (spool / "worker-errors.log").open("a", encoding="utf-8") as handle:
        handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n{text}\n")
