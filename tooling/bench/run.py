"""`librarian bench`: the issue budgets, measured. Each phase runs in a child process so
peak memory and cold starts are real. Large synthetic libraries are cached between runs
(`common`); the phases are in `phases` (skills, sessions, review, lifecycle, catalog) and
`agents` (consolidation, the SessionStart hook, the MCP server), the child side in
`children`."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import platformdirs

from store.paths import APP_NAME
from tooling.bench.agents import _bench_consolidate, _bench_mcp, _bench_session_start
from tooling.bench.common import (
    corpus_dir,
    run_child,
)
from tooling.bench.phases import (
    _bench_app,
    _bench_budget,
    _bench_ingest,
    _bench_lifecycle,
    _bench_overlap,
    _bench_prompt_hook,
    _bench_quality,
    _bench_review,
    _bench_routing,
    _bench_scan,
    _bench_secrets,
    _bench_suggest,
    _bench_team,
)

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


def run_bench(
    quick: bool = False,
    only: set[str] | None = None,
    workdir: Path | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Every phase (or `only` some); returns the JSON-ready results with budgets.
    `progress(done, total, phase)` is told before each phase and at the end."""
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
        "lint": lambda: run_child("child-lint", str(corpus_dir() / "skills")),
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
    chosen = [name for name in phases if not only or name in only]
    tell = progress or (lambda done, total, phase: None)
    for done, name in enumerate(chosen):
        tell(done, len(chosen), name)
        started = time.perf_counter()
        results[name] = phase = phases[name]()
        phase["phase_seconds"] = round(time.perf_counter() - started, 1)
        _settle()
    tell(len(chosen), len(chosen), "")
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
