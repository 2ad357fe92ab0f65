"""A library that lives at its own date (`clock.start`, the demo's): its "now" starts there,
or just after its newest event, and moves on in real time."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from store.events import now_iso, running_clock, stepping_clock
from store.library import Library, LibraryError


def test_a_running_clock_starts_at_its_moment_and_moves_on() -> None:
    tick = running_clock("2026-11-03T09:00:00+00:00")
    first, second = tick(), tick()
    assert first.startswith("2026-11-03T09:00:0")
    assert second >= first


def test_without_clock_start_a_library_reads_the_real_time(tmp_path: Path) -> None:
    with Library(tmp_path / "lib") as library:
        assert library.clock is now_iso


def test_clock_start_sets_the_library_now(tmp_path: Path) -> None:
    with Library(tmp_path / "lib") as library:
        library.config.set("clock.start", json.dumps("2026-11-03T09:00:00+00:00"))
    with Library(tmp_path / "lib") as library:
        assert library.clock().startswith("2026-11-03T09:00")


def test_clock_start_never_goes_back_before_the_newest_event(tmp_path: Path) -> None:
    with Library(tmp_path / "lib", clock=stepping_clock("2026-11-05T10:00:00+00:00")) as library:
        library.config.set("clock.start", json.dumps("2026-11-03T09:00:00+00:00"))
        library.log_retrieval("suggest", "a task", [])
        with library.db.read() as conn:
            newest = conn.execute("SELECT max(ts) FROM events").fetchone()[0]
    assert newest.startswith("2026-11-05")
    with Library(tmp_path / "lib") as library:
        assert datetime.fromisoformat(library.clock()) > datetime.fromisoformat(newest)


def test_a_bad_clock_start_is_a_clear_error(tmp_path: Path) -> None:
    with Library(tmp_path / "lib") as library:
        library.config.set("clock.start", json.dumps("next tuesday"))
    with pytest.raises(LibraryError, match=r"clock\.start"):
        Library(tmp_path / "lib")
