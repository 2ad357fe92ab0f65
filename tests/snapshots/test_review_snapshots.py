"""SVG snapshots of the review queue (nodes, suppressed nodes and drafts), the Sessions,
Patterns, Graph, Health, Lineage and Runbook screens (pytest-textual-snapshot).

The states are the ones `python -m app.screenshots` draws (`app.screenshots.SHOTS`). As in
`test_snapshots.py`: the demo is rebuilt in this run's own home folder with a stepping clock
and a fixed reviewer, the app's clock stands still, durations are hidden and the terminal
size is fixed, so every run and machine draws the same pixels.

Update after a deliberate change with `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.library import Library
from tests.snapshots.conftest import Snap, build_demo_in, still_library

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def review_library(snapshot_home: Path) -> Path:
    """Its own copy of the demo: each snapshot opens it afresh (`library`)."""
    return build_demo_in(snapshot_home, "review-demo")


@pytest.fixture
def library(review_library: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    library = still_library(review_library, _embedder)
    try:
        yield library
    finally:
        library.close()


def test_review_queue(snap: Snap, library: Library) -> None:
    """The app opens on the queue: pending nodes, counts, the first node's evidence."""
    assert snap(library, "review.svg")


def test_review_detail(snap: Snap, library: Library) -> None:
    """Dead ends only, two marked, the detail pane (evidence and transcript) focused."""
    assert snap(library, "review-detail.svg")


def test_review_suppressed(snap: Snap, library: Library) -> None:
    """The nodes kept out of the queue (reason, informativeness), grouped by session."""
    assert snap(library, "review-suppressed.svg")


def test_sessions(snap: Snap, library: Library) -> None:
    """The session list; the newest session's DAG and a node's detail."""
    assert snap(library, "sessions.svg")


def test_session_dag(snap: Snap, library: Library) -> None:
    """The biggest session's DAG, dead end → solution arcs highlighted, a child jump."""
    assert snap(library, "session-dag.svg")


def test_patterns(snap: Snap, library: Library) -> None:
    """Patterns by kind; the first one's checklist and pending draft, its member nodes."""
    assert snap(library, "patterns.svg")


def test_review_drafts(snap: Snap, library: Library) -> None:
    """The review queue switched to the drafts: the SKILL.md with its criteria and citations."""
    assert snap(library, "review-draft.svg")


def test_graph(snap: Snap, library: Library) -> None:
    """The drifting rollout: its dependencies, its dependents counted as the blast radius."""
    assert snap(library, "graph.svg")


def test_health(snap: Snap, library: Library) -> None:
    """Skills worst first with sparklines and flags; the worst one's versions."""
    assert snap(library, "health.svg")


def test_lineage(snap: Snap, library: Library) -> None:
    """The graduated skill: versions, status history, sessions → nodes → pattern → draft."""
    assert snap(library, "lineage.svg")


def test_runbook(snap: Snap, library: Library) -> None:
    """The finished retirement run: seven recorded steps and the incident."""
    assert snap(library, "runbook.svg")


def test_review_enrichment(snap: Snap, library: Library) -> None:
    """A thin skill's proposed frontmatter in the review queue: why, the fields, the diff."""
    assert snap(library, "review-enrichment.svg")


def test_health_candidate(snap: Snap, library: Library) -> None:
    """A candidate set aside: the served version judged, the candidate's fate and alert."""
    assert snap(library, "health-candidate.svg")
