"""SVG snapshots of the review queue and the Sessions screen (pytest-textual-snapshot).

The states are the ones `python -m app.screenshots` draws (`app.screenshots.SHOTS`). As in
`test_snapshots.py`: the demo is rebuilt at a fixed absolute path with a stepping clock and a
fixed reviewer, the app's clock stands still, durations are hidden and the terminal size is
fixed, so every run and machine draws the same pixels.

Update after a deliberate change with `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app import screenshots
from app.factory import make_app
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library

SNAPSHOT_DIR = Path("/tmp/skill-librarian-snapshots")
SIZE = (140, 40)

pytestmark = pytest.mark.model

SnapCompare = Callable[..., bool]


@pytest.fixture(scope="module")
def review_library(_embedder: FastEmbedder) -> Iterator[Path]:
    """The demo at a fixed path, rebuilt once; a lock keeps concurrent runs apart. Each
    snapshot opens it afresh (`library`), so decisions never leak between them."""
    SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
    with (SNAPSHOT_DIR / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        screenshots.open_demo(SNAPSHOT_DIR / "review-demo").close()
        yield SNAPSHOT_DIR / "review-demo"


@pytest.fixture
def library(review_library: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    library = Library(
        review_library, embedder=_embedder, clock=stepping_clock(screenshots.NOW, step_seconds=0)
    )
    try:
        yield library
    finally:
        library.close()


def snap(snap_compare: SnapCompare, library: Library, shot: str) -> bool:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    steps: Any = screenshots.SHOTS[shot]
    return snap_compare(app, terminal_size=SIZE, run_before=steps)


def test_review_queue(snap_compare: SnapCompare, library: Library) -> None:
    """The app opens on the queue: pending nodes, counts, the first node's evidence."""
    assert snap(snap_compare, library, "review.svg")


def test_review_detail(snap_compare: SnapCompare, library: Library) -> None:
    """Dead ends only, two marked, the detail pane (evidence and transcript) focused."""
    assert snap(snap_compare, library, "review-detail.svg")


def test_sessions(snap_compare: SnapCompare, library: Library) -> None:
    """The session list; the newest session's DAG and a node's detail."""
    assert snap(snap_compare, library, "sessions.svg")


def test_session_dag(snap_compare: SnapCompare, library: Library) -> None:
    """The biggest session's DAG, dead end → solution arcs highlighted, a child jump."""
    assert snap(snap_compare, library, "session-dag.svg")
