"""SVG snapshots of the Skills screen (pytest-textual-snapshot).

The states are the ones `python -m app.screenshots` draws (`app.screenshots.SHOTS`). To stay
the same on every run and machine: the demo is rebuilt at a fixed absolute path with a
stepping clock, the app's clock stands still, durations are hidden (`show_timings=False`),
the model is loaded lazily (`warm=False`) and the terminal size is fixed.

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
def snapshot_library(_embedder: FastEmbedder) -> Iterator[Library]:
    """The demo at the fixed path; a lock keeps concurrent runs from rebuilding it under us."""
    SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
    with (SNAPSHOT_DIR / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        screenshots.open_demo(SNAPSHOT_DIR / "demo").close()
        library = Library(
            SNAPSHOT_DIR / "demo",
            embedder=_embedder,
            clock=stepping_clock(screenshots.NOW, step_seconds=0),
        )
        try:
            yield library
        finally:
            library.close()


def snap(snap_compare: SnapCompare, library: Library, shot: str) -> bool:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    steps: Any = screenshots.SHOTS[shot]
    return snap_compare(app, terminal_size=SIZE, run_before=steps)


def test_overview(snap_compare: SnapCompare, snapshot_library: Library) -> None:
    """All demo skills; the first one in the detail pane."""
    assert snap(snap_compare, snapshot_library, "skills.svg")


def test_filter_typed(snap_compare: SnapCompare, snapshot_library: Library) -> None:
    """`/migration`, Enter: the filtered list and its count in the status line."""
    assert snap(snap_compare, snapshot_library, "skills-filter.svg")


def test_task_suggestions(snap_compare: SnapCompare, snapshot_library: Library) -> None:
    """A task typed: ranked suggestions, the best one explained in the detail pane."""
    assert snap(snap_compare, snapshot_library, "skills-suggest.svg")


def test_lint_finding_detail(snap_compare: SnapCompare, snapshot_library: Library) -> None:
    """terraform-plan-review selected: its pipe-to-shell finding in the detail pane."""
    assert snap(snap_compare, snapshot_library, "skills-finding.svg")
