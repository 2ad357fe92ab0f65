"""A library opened read-only (`mode=ro`) reads everything and writes nothing: no migration,
no config, no folders, no vector index files, no head; every change is refused."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db import Database, LibraryDatabaseError, ReadOnlyError
from store.library import Library, LibraryError
from store.paths import LibraryPaths
from store.verify import verify
from tests.store.conftest import chmod_binds, snapshot, write_skill


@pytest.fixture
def library_dir(make_library, tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "alpha", "Deploy services to Kubernetes clusters safely.")
    write_skill(root, "beta", "Write release notes from a changelog.")
    library = make_library()
    library.scan([root])
    library.close()
    return library.paths.root


@pytest.fixture
def reader(library_dir: Path, embedder) -> Iterator[Library]:
    library = Library(library_dir, embedder=embedder, read_only=True)
    yield library
    library.close()


def test_reading_changes_no_file(library_dir: Path, embedder) -> None:
    shutil.rmtree(library_dir / "vectors")  # a reader rebuilds the index in memory only
    before = snapshot(library_dir)
    with Library(library_dir, embedder=embedder, read_only=True) as library:
        assert [s.name for s in library.list_skills()] == ["alpha", "beta"]
        assert library.get_skill("beta").summary.name == "beta"
        assert library.suggest("release notes")[0].name == "beta"
        assert library.health()[0]
        assert not [c.name for c in verify(library).checks if not c.ok and c.name != "vectors"]
    assert snapshot(library_dir) == before


def test_the_database_is_opened_with_mode_ro(reader: Library) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.db.conn.execute("INSERT INTO blobs(hash, text) VALUES ('x', 'y')")


def test_every_change_is_refused_with_a_message(reader: Library, tmp_path: Path) -> None:
    with pytest.raises(ReadOnlyError, match="read-only"):
        reader.record_outcome("beta", True)
    write_skill(tmp_path / "skills", "gamma", "Rotate database passwords stored in Vault.")
    with pytest.raises(ReadOnlyError, match="read-only"):
        reader.scan([tmp_path / "skills"], embed=False)
    with pytest.raises(ReadOnlyError, match="read-only"):
        reader.change_status("beta", "skill.deprecated", "old")
    assert reader.get_skill("beta").summary.status == "stable"


def test_a_missing_library_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    root = tmp_path / "nowhere" / "lib"
    with Library(root, read_only=True) as library:
        assert library.list_skills() == []
        assert verify(library).ok
    assert not (tmp_path / "nowhere").exists()


def test_an_outdated_schema_is_not_migrated_by_a_reader(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "library.db")
    conn.execute("CREATE TABLE events(seq INTEGER PRIMARY KEY)")
    conn.execute("PRAGMA user_version=1")
    conn.close()
    before = (tmp_path / "library.db").read_bytes()
    with pytest.raises(LibraryDatabaseError, match="schema version 1"):
        Database(tmp_path / "library.db", read_only=True)
    assert (tmp_path / "library.db").read_bytes() == before


def test_a_library_this_user_cannot_write(library_dir: Path, embedder, tmp_path: Path) -> None:
    if not chmod_binds(tmp_path):
        pytest.skip("this user writes through chmod (root)")
    files = [p for p in library_dir.rglob("*") if p.is_file()]
    folders = [library_dir, *(p for p in library_dir.rglob("*") if p.is_dir())]
    for path in files:
        path.chmod(0o444)
    for path in folders:
        path.chmod(0o555)
    try:
        assert not LibraryPaths(library_dir).writable()
        with Library(library_dir, embedder=embedder, read_only=True) as library:
            assert [s.name for s in library.list_skills()] == ["alpha", "beta"]
            assert verify(library).ok
        with pytest.raises(LibraryError, match="read-only"):
            Library(library_dir, embedder=embedder)
    finally:
        for path in folders:
            path.chmod(0o755)
        for path in files:
            path.chmod(0o644)
