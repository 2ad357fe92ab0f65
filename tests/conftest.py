"""Shared fixtures: an isolated home for every test, and the demo library built once.

- Every test runs with `HOME`, the XDG folders and `LIBRARIAN_HOME` under its `tmp_path`, so
  the default skill roots and platform folders never touch the real home.
- `demo_library_dir` (session, read-only): the demo library, built once per session with a
  stepping clock, so the embedding model is loaded and the demo skills embedded only once.
- `demo_library` (function): an open `Library` on a private, pristine copy, closed after.
- `corpus_dir`: the real third-party corpus (`LIBRARIAN_CORPUS`); skips when it is absent.

The demo library stores absolute paths (its configured skill root and every SKILL.md path),
so a copy only works at the path it was built at. `demo_library` therefore restores the
pristine copy *in place* (about 1 MB: the model is shared) before and after each test,
instead of copying it into `tmp_path`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tooling.demo.build import build_demo

REPO = Path(__file__).resolve().parents[1]
#: "Now" for libraries opened by tests: a day after the demo was built, standing still, so
#: importance (which decays with idle days) and new events are the same on every run.
TEST_NOW = "2026-11-03T09:00:00+00:00"


def isolate_home(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Point every per-user location at `home`."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LIBRARIAN_HOME", str(home / "library"))
    for var, sub in (
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


@pytest.fixture(autouse=True)
def _isolated_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_home(monkeypatch, tmp_path / "home")


@pytest.fixture(scope="session")
def _demo_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(library folder, pristine copy of it); built once per session."""
    base = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_home(monkeypatch, base / "home")
        build_demo(base / "demo", clock=stepping_clock())
    # Tests share one model (`_embedder`), so the copies leave the library's own out.
    shutil.copytree(base / "demo", base / "pristine", ignore=shutil.ignore_patterns("models"))
    return base / "demo", base / "pristine"


@pytest.fixture(scope="session")
def demo_library_dir(_demo_build: tuple[Path, Path]) -> Path:
    """The demo library folder. Read-only: open it, never change it (use `demo_library`)."""
    return _demo_build[0]


@pytest.fixture(scope="session")
def _embedder(_demo_build: tuple[Path, Path]) -> FastEmbedder:
    """One embedding model for every test library; loaded on first use."""
    return FastEmbedder(_demo_build[0].parent / "models")


@pytest.fixture
def demo_library(_demo_build: tuple[Path, Path], _embedder: FastEmbedder) -> Iterator[Library]:
    """An open `Library` on a pristine copy of the demo, free to change; closed after."""
    folder, pristine = _demo_build
    _restore(pristine, folder)
    library = Library(folder, embedder=_embedder, clock=stepping_clock(TEST_NOW, 0))
    try:
        yield library
    finally:
        library.close()
        _restore(pristine, folder)


def _restore(pristine: Path, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(pristine, folder)


@pytest.fixture
def corpus_dir() -> Path:
    """The third-party corpus (`LIBRARIAN_CORPUS`, default `../shared/corpus`)."""
    path = Path(os.environ.get("LIBRARIAN_CORPUS", REPO.parent / "shared" / "corpus"))
    if not path.is_dir():
        pytest.skip(f"no corpus at {path}")
    return path
