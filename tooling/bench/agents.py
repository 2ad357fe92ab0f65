"""`librarian bench` phases for what agents use: consolidation of a big patterns library,
the SessionStart hook and the MCP server (parent side; cached libraries built here)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from store.models.events import EventType
from store.process import own_librarian
from tooling.bench.children import LOG_CALLS, server_log
from tooling.bench.common import (
    GENERATOR_VERSION,
    big_library,
    cached_marker,
    fresh_copy,
    locked,
    note,
    run_child,
    run_dir,
)

# -- patterns: consolidation, the SessionStart hook, the MCP server --------------------------

PATTERNS_VERSION = "2"
#: Pending nodes left in a patterns library, approved before the incremental consolidation.
INCREMENTAL_EXTRA = 500
_PATTERNS_MARKER = ".bench-patterns"
_CONSOLIDATED_MARKER = ".bench-consolidated"
#: Sources whose changes make a cached consolidated library stale.
_CONSOLIDATION_CODE = ("consolidate.py", "cluster.py", "classify.py", "bar.py", "decay.py")


def _extra_for(nodes: int) -> int:
    """Pending nodes kept back for the incremental run: under consolidation's incremental cap
    (10% of the clustered nodes), so the run really is incremental."""
    return min(INCREMENTAL_EXTRA, nodes // 20)


def skills_for(nodes: int) -> int:
    """Skills installed in the patterns library of `nodes` nodes (10,000 with the big one)."""
    return 10_000 if nodes >= 100_000 else 1000


def patterns_library(work: Path, nodes: int) -> Path:
    """A cached library of `nodes` approved reasoning nodes (about five a session, a few
    projects, recurring problems: see `tooling.synthetic.data.reasoning_sessions`) plus
    `_extra_for(nodes)` pending ones, written through real events (`session.ingested`,
    `node.extracted`, then `node.approved` from `Library.review`), every node text embedded
    in advance, on top of a copy of the cached `skills_for(nodes)`-skill library. Rebuilt when
    missing, made by another generator or older than the current schema."""
    library = work / f"patterns-{nodes}"
    extra, skills = _extra_for(nodes), skills_for(nodes)
    spec = {"generator": PATTERNS_VERSION, "nodes": nodes, "skills": skills, "extra": extra}
    with locked(library):
        found = cached_marker(library, _PATTERNS_MARKER)
        if not (found and found.get("spec") == spec):
            _build_patterns(library, nodes, extra, skills, spec, work)
    return library


def _build_patterns(
    library: Path, nodes: int, extra: int, skills: int, spec: dict[str, Any], work: Path
) -> None:
    from store.ingest.pipeline import node_text
    from store.library import Library
    from store.skills.surface import text_hash
    from tooling.synthetic.data import reasoning_sessions

    started = time.perf_counter()
    fresh_copy(big_library(work, skills), library)
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
            note(f"patterns-{nodes}: embedded {min(start + 4096, len(pending))}/{len(pending)}")
    token = hashlib.sha256(f"{spec}{time.time_ns()}".encode()).hexdigest()[:16]
    (library / _PATTERNS_MARKER).write_text(json.dumps({"spec": spec, "token": token}) + "\n")
    note(f"patterns-{nodes}: built in {time.perf_counter() - started:.0f}s")


def _write_sessions(library: Any, sessions: list[dict[str, Any]]) -> None:
    """Sessions and their nodes as the ingest pipeline records them, in one transaction."""
    from store.projections import store_blob

    with library.db.write() as conn:
        for session in sessions:
            digest = store_blob(conn, json.dumps(session["messages"]))
            sid = session["session_id"]
            library.append_event(
                conn,
                EventType.SESSION_INGESTED,
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
                    conn, EventType.NODE_EXTRACTED, f"node:{node['node_id']}", {"node": node}
                )


def _code_digest() -> str:
    digest = hashlib.sha256()
    for name in _CONSOLIDATION_CODE:
        path = Path(__file__).parents[2] / "store" / "patterns" / name
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


def _consolidated_key(source: Path) -> dict[str, Any]:
    found = cached_marker(source, _PATTERNS_MARKER) or {}
    return {"source": found.get("token"), "code": _code_digest()}


def consolidated_library(work: Path, nodes: int) -> Path:
    """The patterns library after one full consolidation (cached while its source library and
    the consolidation code are unchanged): what the agent-facing phases query."""
    source = patterns_library(work, nodes)
    target = work / f"patterns-{nodes}-consolidated"
    with locked(target):
        if cached_marker(target, _CONSOLIDATED_MARKER) == _consolidated_key(source):
            return target
        run = run_dir(work, f"consolidate-{nodes}")
        with locked(source):
            fresh_copy(source, run)
        try:
            result = run_child("child-consolidate", str(run), "full", timeout=7200)
            if "error" in result:
                raise RuntimeError(f"consolidating {run} failed: {result['error']}")
            _keep_consolidated(run, target, source)
        finally:
            shutil.rmtree(run, ignore_errors=True)
    return target


def _keep_consolidated(run: Path, target: Path, source: Path) -> None:
    fresh_copy(run, target)
    (target / _CONSOLIDATED_MARKER).write_text(json.dumps(_consolidated_key(source)) + "\n")


def _bench_consolidate(work: Path, sizes: list[int]) -> dict[str, Any]:
    """Per size: a first full consolidation (every pattern new), a full re-cluster of the same
    nodes, then an incremental run after approving the held-back pending nodes; each in its
    own child process on a copy of the cached library (embeddings cached: not measured)."""
    result: dict[str, Any] = {}
    for nodes in sizes:
        source = patterns_library(work, nodes)
        run = run_dir(work, f"consolidate-{nodes}")
        with locked(source):
            fresh_copy(source, run)
        try:
            first = run_child("child-consolidate", str(run), "full", timeout=7200)
            target = work / f"patterns-{nodes}-consolidated"
            with locked(target):
                kept = cached_marker(target, _CONSOLIDATED_MARKER)
                if "error" not in first and kept != _consolidated_key(source):
                    _keep_consolidated(run, target, source)
            again = run_child("child-consolidate", str(run), "full", timeout=7200)
            incremental = run_child("child-consolidate", str(run), "approve", timeout=7200)
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
    from tooling.synthetic.data import synthetic_session

    source = consolidated_library(work, nodes)
    run = run_dir(work, "session-start")  # the hook logs retrievals: work on a copy
    with locked(source):
        fresh_copy(source, run)
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
    source = consolidated_library(work, nodes)
    run = run_dir(work, "mcp")  # every memory call logs a retrieval: work on a copy
    with locked(source):
        fresh_copy(source, run)
    try:
        result = run_child("child-mcp", str(run), str(calls), timeout=1800)
        growth = run_child("child-mcp-log", str(run), str(LOG_CALLS), timeout=3600)
    finally:
        shutil.rmtree(run, ignore_errors=True)
        server_log(run).unlink(missing_ok=True)
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
