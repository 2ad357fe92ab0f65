"""What the snapshot modules share: a demo rebuilt at a fixed absolute path (under a lock, so
concurrent runs never rebuild it under each other), a library on it whose clock stands
still, and `snap`, which draws one of `app.screenshots.SHOTS` at a fixed terminal size."""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

SnapCompare = Callable[..., bool]
Snap = Callable[[Library, str], bool]


@contextmanager
def fixed_demo(folder: str) -> Iterator[Path]:
    """The demo rebuilt at SNAPSHOT_DIR/folder, locked for as long as it is in use."""
    SNAPSHOT_DIR.mkdir(parents=True, exist_ok=True)
    with (SNAPSHOT_DIR / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        screenshots.open_demo(SNAPSHOT_DIR / folder).close()
        yield SNAPSHOT_DIR / folder


def still_library(path: Path, embedder: FastEmbedder) -> Library:
    """A library whose clock stands still (ages and importance never move)."""
    return Library(path, embedder=embedder, clock=stepping_clock(screenshots.NOW, step_seconds=0))


@pytest.fixture
def snap(snap_compare: SnapCompare) -> Snap:
    def draw(library: Library, shot: str) -> bool:
        app = make_app(library, watch=False, warm=False, show_timings=False)
        steps: Any = screenshots.SHOTS[shot]
        return snap_compare(app, terminal_size=SIZE, run_before=steps)

    return draw
