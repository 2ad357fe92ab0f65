"""The demo is the same library whatever the date: built on a fixed clock, nothing in it may
depend on the wall clock (snapshots and screenshots are drawn from it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.model

#: Runs in a fresh interpreter: the wall clock is moved to `WALL` (every way Python reads it:
#: `datetime.now/utcnow/today`, `date.today`, `time.time`) before the project is imported,
#: then the demo is built on its fixed clock and its event log and tables are printed.
BUILD = textwrap.dedent(
    """
    import datetime as _dt, json, sys, time as _time
    from pathlib import Path

    wall = _dt.datetime.fromisoformat(sys.argv[2])
    shift = wall.timestamp() - _time.time()

    RealDateTime = _dt.datetime

    class FakeDateTime(RealDateTime):
        @classmethod
        def now(cls, tz=None):
            real = RealDateTime.now(tz)
            moved = real + _dt.timedelta(seconds=shift)
            return cls.combine(moved.date(), moved.timetz())

        @classmethod
        def utcnow(cls):
            return cls.now(_dt.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls):
            return cls.now()

    class FakeDate(_dt.date):
        @classmethod
        def today(cls):
            return FakeDateTime.now().date()

    real_time, real_time_ns = _time.time, _time.time_ns
    _time.time = lambda: real_time() + shift
    _time.time_ns = lambda: real_time_ns() + int(shift * 1e9)
    _dt.datetime, _dt.date = FakeDateTime, FakeDate

    from store.demo import build_demo
    from store.events import stepping_clock
    from store.library import Library

    target = Path(sys.argv[1])
    stages = []
    build_demo(target, progress=lambda done, total, stage: stages.append([done, total, stage]))
    with Library(target) as library:  # as the app and the CLI open it: the demo's own "now"
        now = library.clock()
        health = library.health_first()[1]
        verdicts = sorted((h.name, h.verdict) for h in library.health()[0])
    with Library(target, clock=stepping_clock("2026-11-03T09:00:00+00:00", 0)) as library:
        conn = library.db.conn
        dump = {
            "events": [list(r) for r in conn.execute(
                "SELECT seq, ts, type, actor, subject, payload, hash FROM events ORDER BY seq")],
            "nodes": [list(r) for r in conn.execute(
                "SELECT node_id, type, status, summary, confidence FROM nodes ORDER BY node_id")],
            "patterns": [list(r) for r in conn.execute(
                "SELECT pattern_id, kind, title, confidence, status FROM patterns"
                " ORDER BY pattern_id")],
            "skills": [(s.name, s.status, s.version_no) for s in library.list_skills()],
            "importance": [library.get_skill(s.name).manifest["importance"]
                           for s in library.list_skills()],
            "health": health,
            "verdicts": verdicts,
            "fixed": library.health_first()[1],
            "now": now,
            "stages": stages,
        }
    print(json.dumps(dump))
    """
)


def _build(target: Path, wall: str, home: Path) -> dict[str, object]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LIBRARIAN_HOME": str(home / "lib")}
    done = subprocess.run(
        [sys.executable, "-P", "-c", BUILD, str(target), wall],
        cwd=REPO,
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def test_demo_is_the_same_on_any_date(tmp_path: Path) -> None:
    """Built at the same path on two wall-clock dates years apart: the same events (hashes
    included), nodes, patterns, statuses, importance and Health counts."""
    target = tmp_path / "home" / "demo"
    first = _build(target, "2026-11-25T10:00:00+00:00", tmp_path / "home")
    assert first["events"], "the demo recorded no events"
    shutil.rmtree(target)
    second = _build(target, "2031-06-01T23:59:00+00:00", tmp_path / "home")
    for key in ("events", "nodes", "patterns", "skills", "importance"):
        assert first[key] == second[key], f"the demo's {key} depend on the wall clock"

    # Opened as the app and the CLI open it, the demo's "now" is its own (the morning after
    # its fixed build clock): its recorded runs stay in the health window whatever the date,
    # and Health counts what the screenshots show.
    assert first["health"] == second["health"]
    assert first["verdicts"] == second["verdicts"]
    assert first["health"] == first["fixed"]
    health = first["health"]
    assert isinstance(health, dict)
    assert health["HEALTHY"] >= 10, health
    assert health["DEGRADING"] >= 1, health
    assert str(first["now"]).startswith("2026-11-03T09:00")
    from store.demo import DEMO_STAGES  # the build told its progress, stage by stage

    total = len(DEMO_STAGES)
    assert first["stages"] == [[i, total, s] for i, s in enumerate(DEMO_STAGES)] + [
        [total, total, ""]
    ]


def test_the_screenshots_and_the_tests_open_the_demo_at_its_own_now() -> None:
    from app.screenshots import NOW
    from store.demo import DEMO_NOW
    from tests.conftest import TEST_NOW

    assert NOW == TEST_NOW == DEMO_NOW
