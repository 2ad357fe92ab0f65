"""`librarian bench` measurements, child side: each runs in its own process
(`librarian bench-child NAME ARGS…`) and returns one JSON object (`CHILDREN`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.process import own_librarian
from tooling.bench.catalog import CHILDREN as CATALOG_CHILDREN
from tooling.bench.common import (
    own_peak_rss_mb,
    percentile,
    ru_maxrss_mb,
    task_contexts,
)
from tooling.bench.team import CHILDREN as TEAM_CHILDREN

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
        "peak_rss_mb": own_peak_rss_mb(),
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
        for context in task_contexts(200):
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
        "peak_rss_mb": own_peak_rss_mb(),
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
    cpu = []
    candidates = 0
    for _ in range(5):
        started, started_cpu = time.perf_counter(), time.process_time()
        parsed = parse_session(path)
        if isinstance(parsed, ParseFailure):
            raise RuntimeError(f"bench session did not parse: {parsed.reason}")
        candidates = len(extract_warm(parsed).nodes)
        runs.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
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
        "warm_cpu_mb_per_second": round(size_mb / min(cpu), 1),
        "nodes_per_mb": round(candidates / size_mb),
        "first_ingest_seconds_with_embeddings": round(full, 2),
        "nodes_added": first.nodes_added,
        "nodes_merged": first.nodes_merged,
        "reingest_unchanged_ms": round(statistics.median(again), 1),
        "reingest_unchanged_writes": unchanged_writes,
    }


def child_ingest_real(*folders: str) -> dict[str, Any]:
    """The warm tier's CPU speed on real sessions: every transcript under `folders` (the
    corpus, and a tune set when one is named) parsed and extracted; the first pass meets
    every file with the caches of the files before it only, the best of three after."""
    from store.ingest.transcript import parse_session
    from store.ingest.warm import extract_warm
    from store.models import ParseFailure

    files = sorted({f for folder in folders for f in Path(folder).rglob("*.jsonl")})
    size_mb = sum(f.stat().st_size for f in files) / (1 << 20)
    passes = []
    candidates = 0
    for _ in range(4):
        started, candidates = time.process_time(), 0
        for file in files:
            parsed = parse_session(file)
            if not isinstance(parsed, ParseFailure):
                candidates += len(extract_warm(parsed).nodes)
        passes.append(time.process_time() - started)
    return {
        "files": len(files),
        "mb": round(size_mb, 2),
        "first_pass_cpu_mb_per_second": round(size_mb / passes[0], 1),
        "cpu_mb_per_second": round(size_mb / min(passes[1:]), 1),
        "nodes_per_mb": round(candidates / size_mb) if size_mb else 0,
    }


def child_secrets(session_file: str, transcripts: str) -> dict[str, Any]:
    from tooling.evaluation import redaction as ev

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
    from store.library import Library
    from tooling.evaluation.routing import evaluate, load_queries

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
        "peak_rss_mb": own_peak_rss_mb(),
        "ru_maxrss_mb": ru_maxrss_mb(),
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


def server_log(library: Path) -> Path:
    return library.with_name(f"{library.name}.server.log")


def child_mcp(library_dir: str, calls: str) -> dict[str, Any]:
    log = server_log(Path(library_dir))  # the server's stderr, not measured
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

    from tooling.synthetic.data import PROJECTS, problem_queries

    server = StdioServerParameters(
        command=own_librarian()[0],
        args=[*own_librarian()[1:], "--library", library_dir, "mcp"],
        env=dict(os.environ),
    )
    memory_queries = problem_queries(calls * 3 + 3)
    skill_queries = task_contexts(calls + 1)
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
            "p95_ms": percentile(values, 0.95) if values else None,
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
        "p95_ms": percentile(every, 0.95) if every else None,
        "max_ms": round(max(every), 2) if every else None,
        "tools": per_tool,
        "peak_rss_mb_client": own_peak_rss_mb(),
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


def child_quality_tune(workdir: str, transcripts: str) -> dict[str, Any]:
    from store.quality.corpus import run_unlabelled

    return {"folder": transcripts, **run_unlabelled(Path(transcripts), workdir=Path(workdir))}


#: Read calls per retrieval-log growth scenario (`mcp_log_growth`).
LOG_CALLS = 1000


def child_mcp_log(library_dir: str, calls: str) -> dict[str, Any]:
    """What `calls` memory searches through `librarian mcp` add to the library: identical
    calls and varied ones with the default retrieval window, and identical calls with no
    window (one event per call, as before the window). Each scenario is one server session;
    the roll-up is written when the server stops, so it is counted."""
    from store.config import Config
    from tooling.synthetic.data import problem_queries

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
    log = server_log(library)
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
        command=own_librarian()[0],
        args=[*own_librarian()[1:], "--library", library_dir, "mcp"],
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
    from tooling.bench.lifecycle import measure_blast

    return {**measure_blast(Path(library_dir), now), "peak_rss_mb": own_peak_rss_mb()}


def child_health(library_dir: str, now: str) -> dict[str, Any]:
    from tooling.bench.lifecycle import measure_health

    return {**measure_health(Path(library_dir), now), "peak_rss_mb": own_peak_rss_mb()}


#: Every measurement a bench child runs, by name (`librarian bench-child NAME ARGS…`).
CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "child-scan": child_scan,
    "child-suggest": child_suggest,
    "child-index": child_index,
    "child-routing": child_routing,
    "child-ingest": child_ingest,
    "child-ingest-real": child_ingest_real,
    "child-consolidate": child_consolidate,
    "child-mcp": child_mcp,
    "child-mcp-log": child_mcp_log,
    "child-blast": child_blast,
    "child-health": child_health,
    "child-quality": child_quality,
    "child-quality-tune": child_quality_tune,
    "child-secrets": child_secrets,
    **CATALOG_CHILDREN,
    **TEAM_CHILDREN,
}
