"""SVG snapshots of the Skills screen (pytest-textual-snapshot).

The states are the ones `python -m app.screenshots` draws (`app.screenshots.SHOTS`). To stay
the same on every run and machine: the demo is rebuilt in this run's own home folder with a
stepping clock (paths under the home are shown as `~/…`), the app's clock stands still,
durations are hidden (`show_timings=False`), the model is loaded lazily (`warm=False`) and
the terminal size is fixed.

Update after a deliberate change with `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.library import Library
from tests.snapshots.conftest import Snap, still_library

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def snapshot_library(demo_path: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    """The demo in this run's home, opened once for the module (these shots never write)."""
    library = still_library(demo_path, _embedder)
    try:
        yield library
    finally:
        library.close()


def test_overview(snap: Snap, snapshot_library: Library) -> None:
    """All demo skills; the first one in the detail pane."""
    assert snap(snapshot_library, "skills.svg")


def test_filter_typed(snap: Snap, snapshot_library: Library) -> None:
    """`/migration`, Enter: the filtered list and its count in the status line."""
    assert snap(snapshot_library, "skills-filter.svg")


def test_task_suggestions(snap: Snap, snapshot_library: Library) -> None:
    """A task typed: ranked suggestions, the best one explained in the detail pane."""
    assert snap(snapshot_library, "skills-suggest.svg")


def test_lint_finding_detail(snap: Snap, snapshot_library: Library) -> None:
    """terraform-plan-review selected: its pipe-to-shell finding in the detail pane."""
    assert snap(snapshot_library, "skills-finding.svg")


def test_team_screen_without_a_hub(snap: Snap, snapshot_library: Library) -> None:
    """Key 9 on the demo: team mode off, how to turn it on, and the push queue counted."""
    assert snap(snapshot_library, "team.svg")


def test_budget_panel(snap: Snap, snapshot_library: Library) -> None:
    """`b`: Claude Code's listing of the demo project against the 8,000-character budget."""
    assert snap(snapshot_library, "skills-budget.svg")
