"""The retrieval log with a window: identical calls are one `retrieval.logged` event plus a
rolled-up count, and every figure graduation and decay read (retrieval counts, last retrieved,
the retrieval rate, the decay reset) is what one event per call would have given; replay stays
exact, and old libraries migrate to the new columns."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from store import events
from store.embed import FastEmbedder
from store.events import iter_events, stepping_clock
from store.library import Library
from store.migrations import MIGRATIONS, _statements
from store.patterns import retrieval_log
from store.verify import verify
from tests.conftest import TEST_NOW

QUERY = "connection pool exhausted at checkout"
OTHER = "alembic upgrade fails: multiple heads"


@pytest.fixture
def open_copy(
    demo_library_dir: Path, tmp_path: Path, _embedder: FastEmbedder
) -> Iterator[Callable[..., Library]]:
    """Open a private copy of the demo library (which has patterns and approved nodes)."""
    opened: list[Library] = []

    def factory(name: str, clock: Callable[[], str] | None = None) -> Library:
        target = tmp_path / name
        shutil.copytree(demo_library_dir, target, ignore=shutil.ignore_patterns("models"))
        library = Library(target, embedder=_embedder, clock=clock or stepping_clock(TEST_NOW, 0))
        opened.append(library)
        return library

    yield factory
    for library in opened:
        library.close()


def workload(library: Library) -> None:
    for _ in range(40):
        library.search_memory(QUERY)
    for _ in range(15):
        library.diagnose(OTHER)
    for _ in range(10):
        library.search_memory(QUERY)
    for _ in range(5):
        library.pitfalls()
        library.profile()
        library.suggest_logged("roll back a kubernetes deployment", tool="mcp.suggest")


def figures(library: Library) -> dict[str, Any]:
    """Everything graduation, decay and the screens read from the retrieval log."""
    with library.db.read() as conn:
        nodes = conn.execute(
            "SELECT node_id, retrieval_count, last_retrieved_at FROM nodes ORDER BY node_id"
        ).fetchall()
        patterns = conn.execute(
            "SELECT pattern_id, retrieval_count, last_retrieved_at, confidence, status"
            " FROM patterns ORDER BY pattern_id"
        ).fetchall()
        calls = conn.execute(
            "SELECT tool, query, sum(calls) FROM retrievals GROUP BY tool, query ORDER BY 1, 2"
        ).fetchall()
    rates = {
        c.pattern.pattern_id: [(x.name, x.value, x.met) for x in c.criteria]
        for c in library.graduation(include_all=True)
    }
    return {"nodes": nodes, "patterns": patterns, "calls": calls, "graduation": rates}


def event_types(library: Library, after: int) -> list[str]:
    with library.db.read() as conn:
        return [e.type for e in iter_events(conn, after)]


def test_a_window_gives_the_same_counts_with_far_fewer_events(
    open_copy: Callable[..., Library],
) -> None:
    every = open_copy("every-call")
    rolled = open_copy("rolled-up")
    rolled.retrieval_log.window = 600
    start = every.last_seq()
    assert rolled.last_seq() == start

    workload(every)
    workload(rolled)
    assert rolled.retrieval_log.pending() == (40 + 10 - 1) + (15 - 1) + 3 * (5 - 1)
    rolled.retrieval_log.flush()
    assert rolled.retrieval_log.pending() == 0

    assert len(event_types(every, start)) == 40 + 15 + 10 + 3 * 5
    assert event_types(rolled, start) == ["retrieval.logged"] * 5 + ["retrieval.repeated"]
    rolled_up = figures(rolled)
    assert rolled_up == figures(every)
    assert any(row[1] for row in rolled_up["patterns"])  # patterns were retrieved and counted
    newest = {r.query: r for r in reversed(rolled.retrievals(10))}
    assert newest[QUERY].calls == 50
    assert newest[OTHER].calls == 15
    report = verify(rolled)
    assert report.ok, report.as_dict()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime.fromisoformat(TEST_NOW)

    def __call__(self) -> str:
        return self.now.isoformat(timespec="microseconds")

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def at(seconds: float) -> str:
    moment = datetime.fromisoformat(TEST_NOW) + timedelta(seconds=seconds)
    return moment.isoformat(timespec="microseconds")


def test_windows_close_after_their_time_and_on_flush(
    open_copy: Callable[..., Library],
) -> None:
    clock = Clock()
    library = open_copy("windows", clock)
    log = library.retrieval_log
    log.window = 600
    start = library.last_seq()

    first = log.record("search", "q", [("pattern", "p1", 1, 0.5)])
    clock.advance(100)
    assert log.record("search", "q", [("pattern", "p1", 1, 0.5)]) == first
    assert log.record("search", "q", [("pattern", "p2", 1, 0.5)]) != first  # other hits
    clock.advance(550)  # 650 s after the first call: its window closes on the next call
    third = log.record("search", "q", [("pattern", "p1", 1, 0.5)])
    assert third > first
    assert event_types(library, start) == [
        "retrieval.logged",
        "retrieval.logged",
        "retrieval.repeated",
        "retrieval.logged",
    ]
    assert log.record("search", "q", [("pattern", "p1", 1, 0.5)]) == third
    assert log.flush(expired_only=True) == 0  # its window is still open
    clock.advance(600)
    assert log.flush(expired_only=True) == 1
    with library.db.read() as conn:
        rows = conn.execute(
            "SELECT seq, calls, last_at FROM retrievals WHERE seq > ? ORDER BY seq", (start,)
        ).fetchall()
        repeated = [e.payload for e in iter_events(conn, start) if e.type == "retrieval.repeated"]
    assert [tuple(r) for r in rows] == [
        (first, 2, at(100)),
        (first + 1, 1, ""),
        (third, 2, at(650)),
    ]
    assert repeated[0] == {"repeats": [[first, 1, rows[0][2]]]}


def test_open_windows_are_bounded(
    open_copy: Callable[..., Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retrieval_log, "MAX_OPEN", 3)
    library = open_copy("bounded")
    log = library.retrieval_log
    log.window = 600
    start = library.last_seq()
    for query in ("a", "b", "c"):
        log.record("search", query, [])
        log.record("search", query, [])
    log.record("search", "d", [])  # the oldest window ("a") closes
    assert log.pending() == 2
    assert event_types(library, start)[-2:] == ["retrieval.repeated", "retrieval.logged"]
    library.close()  # closing writes the rest
    with sqlite3.connect(library.paths.db) as conn:
        calls = dict(conn.execute("SELECT query, calls FROM retrievals WHERE seq > ?", (start,)))
    assert calls == {"a": 2, "b": 2, "c": 2, "d": 1}


def test_a_rolled_up_repeat_resets_decay(open_copy: Callable[..., Library]) -> None:
    """A repeat still in memory when decay runs revives the pattern once it is written."""
    clock = Clock()
    library = open_copy("decay", clock)
    library.retrieval_log.window = 600
    hits = library.search_memory(QUERY)
    pattern_id = next(
        h.item_id
        for h in hits
        if h.kind == "pattern" and library.pattern(h.item_id).status == "active"
    )
    base = library.pattern(pattern_id).base_confidence
    clock.advance(60)
    repeat_at = clock()
    assert library.search_memory(QUERY) == hits  # a repeat: counted in memory only
    with library.db.write() as conn:
        library.append_event(
            conn,
            "pattern.decayed",
            "patterns",
            {"updates": [{"pattern_id": pattern_id, "confidence": 0.1, "status": "decayed"}]},
        )
    assert library.pattern(pattern_id).status == "decayed"
    library.retrieval_log.flush()
    revived = library.pattern(pattern_id)
    assert (revived.status, revived.confidence) == ("active", base)
    assert revived.last_retrieved_at == repeat_at
    assert verify(library).ok


def test_a_library_from_before_the_window_migrates_and_replays(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    conn = sqlite3.connect(root / "library.db", isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:6], start=1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("BEGIN IMMEDIATE")
    payload = events.retrieval_payload("search", "old query", [("pattern", "p1", 1, 0.5)])
    events.append(conn, "retrieval.logged", "retrieval:search", payload, "someone")
    conn.execute("COMMIT")
    conn.close()

    with Library(root) as library:
        (found,) = library.retrievals()
        assert (found.query, found.calls, found.last_at) == ("old query", 1, "")
        report = verify(library)
        replay = next(c for c in report.checks if c.name == "replay")
        assert replay.ok, replay.problems
