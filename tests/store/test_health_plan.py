"""Health in SQL (window counts and weekly trends, with and without the covering index), the
plan `apply` follows, and a skill's recent outcomes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from store.errors import LibrarianError
from store.library import Library
from store.lifecycle import health
from store.verify import verify
from tests.store.conftest import write_skill

NOW = datetime.fromisoformat("2026-11-03T09:00:00+00:00")


def at(days: float) -> Callable[[], str]:
    moment = (NOW - timedelta(days=days)).isoformat(timespec="microseconds")
    return lambda: moment


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    for name in ("deploy", "fresh", "quiet"):
        write_skill(root, name, f"The {name} skill.", body="Run `scripts/missing.sh`.\n")
    library.scan([root])
    library.change_status("fresh", "skill.proposed", "a new version")
    for days, ok in ((1, False), (3, False), (8, True), (15, False), (15.5, True), (40, False)):
        library.clock = at(days)
        library.record_outcome("deploy", ok, detail=f"{days} days ago")
    for days in range(5):
        library.clock = at(days + 0.5)
        library.record_outcome("fresh", True)
    library.clock = at(0)
    return library


def test_window_counts_and_weekly_trend(lib: Library) -> None:
    rows, _ = lib.health()
    deploy = next(h for h in rows if h.name == "deploy")
    assert (deploy.runs, deploy.failures) == (5, 3)  # the run 40 days ago is outside
    assert deploy.trend == (-1.0, -1.0, 1.0, -1.0, -1.0, 0.5, 0.0, 1.0)
    assert deploy.last_run.startswith("2026-11-02")
    assert [(v.version_no, v.runs, v.failures) for v in deploy.versions] == [(1, 5, 3)]
    assert "missing file: scripts/missing.sh" in deploy.flags
    quiet = next(h for h in rows if h.name == "quiet")
    assert (quiet.verdict, quiet.trend, quiet.last_run) == ("IDLE", (-1.0,) * 8, "")


def test_the_covering_index_gives_the_same_answer(lib: Library) -> None:
    with lib.db.read() as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT skill_id, count(*) FROM outcomes"
            f" INDEXED BY {health.COVERING_INDEX} GROUP BY skill_id, version_no"
        ).fetchall()
    assert "COVERING INDEX" in str([tuple(row) for row in plan])  # schema v6 has it
    before, _ = lib.health()
    first = lib.health_first()
    with lib.db.write() as conn:
        conn.execute(f"DROP INDEX {health.COVERING_INDEX}")
    after, _ = lib.health()
    assert after == before
    assert lib.health_first() == first


def test_the_first_look_agrees_with_the_whole(lib: Library) -> None:
    whole, _ = lib.health(trend=False)
    worst, totals = lib.health_first(limit=2)
    assert sum(totals.values()) == len(whole)
    retired = totals.pop("retired")
    assert retired == sum(1 for h in whole if h.status == "retired")
    for verdict, count in totals.items():  # a retired skill counts under no verdict
        assert count == sum(1 for h in whole if h.verdict == verdict and h.status != "retired")
    assert [(h.name, h.verdict, h.runs, h.failures, h.versions) for h in worst] == [
        (h.name, h.verdict, h.runs, h.failures, h.versions) for h in whole[:2]
    ]


def test_verdicts_first_without_trends_or_file_checks(lib: Library) -> None:
    quick, _ = lib.health(trend=False)
    whole, _ = lib.health()
    assert [(h.name, h.verdict, h.runs) for h in quick] == [
        (h.name, h.verdict, h.runs) for h in whole
    ]
    assert all(h.trend == () for h in quick)
    assert not any(f.startswith("missing file") for h in quick for f in h.flags)


def test_the_plan_is_what_apply_does(lib: Library) -> None:
    plan = lib.health_plan()
    assert [(c.name, c.event_type, c.status, c.target) for c in plan] == [
        ("deploy", "skill.deprecated", "stable", "deprecated"),
        ("fresh", "skill.promoted", "proposed", "stable"),
    ]
    assert lib.get_skill("deploy").summary.status == "stable"  # planning changes nothing
    _, changes = lib.health(apply=True)
    assert changes == [c.describe() for c in plan]
    assert lib.get_skill("deploy").summary.status == "deprecated"
    assert lib.get_skill("fresh").summary.status == "stable"
    assert lib.health_plan() == []
    assert verify(lib).ok


def test_recent_outcomes_newest_first(lib: Library) -> None:
    runs = lib.outcomes("deploy", limit=3)
    assert [r.detail for r in runs] == ["1 days ago", "3 days ago", "8 days ago"]
    assert [r.success for r in runs] == [False, False, True]
    assert all(r.version_no == 1 for r in runs)
    assert len(lib.outcomes("deploy")) == 6
    assert lib.outcomes("quiet") == []
    with pytest.raises(LibrarianError, match="no skill named 'ghost'"):
        lib.outcomes("ghost")


def test_settings_come_from_the_config(lib: Library) -> None:
    lib.config.set("health.fail", "0.6")
    assert lib.health_settings()["fail"] == 0.6
    assert lib.health_plan()[0].name == "fresh"  # 60% is no longer drifting
