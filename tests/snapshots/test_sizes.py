"""Every screen at the three terminal sizes people use: 80×24, 120×36 and 200×50
(pytest-textual-snapshot). Nothing may be cut badly at any of them: the graph fills the
width, the review queue's filter and summary keep room at 80 columns, paths are shortened
by the home and the folder their rows share, wrapped lines hang under their entry.

The states are `app.screenshots.SHOTS`' (the screen as it opens on the demo, whose clock
stands still), drawn over one demo library (none of these shots writes).

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

SIZES = {"80x24": (80, 24), "120x36": (120, 36), "200x50": (200, 50)}
#: One shot per screen (key 1 … 9).
SCREENS = (
    "review",
    "sessions",
    "skills",
    "graph",
    "health",
    "patterns",
    "lineage",
    "runbook",
    "team",
)


@pytest.fixture(scope="module")
def sizes_library(demo_path: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    library = still_library(demo_path, _embedder)
    try:
        yield library
    finally:
        library.close()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", SCREENS)
def test_screen_at_size(snap: Snap, sizes_library: Library, screen: str, size: str) -> None:
    assert snap(sizes_library, f"{screen}.svg", SIZES[size])
