"""Store fixtures: real libraries in tmp dirs, embedding with the hash stand-in unless a
test is marked `model` (then with the one real model every test shares)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.conftest import HashEmbedder, embedder_for

__all__ = ["HashEmbedder"]  # imported from here by older tests


@pytest.fixture(scope="session")
def embedder(_embedder: FastEmbedder) -> FastEmbedder:
    """The real local model, shared with every other test (loaded once per session)."""
    return _embedder


@pytest.fixture
def make_library(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Library]]:
    """Open libraries under tmp_path (closed after the test), embedding with the hash
    stand-in (`embedder_for`): tests marked `model` get the real model."""
    opened: list[Library] = []
    embedder = embedder_for(request)

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


#: SQLite's shared-memory index and write-ahead log: a reader may create them (they hold no
#: data of the library), and a reader in a folder it cannot write opens without them.
SQLITE_SIDE_FILES = ("library.db-shm", "library.db-wal")


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime, and every folder, except SQLite's side files."""
    found: dict[str, tuple[bytes, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.name in SQLITE_SIDE_FILES:
            continue
        data = path.read_bytes() if path.is_file() else b"<dir>"
        found[str(path.relative_to(root))] = (data, path.stat().st_mtime_ns)
    return found


def chmod_binds(folder: Path) -> bool:
    """Whether a read-only mode stops this process (root, or anyone with CAP_DAC_OVERRIDE,
    writes through it)."""
    probe = folder / "chmod-probe"
    probe.write_text("")
    probe.chmod(0o444)
    try:
        probe.open("w").close()
    except PermissionError:
        return True
    finally:
        probe.unlink()
    return False
