"""Shared fixtures: an isolated home for every test, and the demo library built once.

- Every test runs with `HOME`, the XDG folders and `LIBRARIAN_HOME` under its `tmp_path`, so
  the default skill roots and platform folders never touch the real home.
- `demo_library_dir` (session, read-only): the demo library, built once per session with a
  stepping clock, so the embedding model is loaded and the demo skills embedded only once.
- `demo_library` (function): an open `Library` on a private, pristine copy, closed after.
- `corpus_dir`: the real third-party corpus (`LIBRARIAN_CORPUS`); skips when it is absent.
- `library` (function): a fresh, empty `Library` under `tmp_path` that embeds with
  `HashEmbedder`, a deterministic stand-in, so a test that does not test embeddings never
  loads the ONNX model; tests marked `model` get the real one (`embedder_for`). Corpus and
  end-to-end tests (the demo, the CLI in a child process) keep the real model.

The demo library stores absolute paths (its configured skill root and every SKILL.md path),
so a copy only works at the path it was built at. `demo_library` therefore restores the
pristine copy *in place* (about 1 MB: the model is shared) before and after each test,
instead of copying it into `tmp_path`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from store.embed import Embedder, FastEmbedder, Matrix, normalise
from store.events import stepping_clock
from store.library import Library
from tooling.demo.build import build_demo

REPO = Path(__file__).resolve().parents[1]
#: "Now" for libraries opened by tests: a day after the demo was built, standing still, so
#: importance (which decays with idle days) and new events are the same on every run.
TEST_NOW = "2026-11-03T09:00:00+00:00"


#: Fixtures that load the real embedding model: a test using one is marked `model`.
MODEL_FIXTURES = frozenset({"_embedder", "embedder", "_demo_build", "demo_library_dir"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that loads the real model `model` (`-m "not model"`: the fast ones)."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)


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


class HashEmbedder:
    """A deterministic stand-in for the model (vectors from each text's SHA-256), for tests
    that need embeddings without loading it: in a child process, or many times over. Set the
    library's `embedding.model` to `model_name` so that the CLI looks for its vectors."""

    model_name = "test/hash-embedder"
    dim = 32

    def __init__(self) -> None:
        self.calls = 0

    def load(self) -> None:
        pass

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8)[: self.dim]
            for t in texts
        ]
        return normalise(np.vstack(rows).astype(np.float32) - 127.5)


def embedder_for(request: pytest.FixtureRequest) -> Embedder:
    """The real model (shared) for a test marked `model`, else a fresh `HashEmbedder`."""
    if request.node.get_closest_marker("model") is not None:
        embedder: Embedder = request.getfixturevalue("_embedder")
        return embedder
    return HashEmbedder()


@pytest.fixture
def library(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Library]:
    """A fresh, empty library under tmp_path with the hash embedder (the real model when the
    test is marked `model`) and a stepping clock; closed after the test."""
    with Library(
        tmp_path / "library", embedder=embedder_for(request), clock=stepping_clock()
    ) as opened:
        yield opened
