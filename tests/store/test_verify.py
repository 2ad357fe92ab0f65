"""`verify` catches every kind of damage; `rebuild` repairs what is derived."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from store import chain_head
from store.errors import LibrarianError
from store.events import GENESIS_HASH, append, canonical_json, event_hash
from store.library import Library
from store.verify import Check, VerifyReport, rebuild, unopened, verify
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


# -- the head file: a database replaced, emptied, truncated or rewritten as a whole ---------


def head_check(report: VerifyReport) -> Check:
    return next(c for c in report.checks if c.name == "head")


def reopened(library: Library, *, read_only: bool = True) -> Library:
    """The library as a later `librarian verify` sees it (read-only, a fresh process)."""
    library.close()
    return Library(library.paths.root, embedder=library.embedder, read_only=read_only)


def rewrite_history(db: Path, *, edit_seq: int = 1) -> None:
    """What someone with the file and this code can do: drop the guards, edit a payload,
    recompute every hash after it, put the guards back."""
    conn = sqlite3.connect(db, isolation_level=None)
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type='trigger' AND tbl_name='events'"
    ).fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    rows = conn.execute(
        "SELECT seq, ts, type, actor, subject, payload FROM events ORDER BY seq"
    ).fetchall()
    prev = GENESIS_HASH
    for seq, ts, type_, actor, subject, payload in rows:
        if seq == edit_seq:
            payload = canonical_json({**json.loads(payload), "reason": "nothing to see"})
        digest = event_hash(prev, ts, type_, actor, subject, payload)
        conn.execute(
            "UPDATE events SET payload=?, prev_hash=?, hash=? WHERE seq=?",
            (payload, prev, digest, seq),
        )
        prev = digest
    for _, sql in triggers:
        conn.execute(sql)
    conn.close()


def drop_last_events(db: Path, count: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DROP TRIGGER events_append_only_delete")
    conn.execute("DELETE FROM events WHERE seq > (SELECT max(seq) FROM events) - ?", (count,))
    conn.close()


@pytest.mark.model  # the index is checked against the configured model's vectors
def test_a_deleted_database_fails_next_to_its_head_and_index(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.close()
    library.paths.db.unlink()
    report = verify(reopened(library))
    problems = {c.name: c for c in report.checks if not c.ok}
    assert set(problems) == {"head", "vectors"}
    assert "the head file records 2 events, the log has 0" in problems["head"].problems
    assert "the index holds" in problems["vectors"].problems[0]
    assert not library.paths.db.exists()  # verify created nothing


def test_an_emptied_database_fails(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.close()
    library.paths.db.write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{library.paths.db}{suffix}").unlink(missing_ok=True)
    assert "head" in failing(reopened(library))


def test_rewritten_history_fails_even_after_rebuild(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.close()
    rewrite_history(library.paths.db)
    writer = reopened(library, read_only=False)
    rebuild(writer)  # projections now agree with the forged log
    writer.record_outcome("beta", True)  # and later writes never launder it
    problems = failing(writer)
    assert set(problems) == {"head"}
    assert problems["head"][0].startswith("event 2 should have hash")
    assert "history was rewritten" in head_check(verify(writer)).detail
    writer.close()


def test_dropping_the_last_events_fails_even_after_rebuild(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    library.record_outcome("beta", True)
    library.close()
    drop_last_events(library.paths.db, 1)
    writer = reopened(library, read_only=False)
    rebuild(writer)
    problems = failing(writer)
    assert set(problems) == {"head"}
    assert problems["head"] == ["the head file records 3 events, the log has 2"]
    writer.close()


def test_a_head_left_behind_by_events_that_chain_from_it_passes(
    make_library, tmp_path: Path
) -> None:
    library = scanned(make_library, tmp_path)
    # Another writer's commit that did not get to record the head (it died, or it is a
    # process that appends without the library, like the SessionStart hook).
    append(library.db.conn, "skill.validated", "skill:beta", {"skill_id": 2}, "hook")
    report = verify(library)
    assert report.ok
    head = head_check(report)
    assert "goes on 1 events past the recorded head" in head.detail
    assert report.head is not None
    assert report.recorded is not None
    assert (report.head.events, report.recorded.events) == (3, 2)
    library.record_outcome("beta", True)  # the next commit catches the head up
    assert chain_head.read(library.paths.head) == chain_head.tip(library.db.conn)


def test_a_library_made_before_heads_passes_and_says_since_when(
    make_library, tmp_path: Path
) -> None:
    library = scanned(make_library, tmp_path)
    library.close()
    library.paths.head.unlink()
    reader = reopened(library)
    report = verify(reader)
    assert report.ok
    assert "no head recorded yet" in head_check(report).detail
    writer = reopened(reader, read_only=False)  # the first open for writing records it
    assert chain_head.read(library.paths.head) == chain_head.Head(2, report.head.hash, since=2)
    later = verify(writer)
    assert later.ok
    assert "head first recorded at event 2" in head_check(later).detail
    writer.close()


def test_the_report_carries_the_head_for_comparison(make_library, tmp_path: Path) -> None:
    library = scanned(make_library, tmp_path)
    data = verify(library).as_dict()
    tip = chain_head.tip(library.db.conn)
    assert data["head"] == {"events": 2, "hash": tip.hash}
    assert data["recorded_head"] == {"events": 2, "hash": tip.hash, "recorded_since": 0}


@pytest.mark.parametrize("damage", ["truncated", "random bytes", "torn page"])
def test_a_damaged_database_is_a_failure_with_its_reason(
    make_library, tmp_path: Path, damage: str
) -> None:
    library = scanned(make_library, tmp_path)
    library.close()
    db = library.paths.db
    data = db.read_bytes()
    if damage == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif damage == "random bytes":
        db.write_bytes(random.Random(7).randbytes(len(data)))
    else:  # a page in the middle overwritten: the file still opens
        db.write_bytes(data[:8192] + b"\xff" * 4096 + data[12288:])
    try:
        report = verify(reopened(library))
    except LibrarianError as exc:  # what `librarian verify` does when it cannot open it
        report = unopened(library.paths.head, str(exc))
    assert not report.ok
    failed = [c for c in report.checks if not c.ok]
    assert all(c.detail for c in failed)
    assert any(
        "malformed" in c.detail + " ".join(c.problems) or "not a database" in c.detail
        for c in failed
    )
