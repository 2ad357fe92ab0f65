"""`librarian bench` phases, parent side: scanning, suggesting, the app, ingest and the Stop
hook, the review queue, the team hub, secrets, routing, quality, the lifecycle library and
catalog health. Each measurement itself runs in a child (`children`)."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.hooks import has_queue, worker_running
from store.models.events import EventType
from store.process import own_librarian
from tooling.bench.common import (
    big_library,
    cached_marker,
    corpus_dir,
    locked,
    note,
    rate_per_second,
    run_child,
    run_dir,
    task_contexts,
)

if TYPE_CHECKING:
    from store.library import Library


#: The lifecycle screens measured on the lifecycle library (missing ones are reported).
LIFECYCLE_SCREENS = ("graph", "health", "lineage", "runbook")


def _bench_scan(work: Path, count: int) -> dict[str, Any]:
    from tooling.synthetic.data import write_skills

    skills = work / f"skills-{count}"
    write_skills(skills, count)
    library = work / f"scan-lib-{count}"
    shutil.rmtree(library, ignore_errors=True)
    cold = run_child("child-scan", str(library), str(skills))
    warm = run_child("child-scan", str(library), str(skills))
    return {
        "skills": count,
        "cold_seconds": cold.get("scan_seconds"),
        "cold_process_seconds": cold.get("process_seconds"),
        "cold_peak_rss_mb": cold.get("peak_rss_mb"),
        "cold_skills_per_second": rate_per_second(count, cold.get("scan_seconds")),
        "warm_seconds": warm.get("scan_seconds"),
        "warm_process_seconds": warm.get("process_seconds"),
        "warm_skills_per_second": rate_per_second(count, warm.get("scan_seconds")),
        "warm_changed": warm.get("changed"),
        **_bench_corpus_scan(work),
        "errors": [r["error"] for r in (cold, warm) if "error" in r],
    }


def _bench_corpus_scan(work: Path) -> dict[str, Any]:
    """A cold scan of the real third-party skills (longer descriptions than the synthetic
    ones: what the embedding batches' memory depends on)."""
    skills = corpus_dir() / "skills"
    if not skills.is_dir():
        return {"corpus_skipped": f"no corpus skills at {skills} (set LIBRARIAN_CORPUS)"}
    library = work / "scan-lib-corpus"
    shutil.rmtree(library, ignore_errors=True)
    cold = run_child("child-scan", str(library), str(skills))
    return {
        "corpus_skills": cold.get("installed"),
        "corpus_cold_seconds": cold.get("scan_seconds"),
        "corpus_cold_peak_rss_mb": cold.get("peak_rss_mb"),
        **({"corpus_error": cold["error"]} if "error" in cold else {}),
    }


def _bench_suggest(work: Path, count: int) -> dict[str, Any]:
    library = big_library(work, count)
    latency = run_child("child-suggest", str(library))
    index = run_child("child-index", str(library))
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
    batch_file.write_text("\n".join(task_contexts(count)) + "\n", encoding="utf-8")
    argv = [
        *own_librarian(),
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
    library = str(big_library(work, count))
    return run_child("app-skills", library, timeout=600)


def _bench_ingest(work: Path) -> dict[str, Any]:
    from tooling.synthetic.data import synthetic_session

    session = work / "sessions" / "bench-session.jsonl"
    synthetic_session(session, 1 << 20)
    library = work / "ingest-lib"
    shutil.rmtree(library, ignore_errors=True)
    result = run_child("child-ingest", str(library), str(session))
    real = [corpus_dir() / "transcripts", *filter(None, [_tune_set()])]
    if real[0].is_dir():
        # The same warm tier on real sessions: the synthetic one packs far more failures,
        # and so candidates, into a megabyte than any real session does.
        result["real_sessions"] = run_child("child-ingest-real", *map(str, real))
    result["hook_stop_ms"] = _hook_ms(library, session)
    result["hook_stop_cpu_ms"] = _hook_cpu_ms(library, session)
    result.update(_hook_burst(work, session))
    return result


def _hook_argv(library: Path) -> list[str]:
    """The Stop hook's command as `librarian hooks install` writes it."""
    return [*own_librarian(), "--library", str(library), "hook", "stop"]


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
    with locked(library):
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
        EventType.SESSION_INGESTED,
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
        lib.append_event(conn, EventType.NODE_EXTRACTED, f"node:{node['node_id']}", {"node": node})


def _bench_review(work: Path, count: int) -> dict[str, Any]:
    """The review queue with `count` pending nodes, measured by `app-review` (`app.bench_app`)."""
    library = str(review_library(work, count))
    copy = run_dir(work, f"review-{count}")  # decisions change the library: work on a copy
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(library, copy)
    try:
        return run_child("app-review", str(copy), timeout=600)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _bench_team(work: Path, quick: bool) -> dict[str, Any]:
    """Issue 13: push, pull, the team review queue and status on an embedded hub."""
    from tooling.bench.team import run  # psycopg and the embedded server: only this phase

    return run(work, quick)


def _bench_secrets(work: Path) -> dict[str, Any]:
    """Recall of `redact` over generated credentials, its redactions (and false positives) in
    the corpus transcripts, and its speed on transcript-like text."""
    from tooling.synthetic.data import synthetic_session

    session = work / "sessions" / "bench-session.jsonl"
    if not session.is_file():
        synthetic_session(session, 1 << 20)
    return run_child("child-secrets", str(session), str(corpus_dir() / "transcripts"))


def _bench_routing(work: Path) -> dict[str, Any]:
    corpus = corpus_dir()
    if not (corpus / "skills").is_dir():
        return {"skipped": f"corpus not found at {corpus} (set LIBRARIAN_CORPUS)"}
    return run_child("child-routing", str(work / "routing-lib"), str(corpus / "skills"))


def _bench_quality(work: Path) -> dict[str, Any]:
    """Issue 11: the corpus transcripts through the warm tier, against the labelled lessons."""
    from store.quality.labels import LABELS_DIR

    transcripts = corpus_dir() / "transcripts"
    if not transcripts.is_dir():
        return {"skipped": f"no transcripts at {transcripts} (set LIBRARIAN_CORPUS)"}
    if not (LABELS_DIR / "lessons.jsonl").is_file():
        return {"skipped": f"no labels at {LABELS_DIR} (they ship with the source, not the wheel)"}
    report = run_child("child-quality", str(work / "quality"), str(transcripts))
    tune = _tune_set()
    if tune is not None:
        report["tune"] = run_child("child-quality-tune", str(work / "quality"), str(tune))
    return report


def _tune_set() -> Path | None:
    """A second set of real sessions nobody labelled (`LIBRARIAN_QUALITY_TUNE`), read in place
    and only from outside the project: no transcript is copied into the repository."""
    named = os.environ.get("LIBRARIAN_QUALITY_TUNE", "")
    if not named:
        return None
    folder = Path(named).expanduser().resolve()
    project = Path(__file__).resolve().parents[2]
    if not folder.is_dir() or folder.is_relative_to(project):
        return None
    return folder


# -- lifecycle: blast radius, health, the lifecycle screens (issue 5) -----------------------


def lifecycle_library(work: Path, size: dict[str, int]) -> tuple[Path, dict[str, Any]]:
    """The cached lifecycle library of `size` (skills, relations, outcomes; see
    `tooling.bench.lifecycle`) and its marker: the spec, the "now" its outcomes lead up to, and
    the build's stage timings (`built` true when this call built it)."""
    library = work / f"lifecycle-{size['skills']}"
    with locked(library):
        return library, _lifecycle_ready(library, size)


def _lifecycle_ready(library: Path, size: dict[str, int]) -> dict[str, Any]:
    """Build the library unless its marker matches (the caller holds its lock)."""
    from tooling.bench.lifecycle import MARKER, Spec, build

    spec = Spec(**size)
    found = cached_marker(library, MARKER)
    if found and found.get("spec") == spec.as_dict():
        return {**found, "built": False}
    skills = library.with_name(f"lifecycle-skills-{spec.skills}")
    shutil.rmtree(library, ignore_errors=True)
    shutil.rmtree(skills, ignore_errors=True)
    info = build(library, skills, spec, progress=note)
    marker = {"spec": spec.as_dict(), **info}
    (library / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    note(f"lifecycle-{spec.skills}: built in {info['stages']['total']:.0f}s")
    return {**marker, "built": True}


def _bench_lifecycle(work: Path, size: dict[str, int]) -> dict[str, Any]:
    """Blast radius, health recompute and the four lifecycle screens on the lifecycle
    library, each in its own process with the library's clock held at its "now". The
    library is only read (no working copy): its lock is held throughout, so a concurrent
    bench neither rebuilds it meanwhile nor measures on the same cores at the same time."""
    library = work / f"lifecycle-{size['skills']}"
    with locked(library):
        marker = _lifecycle_ready(library, size)
        return _measure_lifecycle(library, marker)


def _measure_lifecycle(library: Path, marker: dict[str, Any]) -> dict[str, Any]:
    now = str(marker["now"])
    blast = run_child("child-blast", str(library), now)
    health = run_child("child-health", str(library), now)
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
        screen = run_child("app-screen", mode, str(library), now, timeout=600)
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


def _bench_budget(work: Path, count: int) -> dict[str, Any]:
    """Claude Code's listing of `count` skills (the synthetic library's folder as the
    personal skills folder of a scratch home)."""
    library = big_library(work, count)
    result = run_child("child-budget", str(library), str(work / f"skills-{count}"), str(work))
    routing = run_child("child-budget-routing", str(corpus_dir() / "skills"), str(work))
    return {"skills": count, **result, "routing": routing}


def _bench_overlap(work: Path, count: int) -> dict[str, Any]:
    return {"skills": count, **run_child("child-overlap", str(big_library(work, count)))}


def _bench_prompt_hook(work: Path, count: int) -> dict[str, Any]:
    library = big_library(work, count)
    return {"skills": count, **run_child("child-prompt-hook", str(library), "30")}
