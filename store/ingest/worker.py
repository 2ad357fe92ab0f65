"""The detached worker behind the Stop hook: drains the spool, one worker at a time."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from store.hooks import claim, worker_lock
from store.ingest.pipeline import ingest_file

if TYPE_CHECKING:
    from store.library import Library

MAX_ROUNDS = 1000


@dataclass(frozen=True)
class DrainReport:
    busy: bool  # another worker holds the spool (it will pick up what was queued)
    sessions: int
    ingested: int
    failed: int
    problems: tuple[str, ...]
    seconds: float


def drain(library: Library) -> DrainReport:
    """Ingest every queued transcript (each path once per round); never raises for data."""
    started = time.perf_counter()
    spool = library.paths.spool
    sessions = ingested = failed = 0
    problems: list[str] = []
    with worker_lock(spool) as owner:
        if not owner:
            return DrainReport(True, 0, 0, 0, (), 0.0)
        for _ in range(MAX_ROUNDS):
            work, entries = claim(spool)
            if work is None:
                break
            for path in dict.fromkeys(e["transcript_path"] for e in entries):
                sessions += 1
                try:
                    outcome = ingest_file(library, Path(path))
                except Exception as exc:  # a bug must not wedge the queue: log, go on
                    failed += 1
                    problems.append(f"{path}: {exc.__class__.__name__}: {exc}")
                    _log(spool, traceback.format_exc())
                    continue
                ingested += outcome.ingested
                if outcome.failure is not None:
                    failed += 1
                    problems.append(f"{path}: {outcome.failure.code}: {outcome.failure.reason}")
            work.unlink(missing_ok=True)
    return DrainReport(
        False, sessions, ingested, failed, tuple(problems), round(time.perf_counter() - started, 3)
    )


def _log(spool: Path, text: str) -> None:
    with (spool / "worker-errors.log").open("a", encoding="utf-8") as handle:
        handle.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}\n{text}\n")
