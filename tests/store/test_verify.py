"""`verify` catches every kind of damage; `rebuild` repairs what is derived."""

from __future__ import annotations

from pathlib import Path

from store.library import Library
from store.verify import rebuild, verify
from tests.store.conftest import write_skill


def scanned(make_library, tmp_path: Path) -> Library:
    root = tmp_path / "skills"
    write_skill(
        root,
        "alpha",
        "Deploy services to Kubernetes clusters safely.",
        extra="metadata:\n  requires: beta\n",
    )
    write_skill(root, "beta", "Write release notes from a changelog.")
    library = make_library()
    library.scan([root])
    return library


def failing(library: Library) -> dict[str, list[str]]:
    return {c.name: c.problems for c in verify(library).checks if not c.ok}


def test_fresh_library_verifies(make_library, tmp_path: Path) -> None:
    assert failing(scanned(make_library, tmp_path)) == {}
    assert failing(make_library("empty")) == {}


def test_projection_drift_is_caught_and_rebuilt(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.db.conn.execute("UPDATE skills SET name='mallory' WHERE name='alpha'")
    library.db.conn.execute("DELETE FROM relations")
    problems = failing(library)
    assert set(problems) == {"replay"}
    assert any("skills:" in p for p in problems["replay"])
    assert any("relations:" in p for p in problems["replay"])
    rebuild(library)
    assert failing(library) == {}
    assert library.get_skill("alpha").relations[0].target == "beta"


def test_broken_hash_chain_is_caught(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.db.conn.execute("DROP TRIGGER events_append_only_update")
    library.db.conn.execute("UPDATE events SET actor='mallory' WHERE seq=1")
    assert "hash_chain" in failing(library)


def test_damaged_blob_is_caught(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.db.conn.execute("UPDATE blobs SET text = text || 'x'")
    assert "blobs" in failing(library)


def test_missing_or_corrupt_vector_index_is_caught_and_rebuilt(
    make_library, tmp_path: Path
) -> None:
    library = scanned(make_library, tmp_path)
    path = library.index.bin_path
    library.close()
    path.write_bytes(b"\x00garbage" * 10)
    reopened = Library(library.paths.root, embedder=library.embedder)
    problems = failing(reopened)
    assert "vectors" in problems
    rebuild(reopened)
    assert failing(reopened) == {}
    for name in (path, reopened.index.meta_path, reopened.index.entries_path):
        name.unlink()
    fresh = Library(library.paths.root, embedder=library.embedder)
    assert "vectors" in failing(fresh)
    assert fresh.suggest("release notes")[0].name == "beta"  # opening rebuilds it
    assert failing(fresh) == {}
    reopened.close()
    fresh.close()


def test_stale_index_is_updated_in_place(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    write_skill(tmp_path / "skills", "gamma", "Rotate database passwords stored in Vault.")
    library.scan([tmp_path / "skills"])
    assert failing(library) == {}
    assert library.suggest("rotate the vault password")[0].name == "gamma"
