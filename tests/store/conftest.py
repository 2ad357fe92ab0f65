"""Store fixtures: real libraries in tmp dirs sharing one real embedding model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
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
