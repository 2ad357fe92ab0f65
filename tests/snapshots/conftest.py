"""What the snapshot modules share: a home folder of this run's own (`snapshot_home`) with
the demo built in it, a library on it whose clock stands still, and `snap`, which draws one
of `app.screenshots.SHOTS` at a fixed terminal size with `HOME` pointing at that folder (the
app shows paths under the home as `~/…`, so every run and machine draws the same text)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app import screenshots
from app.factory import make_app
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library

SIZE = (140, 40)

SnapCompare = Callable[..., bool]
Snap = Callable[..., bool]


@pytest.fixture(scope="session")
def snapshot_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's own home folder for the snapshot demos (nothing shared between runs)."""
    return tmp_path_factory.mktemp("snapshots") / "home"


@pytest.fixture(scope="session")
def demo_path(snapshot_home: Path) -> Path:
    """The demo built once for the run, for the modules whose shots never write."""
    return build_demo_in(snapshot_home, "demo")


def build_demo_in(home: Path, folder: str) -> Path:
    """The demo built afresh at `home/folder`, as the screenshots command builds it."""
    screenshots.open_demo(home / folder).close()
    return home / folder


def still_library(path: Path, embedder: FastEmbedder) -> Library:
    """A library whose clock stands still (ages and importance never move)."""
    return Library(path, embedder=embedder, clock=stepping_clock(screenshots.NOW, step_seconds=0))


@pytest.fixture
def snap(snap_compare: SnapCompare, snapshot_home: Path, monkeypatch: pytest.MonkeyPatch) -> Snap:
    monkeypatch.setenv("HOME", str(snapshot_home))

    def draw(library: Library, shot: str, size: tuple[int, int] = SIZE) -> bool:
        app = make_app(library, watch=False, warm=False, show_timings=False)
        steps: Any = screenshots.SHOTS[shot]
        return snap_compare(app, terminal_size=size, run_before=steps)

    return draw
