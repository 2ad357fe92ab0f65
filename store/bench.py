"""`librarian bench`: the issue budgets, measured. Each phase runs in a child process so
peak memory and cold starts are real. Large synthetic libraries are cached between runs."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import math
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from store.bench_catalog import CHILDREN as CATALOG_CHILDREN
from store.hooks import has_queue, worker_running
from store.paths import APP_NAME
from store.process import own_librarian, own_module

if TYPE_CHECKING:
    import sqlite3

    from store.library import Library

GENERATOR_VERSION = "1"
#: (section, field) -> limit; recall, rates and `FLOORS` are floors, everything else a ceiling.
BUDGETS: dict[tuple[str, str], float] = {
    ("scan", "warm_seconds"): 1.0,
    ("scan", "cold_seconds"): 15.0,
    ("scan", "cold_peak_rss_mb"): 600,
    ("scan", "corpus_cold_peak_rss_mb"): 600,
    ("suggest", "p95_ms"): 50.0,
    ("suggest", "batch_150_seconds"): 10.0,
    ("app", "interactive_seconds"): 1.5,
    ("ingest", "warm_mb_per_second"): 10.0,  # a floor, like recall
    ("ingest", "reingest_unchanged_ms"): 50.0,
    ("ingest", "hook_stop_ms"): 200.0,
    ("ingest", "hook_stop_cpu_ms"): 60.0,
    ("ingest", "hook_burst_20_slowest_ms"): 1500.0,
    ("review", "interactive_seconds"): 1.0,
    ("review", "approve_to_next_ms_median"): 50.0,
    ("routing", "recall@1"): 0.85,
    ("routing", "recall@10"): 0.98,
    ("consolidate", "seconds_10000"): 60.0,
    ("consolidate", "seconds_100000"): 600.0,
    ("consolidate", "peak_rss_mb_100000"): 4096,
    ("session_start", "ms"): 1500.0,
    ("mcp", "p95_ms"): 200.0,
    # 1,000 read calls through the server: the retrieval log's growth (mcp_log_growth)
    ("mcp", "log_identical_events"): 5,
    ("mcp", "log_identical_kb"): 16.0,
    ("mcp", "log_varied_events"): 1000,
    ("mcp", "log_varied_kb"): 2048.0,
    ("lifecycle", "blast_p95_ms"): 20.0,
    ("lifecycle", "health_seconds"): 5.0,
    ("lifecycle", "graph_interactive_seconds"): 0.5,
    ("lifecycle", "health_interactive_seconds"): 0.5,
    ("lifecycle", "lineage_interactive_seconds"): 0.5,
    ("lifecycle", "runbook_interactive_seconds"): 0.5,
    # issue 11: what the warm tier puts in the review queue, against the labelled dev set
    ("quality", "precision"): 0.6,
    ("quality", "coverage"): 0.7,
    ("quality", "narration"): 0,
    ("secrets", "recall"): 0.95,  # of the generated formats (a floor)
    ("secrets", "corpus_false_positives"): 0,
    ("secrets", "mb_per_second"): 20.0,  # `redact` alone: well above the ingest floor (a floor)
    # issue 13: the team hub (embedded PostgreSQL), see store/team/bench.py
    ("team", "push_seconds"): 10.0,
    ("team", "pull_seconds"): 30.0,
    ("team", "pull_peak_rss_mb"): 1024,
    ("team", "review_interactive_seconds"): 1.0,
    ("team", "status_ms"): 300.0,
    ("team", "push_again_round_trips"): 1,
    ("team", "pull_again_round_trips"): 1,
    # issue 15: catalog health
    ("budget", "seconds"): 1.0,  # the listing of 1,000 skills
    ("overlap", "seconds"): 30.0,  # every pair of 10,000 skills
    ("lint", "corpus_seconds"): 5.0,  # `librarian lint` of the 217 corpus skills
    ("lint", "recall"): 0.9,  # malicious skills of the labelled set caught (a floor)
    ("lint", "false_positive_rate"): 0.05,  # benign skills of the labelled set flagged
    ("prompt_hook", "warm_p95_ms"): 150.0,  # the hook process, 10,000 skills, ranker up
}
#: Fields that are floors whatever their name (quality shares: more is better).
FLOORS = frozenset({"precision", "coverage"})
#: The lifecycle screens measured on the lifecycle library (missing ones are reported).
LIFECYCLE_SCREENS = ("graph", "health", "lineage", "runbook")


def _child(*args: str, timeout: float = 1800) -> dict[str, Any]:
    """Run `python -m store.bench <args>` and parse the JSON it prints last."""
    return _json_from([*own_module("store.bench"), *args], timeout)


def _json_from(argv: list[str], timeout: float) -> dict[str, Any]:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr.strip().splitlines() or ["no output"])[-1]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _own_peak_rss_mb() -> float:
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
    return _rss_mb()


def run_bench(
    quick: bool = False, only: set[str] | None = None, workdir: Path | None = None
) -> dict[str, Any]:
    """Every phase (or `only` some); returns the JSON-ready results with budgets."""
    work = workdir or Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / "bench"
    work.mkdir(parents=True, exist_ok=True)
    sizes: dict[str, Any] = {
        "scan": 100 if quick else 500,
        "suggest": 1000 if quick else 10_000,
        "budget": 1000,
        # approved nodes consolidated; nodes of the library the agent tools use (with
        # `skills_for(nodes)` skills)
        "consolidate": [2000] if quick else [10_000, 100_000],
        "patterns": 2000 if quick else 100_000,
        "lifecycle": (
            {"skills": 2000, "relations": 8000, "outcomes": 40_000}
            if quick
            else {"skills": 50_000, "relations": 200_000, "outcomes": 1_000_000}
        ),
    }
    nodes = sizes["patterns"]
    phases: dict[str, Callable[[], dict[str, Any]]] = {
        "scan": lambda: _bench_scan(work, sizes["scan"]),
        "suggest": lambda: _bench_suggest(work, sizes["suggest"]),
        "app": lambda: _bench_app(work, sizes["suggest"]),
        "ingest": lambda: _bench_ingest(work),
        "review": lambda: _bench_review(work, sizes["suggest"]),
        "routing": lambda: _bench_routing(work),
        "consolidate": lambda: _bench_consolidate(work, sizes["consolidate"]),
        "session_start": lambda: _bench_session_start(work, nodes),
        "mcp": lambda: _bench_mcp(work, nodes),
        "lifecycle": lambda: _bench_lifecycle(work, sizes["lifecycle"]),
        "quality": lambda: _bench_quality(work),
        "secrets": lambda: _bench_secrets(work),
        "team": lambda: _bench_team(work, quick),
        "budget": lambda: _bench_budget(work, sizes["budget"]),
        "overlap": lambda: _bench_overlap(work, sizes["suggest"]),
        "lint": lambda: _child("child-lint", str(_corpus() / "skills")),
        "prompt_hook": lambda: _bench_prompt_hook(work, sizes["suggest"]),
    }
    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "sizes": sizes,
        "budgets": {f"{section}.{field}": limit for (section, field), limit in BUDGETS.items()},
    }
    for name, phase in phases.items():
        if not only or name in only:
            started = time.perf_counter()
            results[name] = phase()
            results[name]["phase_seconds"] = round(time.perf_counter() - started, 1)
            _settle()
    results["within_budget"] = _check(results)
    return results


def _settle(seconds: float = 1.5) -> None:
    """Between phases: flush the files the last one wrote and let its detached processes
    (the hook's spool worker) exit, so phases are measured independently."""
    os.sync()
    time.sleep(seconds)


def _check(results: dict[str, Any]) -> dict[str, bool]:
    verdict = {}
    for (section, field), limit in BUDGETS.items():
        value = results.get(section, {}).get(field)
        if isinstance(value, int | float):
            floor = field.startswith("recall") or field.endswith("per_second") or field in FLOORS
            ok = value >= limit if floor else value <= limit
            verdict[f"{section}.{field}"] = ok
    return verdict


# -- phases (parent side) ----------------------------------------------------------------


def _bench_scan(work: Path, count: int) -> dict[str, Any]:
    from store.synthetic import write_skills

    skills = work / f"skills-{count}"
    write_skills(skills, count)
    library = work / f"scan-lib-{count}"
    shutil.rmtree(library, ignore_errors=True)
    cold = _child("child-scan", str(library), str(skills))
    warm = _child("child-scan", str(library), str(skills))
    return {
        "skills": count,
        "cold_seconds": cold.get("scan_seconds"),
        "cold_process_seconds": cold.get("process_seconds"),
        "cold_peak_rss_mb": cold.get("peak_rss_mb"),
        "cold_skills_per_second": _rate(count, cold.get("scan_seconds")),
        "warm_seconds": warm.get("scan_seconds"),
        "warm_process_seconds": warm.get("process_seconds"),
        "warm_skills_per_second": _rate(count, warm.get("scan_seconds")),
        "warm_changed": warm.get("changed"),
        **_bench_corpus_scan(work),
        "errors": [r["error"] for r in (cold, warm) if "error" in r],
    }


def _bench_corpus_scan(work: Path) -> dict[str, Any]:
    """A cold scan of the real third-party skills (longer descriptions than the synthetic
    ones: what the embedding batches' memory depends on)."""
    skills = _corpus() / "skills"
    if not skills.is_dir():
        return {"corpus_skipped": f"no corpus skills at {skills} (set LIBRARIAN_CORPUS)"}
    library = work / "scan-lib-corpus"
    shutil.rmtree(library, ignore_errors=True)
    cold = _child("child-scan", str(library), str(skills))
    return {
        "corpus_skills": cold.get("installed"),
        "corpus_cold_seconds": cold.get("scan_seconds"),
        "corpus_cold_peak_rss_mb": cold.get("peak_rss_mb"),
        **({"corpus_error": cold["error"]} if "error" in cold else {}),
    }


def _rate(count: int, seconds: Any) -> float | None:
    return round(count / seconds, 1) if isinstance(seconds, int | float) and seconds else None


def _big_library(work: Path, count: int) -> Path:
    """A cached library of `count` synthetic skills (built once, reused while unchanged)."""
    library = work / f"lib-{count}"
    marker = library / f".bench-{GENERATOR_VERSION}"
    if not marker.exists():
        from store.library import Library
        from store.synthetic import write_skills

        shutil.rmtree(library, ignore_errors=True)
        skills = work / f"skills-{count}"
        write_skills(skills, count)
        with Library(library) as lib:
            lib.scan([skills])
        marker.write_text("built\n")
    return library


def _bench_suggest(work: Path, count: int) -> dict[str, Any]:
    library = _big_library(work, count)
    latency = _child("child-suggest", str(library))
    index = _child("child-index", str(library))
    return {
        "skills": count,
        **{k: v for k, v in latency.items() if k != "process_seconds"},
        "index_build_seconds": index.get("build_seconds"),
        "index_surfaces": index.get("surfaces"),
        "batch_150_seconds": _batch_seconds(work, library, 150),
    }


def _batch_seconds(work: Path, library: Path, count: int) -> float | None:
    """Wall time of `librarian suggest --batch` with `count` contexts, model load included."""
    batch_file = work / f"batch-{count}.txt"
    batch_file.write_text("\n".join(_contexts(count)) + "\n", encoding="utf-8")
    argv = [
        *own_module("app"),
        "--library",
        str(library),
        "suggest",
        "--batch",
        str(batch_file),
        "--json",
    ]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    seconds = round(time.perf_counter() - started, 2)
    try:
        answered = len(json.loads(done.stdout)) if done.returncode == 0 else 0
    except json.JSONDecodeError:
        answered = 0
    return seconds if answered == count else None


def _bench_app(work: Path, count: int) -> dict[str, Any]:
    """Time to an interactive Skills screen, measured by `app.bench_app` (store stays headless)."""
    library = str(_big_library(work, count))
    return _json_from([*own_module("app.bench_app"), library], timeout=600)


def _bench_ingest(work: Path) -> dict[str, Any]:
    from store.synthetic import synthetic_session

    session = work / "sessions" / "bench-session.jsonl"
    synthetic_session(session, 1 << 20)
    library = work / "ingest-lib"
    shutil.rmtree(library, ignore_errors=True)
    result = _child("child-ingest", str(library), str(session))
    result["hook_stop_ms"] = _hook_ms(library, session)
    result["hook_stop_cpu_ms"] = _hook_cpu_ms(library, session)
    result.update(_hook_burst(work, session))
    return result


def _hook_argv(library: Path) -> list[str]:
    """The Stop hook's command as `librarian hooks install` writes it."""
    return [*own_module("app"), "--library", str(library), "hook", "stop"]


def _hook_payload(session: Path) -> str:
    return json.dumps(
        {"session_id": "bench-session", "transcript_path": str(session), "hook_event_name": "Stop"}
    )


def _hook_ms(library: Path, session: Path, runs: int = 7) -> float:
    """Median wall time of the whole `librarian hook stop` process, as Claude Code runs it."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            _hook_argv(library),
            input=_hook_payload(session),
            text=True,
            capture_output=True,
            check=False,
            timeout=60,
        )
        times.append((time.perf_counter() - started) * 1000)
    _wait_for_spool(library / "spool")
    return round(statistics.median(times), 1)


def _hook_cpu_ms(library: Path, session: Path, runs: int = 7) -> float:
    """Median CPU time (user + system) of one whole hook process, start-up and imports
    included (its worker is a separate, detached process and not counted)."""
    samples = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            _hook_argv(library),
            input=_hook_payload(session),
            text=True,
            capture_output=True,
            check=False,
            timeout=60,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        samples.append(cpu * 1000)
    _wait_for_spool(library / "spool")
    return round(statistics.median(samples), 1)


def _hook_burst(work: Path, session: Path, hooks_at_once: int = 20) -> dict[str, Any]:
    """`hooks_at_once` Stop hooks started together on a fresh library (each a separate
    process, as Claude Code sessions ending their turns at once): the slowest one's wall
    time, and how many workers loaded the library to drain them."""
    library = work / "hook-burst-lib"
    shutil.rmtree(library, ignore_errors=True)
    payload = _hook_payload(session).encode()
    started = time.perf_counter()
    children = [
        subprocess.Popen(_hook_argv(library), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        for _ in range(hooks_at_once)
    ]
    finished = []
    for child in children:
        assert child.stdin is not None
        child.stdin.write(payload)
        child.stdin.close()
    for child in children:
        child.wait(timeout=60)
        finished.append((time.perf_counter() - started) * 1000)
    spool = library / "spool"
    _wait_for_spool(spool)
    log = (spool / "worker.log").read_text() if (spool / "worker.log").exists() else ""
    loads = sum(1 for line in log.splitlines() if "ingested" in line)
    return {"hook_burst_20_slowest_ms": round(max(finished), 1), "hook_burst_20_workers": loads}


def _wait_for_spool(spool: Path, seconds: float = 120) -> None:
    """Until the hooks' worker has drained the spool (so it does not skew what follows)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not worker_running(spool) and not has_queue(spool):
            time.sleep(0.6)  # a worker still in its start-up delay
            if not worker_running(spool) and not has_queue(spool):
                return
        time.sleep(0.2)


#: Nodes per session in the review library, and suppressed nodes per pending one.
REVIEW_SESSION_NODES = 50
REVIEW_SUPPRESSED_SHARE = 0.5
_REVIEW_MARKER = ".bench-review-2"


def review_library(work: Path, count: int) -> Path:
    """A cached library with `count` pending nodes (and half as many suppressed ones, below
    the knowledge bar) in sessions of `REVIEW_SESSION_NODES`, written through real events.
    Informativeness and confidence vary, so the queue's `best` order has work to do."""
    from store.library import Library

    library = work / f"review-queue-{count}"
    with _locked(library):
        if not (library / _REVIEW_MARKER).exists():
            shutil.rmtree(library, ignore_errors=True)
            with Library(library) as lib, lib.db.write() as conn:
                suppressed = int(count * REVIEW_SUPPRESSED_SHARE)
                for first in range(0, count + suppressed, REVIEW_SESSION_NODES):
                    numbers = range(first, min(first + REVIEW_SESSION_NODES, count + suppressed))
                    _review_session(lib, conn, first // REVIEW_SESSION_NODES, numbers, count)
            (library / _REVIEW_MARKER).write_text("built\n")
    return library


def _review_session(
    lib: Library, conn: sqlite3.Connection, number: int, nodes: range, pending: int
) -> None:
    """One session of the review library: its messages, then its nodes (those numbered
    `pending` and up are suppressed)."""
    types = ("HYPOTHESIS", "INVESTIGATION", "DEAD_END", "PIVOT", "SOLUTION", "DISCOVERY")
    session = f"bench-{number:05d}"
    started = f"2026-10-{1 + number % 28:02d}T{number % 24:02d}:00:00Z"
    text = "the pool ran dry again."
    rows = [
        [
            i,
            f"{session}.jsonl",
            i + 1,
            i + 1,
            "assistant",
            "text",
            f"Message {i}: {text}",
            started,
            0,
        ]
        for i in range(len(nodes))
    ]
    messages = json.dumps(rows)
    digest = hashlib.sha256(messages.encode()).hexdigest()
    conn.execute("INSERT OR IGNORE INTO blobs(hash, text) VALUES (?,?)", (digest, messages))
    lib.append_event(
        conn,
        "session.ingested",
        f"session:{session}",
        {
            "session_id": session,
            "project": f"/work/bench-{number % 7}",
            "branch": "main",
            "client_version": "2.1.39",
            "started_at": started,
            "ended_at": started,
            "turns": len(nodes) // 4,
            "tool_calls": 0,
            "errors": 0,
            "skills_used": [],
            "skipped": {},
            "developer": "bench",
            "messages_hash": digest,
            "files": [],
        },
    )
    for line, i in enumerate(nodes):
        node = {
            "node_id": f"n_bench{i:08d}",
            "session_id": session,
            "project": f"/work/bench-{number % 7}",
            "type": types[i % len(types)],
            "summary": f"Finding {i}: pool exhausted under load in worker {i % 17}",
            "evidence": f"Message {line}: the pool ran dry again.",
            "file": f"{session}.jsonl",
            "line_start": line + 1,
            "line_end": line + 1,
            "confidence": round(0.45 + (i % 4) * 0.1, 2),
            "scope": "PROJECT",
            "tier": "warm",
            "strategy": "keywords",
            "developer": "bench",
            "key": str(i),
            "edges_in": [],
            "informativeness": round((i * 37 % 100) / 100, 2),
            "suppressed": "narration of intent, not a finding" if i >= pending else "",
        }
        lib.append_event(conn, "node.extracted", f"node:{node['node_id']}", {"node": node})


def _bench_review(work: Path, count: int) -> dict[str, Any]:
    """The review queue with `count` pending nodes, measured by `app.bench_app --review`."""
    library = str(review_library(work, count))
    copy = _run_dir(work, f"review-{count}")  # decisions change the library: work on a copy
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(library, copy)
    try:
        return _json_from([*own_module("app.bench_app"), "--review", str(copy)], timeout=600)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _bench_team(work: Path, quick: bool) -> dict[str, Any]:
    """Issue 13: push, pull, the team review queue and status on an embedded hub."""
    from store.team.bench import run  # psycopg and the embedded server: only this phase

    return run(work, quick)


def _corpus() -> Path:
    """The third-party corpus: `LIBRARIAN_CORPUS`, else `shared/corpus` beside the project."""
    return Path(os.environ.get("LIBRARIAN_CORPUS", Path(__file__).parents[2] / "shared" / "corpus"))


def _bench_secrets(work: Path) -> dict[str, Any]:
    """Recall of `redact` over generated credentials, its redactions (and false positives) in
    the corpus transcripts, and its speed on transcript-like text."""
    from store.synthetic import synthetic_session

    session = work / "sessions" / "bench-session.jsonl"
    if not session.is_file():
        synthetic_session(session, 1 << 20)
    return _child("child-secrets", str(session), str(_corpus() / "transcripts"))


def _bench_routing(work: Path) -> dict[str, Any]:
    corpus = _corpus()
    if not (corpus / "skills").is_dir():
        return {"skipped": f"corpus not found at {corpus} (set LIBRARIAN_CORPUS)"}
    return _child("child-routing", str(work / "routing-lib"), str(corpus / "skills"))


def _bench_quality(work: Path) -> dict[str, Any]:
    """Issue 11: the corpus transcripts through the warm tier, against the labelled lessons."""
    from store.quality.labels import LABELS_DIR

    transcripts = _corpus() / "transcripts"
    if not transcripts.is_dir():
        return {"skipped": f"no transcripts at {transcripts} (set LIBRARIAN_CORPUS)"}
    if not (LABELS_DIR / "lessons.jsonl").is_file():
        return {"skipped": f"no labels at {LABELS_DIR} (they ship with the source, not the wheel)"}
    return _child("child-quality", str(work / "quality"), str(transcripts))


# -- patterns: consolidation, the SessionStart hook, the MCP server --------------------------

PATTERNS_VERSION = "2"
#: Pending nodes left in a patterns library, approved before the incremental consolidation.
INCREMENTAL_EXTRA = 500
_PATTERNS_MARKER = ".bench-patterns"
_CONSOLIDATED_MARKER = ".bench-consolidated"
#: Sources whose changes make a cached consolidated library stale.
_CONSOLIDATION_CODE = ("consolidate.py", "cluster.py", "classify.py", "bar.py", "decay.py")


#: The oldest cached schema that can be migrated in place (v5 and v6 only added tables and
#: indexes).
_UPGRADABLE_FROM = 4


def _schema_version(library: Path) -> int:
    db = library / "library.db"
    if not db.exists():
        return -1
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _marker(library: Path, name: str) -> dict[str, Any] | None:
    """The marker's content when the cached library is complete and its schema current."""
    from store.migrations import MIGRATIONS

    path = library / name
    if not path.exists() or _schema_version(library) < _UPGRADABLE_FROM:
        return None
    if _schema_version(library) < len(MIGRATIONS):
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


def _extra_for(nodes: int) -> int:
    """Pending nodes kept back for the incremental run: under consolidation's incremental cap
    (10% of the clustered nodes), so the run really is incremental."""
    return min(INCREMENTAL_EXTRA, nodes // 20)


def skills_for(nodes: int) -> int:
    """Skills installed in the patterns library of `nodes` nodes (10,000 with the big one)."""
    return 10_000 if nodes >= 100_000 else 1000


def patterns_library(work: Path, nodes: int) -> Path:
    """A cached library of `nodes` approved reasoning nodes (about five a session, a few
    projects, recurring problems: see `store.synthetic.reasoning_sessions`) plus
    `_extra_for(nodes)` pending ones, written through real events (`session.ingested`,
    `node.extracted`, then `node.approved` from `Library.review`), every node text embedded
    in advance, on top of a copy of the cached `skills_for(nodes)`-skill library. Rebuilt when
    missing, made by another generator or older than the current schema."""
    library = work / f"patterns-{nodes}"
    extra, skills = _extra_for(nodes), skills_for(nodes)
    spec = {"generator": PATTERNS_VERSION, "nodes": nodes, "skills": skills, "extra": extra}
    with _locked(library):
        found = _marker(library, _PATTERNS_MARKER)
        if not (found and found.get("spec") == spec):
            _build_patterns(library, nodes, extra, skills, spec, work)
    return library


@contextlib.contextmanager
def _locked(library: Path) -> Iterator[None]:
    """Hold an exclusive lock for building or replacing a cached library: several benches
    may run at once on one machine and share the cache."""
    with (library.parent / f".{library.name}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run_dir(work: Path, name: str) -> Path:
    """A working copy's path of this process alone (concurrent benches share `work`)."""
    return work / f"{name}-run-{os.getpid()}"


def _build_patterns(
    library: Path, nodes: int, extra: int, skills: int, spec: dict[str, Any], work: Path
) -> None:
    from store.ingest.pipeline import node_text
    from store.library import Library
    from store.skills.surface import text_hash
    from store.synthetic import reasoning_sessions

    started = time.perf_counter()
    _fresh_copy(_big_library(work, skills), library)
    (library / f".bench-{GENERATOR_VERSION}").unlink(missing_ok=True)
    sessions = reasoning_sessions(nodes + extra)
    all_nodes = [n for s in sessions for n in s["nodes"]]
    with Library(library) as lib:
        for start in range(0, len(sessions), 250):
            _write_sessions(lib, sessions[start : start + 250])
        ids = [str(n["node_id"]) for n in all_nodes[:nodes]]
        for start in range(0, len(ids), 2000):
            lib.review("approve", ids[start : start + 2000])
        texts = {}
        for n in all_nodes:
            text = node_text(str(n["type"]), str(n["summary"]))
            texts[text_hash(text)] = text
        pending = list(texts.items())
        for start in range(0, len(pending), 4096):
            lib.embed_missing(dict(pending[start : start + 4096]))
            _note(f"patterns-{nodes}: embedded {min(start + 4096, len(pending))}/{len(pending)}")
    token = hashlib.sha256(f"{spec}{time.time_ns()}".encode()).hexdigest()[:16]
    (library / _PATTERNS_MARKER).write_text(json.dumps({"spec": spec, "token": token}) + "\n")
    _note(f"patterns-{nodes}: built in {time.perf_counter() - started:.0f}s")


def _note(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _write_sessions(library: Any, sessions: list[dict[str, Any]]) -> None:
    """Sessions and their nodes as the ingest pipeline records them, in one transaction."""
    from store.projections import store_blob

    with library.db.write() as conn:
        for session in sessions:
            digest = store_blob(conn, json.dumps(session["messages"]))
            sid = session["session_id"]
            library.append_event(
                conn,
                "session.ingested",
                f"session:{sid}",
                {
                    "session_id": sid,
                    "project": session["project"],
                    "branch": session["branch"],
                    "client_version": "2.1.39",
                    "started_at": session["started_at"],
                    "ended_at": session["ended_at"],
                    "turns": len(session["messages"]),
                    "tool_calls": 0,
                    "errors": 0,
                    "skills_used": [],
                    "skipped": {},
                    "developer": session["developer"],
                    "messages_hash": digest,
                    "files": [],
                },
            )
            for node in session["nodes"]:
                library.append_event(
                    conn, "node.extracted", f"node:{node['node_id']}", {"node": node}
                )


def _code_digest() -> str:
    digest = hashlib.sha256()
    for name in _CONSOLIDATION_CODE:
        path = Path(__file__).parent / "patterns" / name
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


def _consolidated_key(source: Path) -> dict[str, Any]:
    found = _marker(source, _PATTERNS_MARKER) or {}
    return {"source": found.get("token"), "code": _code_digest()}


def consolidated_library(work: Path, nodes: int) -> Path:
    """The patterns library after one full consolidation (cached while its source library and
    the consolidation code are unchanged): what the agent-facing phases query."""
    source = patterns_library(work, nodes)
    target = work / f"patterns-{nodes}-consolidated"
    with _locked(target):
        if _marker(target, _CONSOLIDATED_MARKER) == _consolidated_key(source):
            return target
        run = _run_dir(work, f"consolidate-{nodes}")
        with _locked(source):
            _fresh_copy(source, run)
        try:
            result = _child("child-consolidate", str(run), "full", timeout=7200)
            if "error" in result:
                raise RuntimeError(f"consolidating {run} failed: {result['error']}")
            _keep_consolidated(run, target, source)
        finally:
            shutil.rmtree(run, ignore_errors=True)
    return target


def _keep_consolidated(run: Path, target: Path, source: Path) -> None:
    _fresh_copy(run, target)
    (target / _CONSOLIDATED_MARKER).write_text(json.dumps(_consolidated_key(source)) + "\n")


def _fresh_copy(source: Path, target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target)


def _bench_consolidate(work: Path, sizes: list[int]) -> dict[str, Any]:
    """Per size: a first full consolidation (every pattern new), a full re-cluster of the same
    nodes, then an incremental run after approving the held-back pending nodes; each in its
    own child process on a copy of the cached library (embeddings cached: not measured)."""
    result: dict[str, Any] = {}
    for nodes in sizes:
        source = patterns_library(work, nodes)
        run = _run_dir(work, f"consolidate-{nodes}")
        with _locked(source):
            _fresh_copy(source, run)
        try:
            first = _child("child-consolidate", str(run), "full", timeout=7200)
            target = work / f"patterns-{nodes}-consolidated"
            with _locked(target):
                kept = _marker(target, _CONSOLIDATED_MARKER)
                if "error" not in first and kept != _consolidated_key(source):
                    _keep_consolidated(run, target, source)
            again = _child("child-consolidate", str(run), "full", timeout=7200)
            incremental = _child("child-consolidate", str(run), "approve", timeout=7200)
        finally:
            shutil.rmtree(run, ignore_errors=True)
        full_runs = [r for r in (first, again) if "error" not in r]
        result[f"seconds_{nodes}"] = max((r["seconds"] for r in full_runs), default=None)
        result[f"peak_rss_mb_{nodes}"] = max((r["peak_rss_mb"] for r in full_runs), default=None)
        result[f"patterns_{nodes}"] = first.get("patterns")
        result[f"method_{nodes}"] = first.get("method")
        result[f"incremental_seconds_{nodes}"] = incremental.get("seconds")
        result[f"runs_{nodes}"] = {"first": first, "recluster": again, "incremental": incremental}
        errors = [r["error"] for r in (first, again, incremental) if "error" in r]
        if errors:
            result.setdefault("errors", []).extend(errors)
    return result


def _librarian_argv(library: Path) -> list[str]:
    """This installation's `librarian` (what hooks run)."""
    return [*own_librarian(), "--library", str(library)]


def _busiest_project(library: Path) -> str:
    with contextlib.closing(sqlite3.connect(library / "library.db")) as conn:
        row = conn.execute(
            "SELECT project FROM sessions GROUP BY project ORDER BY count(*) DESC, project LIMIT 1"
        ).fetchone()
    return str(row[0]) if row else ""


def _bench_session_start(work: Path, nodes: int, runs: int = 7) -> dict[str, Any]:
    """Median wall time of the whole `librarian hook session-start` process, stdin as Claude
    Code sends it, its cwd inside the busiest project of the consolidated library."""
    from store.synthetic import synthetic_session

    source = consolidated_library(work, nodes)
    run = _run_dir(work, "session-start")  # the hook logs retrievals: work on a copy
    with _locked(source):
        _fresh_copy(source, run)
    project = _busiest_project(run)
    transcript = work / "sessions" / "session-start.jsonl"
    synthetic_session(transcript, 16 << 10, session_id="bench-start")
    payload = json.dumps(
        {
            "session_id": "bench-start",
            "transcript_path": str(transcript),
            "cwd": f"{project}/src",
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    argv = [*_librarian_argv(run), "hook", "session-start"]
    times: list[float] = []
    outputs: list[str] = []
    failures: list[str] = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run(
                argv, input=payload, text=True, capture_output=True, check=False, timeout=120
            )
            times.append((time.perf_counter() - started) * 1000)
            outputs.append(done.stdout)
            if done.returncode != 0:
                failures.append((done.stderr.strip().splitlines() or ["no output"])[-1])
    finally:
        shutil.rmtree(run, ignore_errors=True)
    result: dict[str, Any] = {
        "library": {"nodes": nodes, "skills": skills_for(nodes), "project": project},
        "runs": runs,
        "ms": round(statistics.median(times), 1),
        "first_ms": round(times[0], 1),
        "max_ms": round(max(times), 1),
        "output_chars": len(outputs[-1]),
        "output_head": outputs[-1][:300],
    }
    if failures:
        result["errors"] = failures[:3]
    elif not outputs[-1].strip():
        result["errors"] = ["the hook printed nothing"]
    return result


def _bench_mcp(work: Path, nodes: int, calls: int = 30) -> dict[str, Any]:
    """MCP tool latency after start-up, through the official client over stdio."""
    if not (Path(__file__).parents[1] / "app" / "mcp_server.py").exists():
        return {"skipped": "app/mcp_server.py does not exist yet"}
    source = consolidated_library(work, nodes)
    run = _run_dir(work, "mcp")  # every memory call logs a retrieval: work on a copy
    with _locked(source):
        _fresh_copy(source, run)
    try:
        result = _child("child-mcp", str(run), str(calls), timeout=1800)
        growth = _child("child-mcp-log", str(run), str(LOG_CALLS), timeout=3600)
    finally:
        shutil.rmtree(run, ignore_errors=True)
        _server_log(run).unlink(missing_ok=True)
    flat = {
        f"log_{kind}_{unit}": growth.get(kind, {}).get(unit)
        for kind in ("identical", "varied")
        for unit in ("events", "kb")
    }
    return {
        "library": {"nodes": nodes, "skills": skills_for(nodes)},
        **result,
        **flat,
        "mcp_log_growth": growth,
    }


# -- lifecycle: blast radius, health, the lifecycle screens (issue 5) -----------------------


def lifecycle_library(work: Path, size: dict[str, int]) -> tuple[Path, dict[str, Any]]:
    """The cached lifecycle library of `size` (skills, relations, outcomes; see
    `store.bench_lifecycle`) and its marker: the spec, the "now" its outcomes lead up to, and
    the build's stage timings (`built` true when this call built it)."""
    library = work / f"lifecycle-{size['skills']}"
    with _locked(library):
        return library, _lifecycle_ready(library, size)


def _lifecycle_ready(library: Path, size: dict[str, int]) -> dict[str, Any]:
    """Build the library unless its marker matches (the caller holds its lock)."""
    from store.bench_lifecycle import MARKER, Spec, build

    spec = Spec(**size)
    found = _marker(library, MARKER)
    if found and found.get("spec") == spec.as_dict():
        return {**found, "built": False}
    skills = library.with_name(f"lifecycle-skills-{spec.skills}")
    shutil.rmtree(library, ignore_errors=True)
    shutil.rmtree(skills, ignore_errors=True)
    info = build(library, skills, spec, progress=_note)
    marker = {"spec": spec.as_dict(), **info}
    (library / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    _note(f"lifecycle-{spec.skills}: built in {info['stages']['total']:.0f}s")
    return {**marker, "built": True}


def _bench_lifecycle(work: Path, size: dict[str, int]) -> dict[str, Any]:
    """Blast radius, health recompute and the four lifecycle screens on the lifecycle
    library, each in its own process with the library's clock held at its "now". The
    library is only read (no working copy): its lock is held throughout, so a concurrent
    bench neither rebuilds it meanwhile nor measures on the same cores at the same time."""
    library = work / f"lifecycle-{size['skills']}"
    with _locked(library):
        marker = _lifecycle_ready(library, size)
        return _measure_lifecycle(library, marker)


def _measure_lifecycle(library: Path, marker: dict[str, Any]) -> dict[str, Any]:
    now = str(marker["now"])
    blast = _child("child-blast", str(library), now)
    health = _child("child-health", str(library), now)
    result: dict[str, Any] = {
        "library": {**marker["spec"], "now": now, "built": marker["built"]},
        "build_stages_seconds": marker.get("stages", {}),
        "blast_p50_ms": blast.get("p50_ms"),
        "blast_p95_ms": blast.get("p95_ms"),
        "blast_max_ms": blast.get("max_ms"),
        "blast_cold_first_call_ms": blast.get("cold_first_call_ms"),
        "blast_graph_load_ms": blast.get("graph_load_ms"),
        "blast": blast,
        "health_seconds": health.get("seconds"),
        "health": health,
        "screens": {},
    }
    missing = []
    for mode in LIFECYCLE_SCREENS:
        argv = [*own_module("app.bench_app"), "--screen", mode, str(library), now]
        screen = _json_from(argv, timeout=600)
        result["screens"][mode] = screen
        if screen.get("missing"):
            missing.append(mode)
        result[f"{mode}_interactive_seconds"] = screen.get("interactive_seconds")
    if missing:
        result["missing_screens"] = missing
    parts = {"blast": blast, "health": health, **result["screens"]}
    errors = [f"{name}: {r['error']}" for name, r in parts.items() if "error" in r]
    if errors:
        result["errors"] = errors
    return result


def _percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return round(ordered[max(0, math.ceil(share * len(ordered)) - 1)], 2)


def _contexts(count: int) -> list[str]:
    from store.evaluation import load_queries

    queries = [q.text for q in load_queries()]
    return [queries[i % len(queries)] for i in range(count)]


def _bench_budget(work: Path, count: int) -> dict[str, Any]:
    """Claude Code's listing of `count` skills (the synthetic library's folder as the
    personal skills folder of a scratch home)."""
    library = _big_library(work, count)
    result = _child("child-budget", str(library), str(work / f"skills-{count}"), str(work))
    routing = _child("child-budget-routing", str(_corpus() / "skills"), str(work))
    return {"skills": count, **result, "routing": routing}


def _bench_overlap(work: Path, count: int) -> dict[str, Any]:
    return {"skills": count, **_child("child-overlap", str(_big_library(work, count)))}


def _bench_prompt_hook(work: Path, count: int) -> dict[str, Any]:
    library = _big_library(work, count)
    return {"skills": count, **_child("child-prompt-hook", str(library), "30")}


# -- phases (child side) -------------------------------------------------------------------

_STARTED = time.perf_counter()


def child_scan(library_dir: str, skills: str) -> dict[str, Any]:
    from store.library import Library

    with Library(Path(library_dir)) as lib:
        started = time.perf_counter()
        report = lib.scan([Path(skills)])
        seconds = time.perf_counter() - started
    return {
        "scan_seconds": round(seconds, 3),
        "installed": report.installed,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "process_seconds": round(time.perf_counter() - _STARTED, 3),
        "peak_rss_mb": _own_peak_rss_mb(),
    }


def child_suggest(library_dir: str) -> dict[str, Any]:
    from store.library import Library
    from store.search import Searcher

    with Library(Path(library_dir)) as lib:
        lib.sync_index()
        lib.embedder.embed(["warm up the model"])
        searcher = Searcher(lib.kernel)
        limit = int(lib.config.get("suggest.limit"))
        times = []
        for context in _contexts(200):
            started = time.perf_counter()
            vector = lib.embedder.embed([context])[0]
            searcher.suggest_one(context, vector, limit)
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "queries": len(times),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
        "max_ms": round(times[-1], 2),
        "peak_rss_mb": _own_peak_rss_mb(),
    }


def child_index(library_dir: str) -> dict[str, Any]:
    from store.library import Library

    with Library(Path(library_dir)) as lib:
        started = time.perf_counter()
        lib.sync_index(embed=False, force=True)
        seconds = time.perf_counter() - started
        return {"build_seconds": round(seconds, 2), "surfaces": lib.index.count}


def child_ingest(library_dir: str, session_file: str) -> dict[str, Any]:
    from store.ingest.transcript import parse_session
    from store.ingest.warm import extract_warm
    from store.library import Library
    from store.models import ParseFailure

    path = Path(session_file)
    size_mb = path.stat().st_size / (1 << 20)
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        parsed = parse_session(path)
        if isinstance(parsed, ParseFailure):
            raise RuntimeError(f"bench session did not parse: {parsed.reason}")
        extract_warm(parsed)
        runs.append(time.perf_counter() - started)
    warm = statistics.median(runs)
    with Library(Path(library_dir)) as lib:
        started = time.perf_counter()
        first = lib.ingest([path])
        full = time.perf_counter() - started
        events = lib.last_seq()
        again = []
        for _ in range(5):
            started = time.perf_counter()
            lib.ingest([path])
            again.append((time.perf_counter() - started) * 1000)
        unchanged_writes = lib.last_seq() - events
    return {
        "session_mb": round(size_mb, 2),
        "warm_ms": round(warm * 1000, 1),
        "warm_mb_per_second": round(size_mb / warm, 1),
        "first_ingest_seconds_with_embeddings": round(full, 2),
        "nodes_added": first.nodes_added,
        "nodes_merged": first.nodes_merged,
        "reingest_unchanged_ms": round(statistics.median(again), 1),
        "reingest_unchanged_writes": unchanged_writes,
    }


def child_secrets(session_file: str, transcripts: str) -> dict[str, Any]:
    from store import redaction_eval as ev

    recall = ev.measure_recall()
    texts = ev.message_texts(Path(session_file))
    result: dict[str, Any] = {
        "recall": round(recall.rate, 4),
        "formats": recall.formats,
        "formats_caught": recall.formats_caught,
        "samples": recall.samples,
        "samples_caught": recall.samples_caught,
        "missed": list(recall.missed),
        "mb_per_second": round(ev.throughput(texts, rounds=5), 1),
        "text_mb": round(sum(len(t.encode()) for t in texts) / (1 << 20), 2),
    }
    root = Path(transcripts)
    if not root.is_dir():
        result["corpus"] = f"skipped: no transcripts at {root} (set LIBRARIAN_CORPUS)"
        return result
    files = ev.transcript_files(root)
    found, size = ev.redactions(files, root)
    false = [r for r in found if (r.file, r.value) not in ev.REVIEWED_CORPUS_SECRETS]
    corpus_texts = [t for path in files for t in ev.message_texts(path)]
    result |= {
        "corpus_files": len(files),
        "corpus_mb": round(size / (1 << 20), 2),
        "corpus_redactions": len(found),
        "corpus_false_positives": len(false),
        "corpus_redacted": [f"{r.file}: …{r.before}[{r.value}]{r.after}…" for r in found],
        "corpus_mb_per_second": round(ev.throughput(corpus_texts, rounds=5), 1),
    }
    return result


def child_routing(library_dir: str, skills: str) -> dict[str, Any]:
    from store.evaluation import evaluate, load_queries
    from store.library import Library

    with Library(Path(library_dir)) as lib:
        lib.scan([Path(skills)])
        metrics = evaluate(lib, Path(skills), load_queries())
    overall = metrics["all"]
    assert isinstance(overall, dict)
    return {**overall, "by_split": metrics}


def child_consolidate(library_dir: str, mode: str) -> dict[str, Any]:
    """One consolidation: `full` re-clusters everything; `approve` first approves every
    pending node (as a reviewer would), then runs the default (incremental) consolidation.
    With LIBRARIAN_BENCH_PROFILE set, the run is profiled (slower) and the top functions by
    cumulative time are returned."""
    import cProfile
    import io
    import pstats

    from store.library import Library

    marks: list[tuple[float, str]] = []
    profiler = cProfile.Profile() if os.environ.get("LIBRARIAN_BENCH_PROFILE") else None
    with Library(Path(library_dir)) as lib:
        approved, approve_seconds = 0, 0.0
        if mode == "approve":
            with lib.db.read() as conn:
                pending = [
                    r[0]
                    for r in conn.execute(
                        "SELECT node_id FROM nodes WHERE status='pending' ORDER BY node_id"
                    )
                ]
            started = time.perf_counter()
            for start in range(0, len(pending), 2000):
                lib.review("approve", pending[start : start + 2000])
            approve_seconds = time.perf_counter() - started
            approved = len(pending)
        started = time.perf_counter()

        def progress(message: str) -> None:
            marks.append((time.perf_counter() - started, message))

        if profiler:
            profiler.enable()
        report = lib.consolidate(full=mode == "full", progress=progress)
        if profiler:
            profiler.disable()
        seconds = time.perf_counter() - started
        with lib.db.read() as conn:
            live = conn.execute(
                "SELECT count(*) FROM patterns WHERE status IN ('active', 'graduated')"
            ).fetchone()[0]
    result: dict[str, Any] = {
        "mode": mode,
        "seconds": round(seconds, 2),
        "peak_rss_mb": _own_peak_rss_mb(),
        "ru_maxrss_mb": _rss_mb(),
        "nodes": report.nodes,
        "method": report.method,
        "patterns": report.patterns,
        "live_patterns": int(live),
        "created": report.created,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "dissolved": report.dissolved,
        "decayed": report.decayed,
        "stages": _stages(marks, seconds),
    }
    if mode == "approve":
        result["approved_before"] = approved
        result["approve_seconds"] = round(approve_seconds, 2)
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        result["profile"] = [line for line in out.getvalue().splitlines() if line.strip()][-32:]
    return result


def _stages(marks: list[tuple[float, str]], total: float) -> dict[str, float]:
    """Seconds per consolidation stage, from the progress messages it sends: load (approved
    nodes read), vectors (cached embeddings and the cluster cache read), cluster (clustering
    and medoids) or, incrementally, vectors_and_assign (both, new nodes joining clusters),
    then classify, write and decay."""
    names = []
    for _, message in marks:
        if message.endswith("approved nodes"):
            names.append("load")
        elif message == "clustering":
            names.append("vectors")
        elif "clusters" in message:  # no "clustering" first: the incremental path
            names.append("cluster" if "vectors" in names else "vectors_and_assign")
        else:
            names.append(message)
    stages: dict[str, float] = {}
    previous = 0.0
    for name, (at, _) in zip(names, marks, strict=True):
        stages[name] = round(at - previous, 2)
        previous = at
    stages["classify_write_decay"] = round(total - previous, 2)
    return stages


def _server_log(library: Path) -> Path:
    return library.with_name(f"{library.name}.server.log")


def child_mcp(library_dir: str, calls: str) -> dict[str, Any]:
    log = _server_log(Path(library_dir))  # the server's stderr, not measured
    with log.open("w", encoding="utf-8") as errlog:
        try:
            return asyncio.run(_mcp_calls(library_dir, int(calls), errlog))
        except BaseException as exc:
            errlog.flush()
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"MCP run failed: {exc!r}; server log: {tail}") from exc


#: Memory tools measured, each found among the server's tools by a name test.
_MCP_TOOLS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("search_memory", lambda n: "search" in n and "skill" not in n),
    ("pitfalls", lambda n: "pitfall" in n),
    ("diagnose", lambda n: "diagnos" in n),
    ("suggest_skills", lambda n: "suggest" in n or ("skill" in n and "search" in n)),
)
_QUERY_FIELDS = ("query", "problem", "context", "task", "text", "description", "q")


def _tool_arguments(schema: dict[str, Any], query: str, project: str) -> dict[str, Any]:
    """Arguments for a tool from its input schema: the query in its text field (a known name,
    else the first required string), the project where the tool takes one."""
    properties: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    field = next((f for f in _QUERY_FIELDS if f in properties), None) or next(
        (f for f in required if (properties.get(f) or {}).get("type") == "string"), None
    )
    arguments: dict[str, Any] = {field: query} if field else {}
    if project and "project" in properties:
        arguments["project"] = project
    return arguments


def _schema(tool: Any) -> dict[str, Any]:
    """A tool's input schema (`input_schema` in mcp 2, `inputSchema` before)."""
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
    return schema if isinstance(schema, dict) else {}


async def _mcp_calls(library_dir: str, calls: int, errlog: Any) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from store.synthetic import PROJECTS, problem_queries

    server = StdioServerParameters(
        command=own_module("app")[0],
        args=[*own_module("app")[1:], "--library", library_dir, "mcp"],
        env=dict(os.environ),
    )
    memory_queries = problem_queries(calls * 3 + 3)
    skill_queries = _contexts(calls + 1)
    started = time.perf_counter()
    async with (
        stdio_client(server, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        startup_ms = (time.perf_counter() - started) * 1000
        listed = await session.list_tools()
        tools = {t.name: t for t in listed.tools}
        chosen: dict[str, str] = {}
        for label, test in _MCP_TOOLS:
            name = next((n for n in sorted(tools) if test(n.lower())), None)
            if name and name not in chosen.values():
                chosen[label] = name
        times: dict[str, list[float]] = {label: [] for label in chosen}
        first: dict[str, float] = {}
        errors: dict[str, int] = {label: 0 for label in chosen}
        for round_ in range(calls + 1):  # round 0: each tool's first call (start-up)
            for position, (label, name) in enumerate(chosen.items()):
                if label == "suggest_skills":
                    query = skill_queries[round_]
                else:
                    query = memory_queries[(round_ * 3 + position) % len(memory_queries)]
                project = PROJECTS[round_ % len(PROJECTS)] if round_ % 2 else ""
                arguments = _tool_arguments(_schema(tools[name]), query, project)
                began = time.perf_counter()
                answer = await session.call_tool(name, arguments, read_timeout_seconds=300)
                elapsed = (time.perf_counter() - began) * 1000
                if getattr(answer, "is_error", None) or getattr(answer, "isError", None):
                    errors[label] += 1
                if round_ == 0:
                    first[label] = round(elapsed, 1)
                else:
                    times[label].append(elapsed)
    every = [t for values in times.values() for t in values]
    per_tool = {
        label: {
            "tool": chosen[label],
            "calls": len(values),
            "p50_ms": round(statistics.median(values), 2) if values else None,
            "p95_ms": _percentile(values, 0.95) if values else None,
            "max_ms": round(max(values), 2) if values else None,
            "first_call_ms": first.get(label),
            "errors": errors[label],
        }
        for label, values in times.items()
    }
    result: dict[str, Any] = {
        "startup_ms": round(startup_ms, 1),
        "tools_listed": sorted(tools),
        "calls": len(every),
        "p50_ms": round(statistics.median(every), 2) if every else None,
        "p95_ms": _percentile(every, 0.95) if every else None,
        "max_ms": round(max(every), 2) if every else None,
        "tools": per_tool,
        "peak_rss_mb_client": _own_peak_rss_mb(),
    }
    missing = [label for label, _ in _MCP_TOOLS if label not in chosen]
    if missing:
        result["missing_tools"] = missing
    if any(errors.values()):
        result["tool_errors"] = sum(errors.values())
    return result


def child_quality(workdir: str, transcripts: str) -> dict[str, Any]:
    from store.quality.corpus import run_quality

    return run_quality(Path(transcripts), workdir=Path(workdir)).to_json()


#: Read calls per retrieval-log growth scenario (`mcp_log_growth`).
LOG_CALLS = 1000


def child_mcp_log(library_dir: str, calls: str) -> dict[str, Any]:
    """What `calls` memory searches through `librarian mcp` add to the library: identical
    calls and varied ones with the default retrieval window, and identical calls with no
    window (one event per call, as before the window). Each scenario is one server session;
    the roll-up is written when the server stops, so it is counted."""
    from store.config import Config
    from store.synthetic import problem_queries

    count = int(calls)
    library = Path(library_dir)
    varied = [f"{q} (case {i})" for i, q in enumerate(problem_queries(count, seed=71))]
    scenarios: list[tuple[str, list[str], Any]] = [
        ("identical", ["connection pool exhausted under load"] * count, None),
        ("varied", varied, None),
        ("identical_every_call", ["connection pool exhausted under load"] * count, 0),
    ]
    config = Config(library / "config.toml")
    result: dict[str, Any] = {"calls": count}
    log = _server_log(library)
    with log.open("w", encoding="utf-8") as errlog:
        for name, queries, window in scenarios:
            config.set("mcp.log_window_seconds", str(600 if window is None else window))
            before = _log_size(library)
            started = time.perf_counter()
            errors = asyncio.run(_mcp_searches(library_dir, queries, errlog))
            after = _log_size(library)
            result[name] = {
                "window_seconds": 600 if window is None else window,
                "events": after["events"] - before["events"],
                "event_bytes": after["event_bytes"] - before["event_bytes"],
                "kb": round((after["db_bytes"] - before["db_bytes"]) / 1024, 1),
                "seconds": round(time.perf_counter() - started, 1),
                "errors": errors,
            }
    return result


def _log_size(library: Path) -> dict[str, int]:
    """Events, their stored bytes, and the database file's size once the WAL is folded in."""
    with contextlib.closing(sqlite3.connect(library / "library.db")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        events, size = conn.execute(
            "SELECT count(*), coalesce(sum(length(ts) + length(type) + length(actor)"
            " + length(subject) + length(CAST(payload AS BLOB)) + length(prev_hash)"
            " + length(hash)), 0) FROM events"
        ).fetchone()
    return {
        "events": int(events),
        "event_bytes": int(size),
        "db_bytes": (library / "library.db").stat().st_size,
    }


async def _mcp_searches(library_dir: str, queries: list[str], errlog: Any) -> int:
    """Call the memory search tool once per query in one server session; returns errors."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(
        command=own_module("app")[0],
        args=[*own_module("app")[1:], "--library", library_dir, "mcp"],
        env=dict(os.environ),
    )
    errors = 0
    async with (
        stdio_client(server, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        test = dict(_MCP_TOOLS)["search_memory"]
        name = next(t.name for t in sorted(listed.tools, key=lambda t: t.name) if test(t.name))
        schema = _schema(next(t for t in listed.tools if t.name == name))
        for query in queries:
            answer = await session.call_tool(
                name, _tool_arguments(schema, query, ""), read_timeout_seconds=300
            )
            if getattr(answer, "is_error", None) or getattr(answer, "isError", None):
                errors += 1
    return errors


def child_blast(library_dir: str, now: str) -> dict[str, Any]:
    from store.bench_lifecycle import measure_blast

    return {**measure_blast(Path(library_dir), now), "peak_rss_mb": _own_peak_rss_mb()}


def child_health(library_dir: str, now: str) -> dict[str, Any]:
    from store.bench_lifecycle import measure_health

    return {**measure_health(Path(library_dir), now), "peak_rss_mb": _own_peak_rss_mb()}


_CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "child-scan": child_scan,
    "child-suggest": child_suggest,
    "child-index": child_index,
    "child-routing": child_routing,
    "child-ingest": child_ingest,
    "child-consolidate": child_consolidate,
    "child-mcp": child_mcp,
    "child-mcp-log": child_mcp_log,
    "child-blast": child_blast,
    "child-health": child_health,
    "child-quality": child_quality,
    "child-secrets": child_secrets,
    **CATALOG_CHILDREN,
}

if __name__ == "__main__":
    print(json.dumps(_CHILDREN[sys.argv[1]](*sys.argv[2:])))
