"""Store fixtures: real libraries in tmp dirs sharing one real embedding model."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from store.embed import FastEmbedder, Matrix, normalise
from store.events import stepping_clock
from store.library import Library


@pytest.fixture(scope="session")
def embedder(_embedder: FastEmbedder) -> FastEmbedder:
    """The real local model, shared with every other test (loaded once per session)."""
    return _embedder


@pytest.fixture
def make_library(tmp_path: Path, embedder: FastEmbedder) -> Iterator[Callable[..., Library]]:
    """Open libraries under tmp_path (closed after the test)."""
    opened: list[Library] = []

    def factory(name: str = "lib") -> Library:
        library = Library(tmp_path / name, embedder=embedder, clock=stepping_clock())
        opened.append(library)
        return library

    yield factory
    for library in opened:
        library.close()


def write_skill(
    root: Path,
    folder: str,
    description: str,
    *,
    name: str | None = None,
    body: str = "Steps.\n",
    extra: str = "",
) -> Path:
    """A minimal, spec-clean SKILL.md (plus `extra` frontmatter lines)."""
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name or folder}\ndescription: {description}\nlicense: MIT\n{extra}---\n\n"
        f"{body}",
        encoding="utf-8",
    )
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
