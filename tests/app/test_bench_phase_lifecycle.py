"""The `lifecycle` bench phase end to end on a small library: blast radius, health and the
four lifecycle screens, each in its own process, with budgets checked."""

from __future__ import annotations

from pathlib import Path

from tooling.bench.phases import LIFECYCLE_SCREENS, _bench_lifecycle
from tooling.bench.run import BUDGETS, _check


def test_the_lifecycle_phase_reports_every_budget(tmp_path: Path) -> None:
    size = {"skills": 300, "relations": 1200, "outcomes": 6000}
    result = _bench_lifecycle(tmp_path, size)
    assert "errors" not in result, result.get("errors")
    assert result["library"]["skills"] == 300
    assert result["library"]["built"] is True
    assert 0 < result["blast_p50_ms"] <= result["blast_p95_ms"] <= result["blast_max_ms"]
    assert result["blast_cold_first_call_ms"] > 0
    assert result["blast"]["widest"]["dependents"] > 0
    assert result["health_seconds"] > 0
    assert result["health"]["outcomes"] == 6000
    for mode in LIFECYCLE_SCREENS:
        screen = result["screens"][mode]
        if screen.get("missing"):  # not built yet: reported, not measured
            assert mode in result["missing_screens"]
            assert result[f"{mode}_interactive_seconds"] is None
        else:
            assert screen["interactive_seconds"] > 0
            assert screen["events_written"] == 0  # opening a screen records nothing
    verdicts = _check({"lifecycle": result})
    measured = {f"lifecycle.{f}" for (s, f) in BUDGETS if s == "lifecycle"}
    assert {"lifecycle.blast_p95_ms", "lifecycle.health_seconds"} <= set(verdicts) <= measured
