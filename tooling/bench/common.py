"""What every part of `librarian bench` shares: running a measurement in its own process
(`librarian bench-child NAME …`, this installation's console script, see `store.process`), the
child's own peak memory, the corpus, and the cached synthetic libraries with their locks."""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from store.process import own_librarian

GENERATOR_VERSION = "1"


#: The hidden `librarian` command that runs one measurement (`app.bench_child`).
BENCH_CHILD = "bench-child"


def run_child(name: str, *args: str, timeout: float = 1800) -> dict[str, Any]:
    """Run the measurement `name` (see `children.CHILDREN`, `app.bench_app.CHILDREN`) in a
    process of its own, through this installation's `librarian`, and parse the JSON it prints
    last."""
    return json_from([*own_librarian(), BENCH_CHILD, name, *args], timeout)


def json_from(argv: list[str], timeout: float) -> dict[str, Any]:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def ru_maxrss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def own_peak_rss_mb() -> float:
    """This process's own peak RSS. On Linux `ru_maxrss` of a child started by subprocess
    starts at the parent's peak at fork time (the kernel carries the old memory's high-water
    mark across exec), so a parent that built a big library would inflate it; `VmHWM` belongs
    to the process's own memory. Falls back to `ru_maxrss` elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return ru_maxrss_mb()


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 2)


def task_contexts(count: int) -> list[str]:
    from tooling.evaluation.routing import load_queries

    queries = [q.text for q in load_queries()]
    return [queries[i % len(queries)] for i in range(count)]


def corpus_dir() -> Path:
    """The third-party corpus: `LIBRARIAN_CORPUS`, else `shared/corpus` beside the project."""
    return Path(os.environ.get("LIBRARIAN_CORPUS", Path(__file__).parents[3] / "shared" / "corpus"))


def rate_per_second(count: int, seconds: Any) -> float | None:
    return round(count / seconds, 1) if isinstance(seconds, int | float) and seconds else None


def big_library(work: Path, count: int) -> Path:
    """A cached library of `count` synthetic skills (built once, reused while unchanged)."""
    library = work / f"lib-{count}"
    marker = library / f".bench-{GENERATOR_VERSION}"
    if not marker.exists():
        from store.library import Library
        from tooling.synthetic.data import write_skills

        shutil.rmtree(library, ignore_errors=True)
        skills = work / f"skills-{count}"
        write_skills(skills, count)
        with Library(library) as lib:
            lib.scan([skills])
        marker.write_text("built\n")
    return library


#: The oldest cached schema that can be migrated in place (v5 and v6 only added tables and
#: indexes).
_UPGRADABLE_FROM = 4


def schema_version(library: Path) -> int:
    db = library / "library.db"
    if not db.exists():
        return -1
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def cached_marker(library: Path, name: str) -> dict[str, Any] | None:
    """The marker's content when the cached library is complete and its schema current."""
    from store.migrations import MIGRATIONS

    path = library / name
    if not path.exists() or schema_version(library) < _UPGRADABLE_FROM:
        return None
    if schema_version(library) < len(MIGRATIONS):
        # Later migrations only add tables and indexes that no old event fills, so an old
        # cached library is brought up to date in place instead of being rebuilt.
        from store.migrations import migrate

        with contextlib.closing(sqlite3.connect(library / "library.db")) as conn:
            conn.isolation_level = None
            migrate(conn)
    try:
        found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return found


@contextlib.contextmanager
def locked(library: Path) -> Iterator[None]:
    """Hold an exclusive lock for building or replacing a cached library: several benches
    may run at once on one machine and share the cache."""
    with (library.parent / f".{library.name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_dir(work: Path, name: str) -> Path:
    """A working copy's path of this process alone (concurrent benches share `work`)."""
    return work / f"{name}-run-{os.getpid()}"


def note(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def fresh_copy(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)
