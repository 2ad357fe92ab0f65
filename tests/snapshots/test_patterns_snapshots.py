"""SVG snapshots of the Patterns screen and of the review queue switched to the drafts
(pytest-textual-snapshot).

The states are the ones `python -m app.screenshots` draws (`app.screenshots.SHOTS`): the demo
is rebuilt at a fixed absolute path with a stepping clock and a fixed reviewer, the app's
clock stands still, durations are hidden and the terminal size is fixed.

Update after a deliberate change with `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.library import Library
from tests.snapshots.conftest import Snap, fixed_demo, still_library

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def patterns_library(_embedder: FastEmbedder) -> Iterator[Path]:
    """Its own copy of the demo: each snapshot opens it afresh (`library`)."""
    with fixed_demo("patterns-demo") as path:
        yield path


@pytest.fixture
def library(patterns_library: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    library = still_library(patterns_library, _embedder)
    try:
        yield library
    finally:
        library.close()


def test_patterns(snap: Snap, library: Library) -> None:
    """Patterns by kind; the first one's checklist and pending draft, its member nodes."""
    assert snap(library, "patterns.svg")


def test_review_drafts(snap: Snap, library: Library) -> None:
    """The review queue switched to the drafts: the SKILL.md with its criteria and citations."""
    assert snap(library, "review-draft.svg")
