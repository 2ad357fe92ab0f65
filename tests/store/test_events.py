import sqlite3

import pytest

from store.db import Database
from store.events import GENESIS_HASH, append, check_chain, iter_events, stepping_clock


def test_events_chain_and_replay_in_order(tmp_path) -> None:
    db = Database(tmp_path / "x.db")
    clock = stepping_clock()
    with db.write() as conn:
        first = append(
            conn,
            "relation.added",
            "skill:a",
            {"source_id": 1, "type": "requires", "target_name": "b"},
            "me",
            clock(),
        )
        second = append(
            conn,
            "relation.removed",
            "skill:a",
            {"source_id": 1, "type": "requires", "target_name": "b"},
            "me",
            clock(),
        )
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash
    assert [e.seq for e in iter_events(db.conn)] == [1, 2]
    assert check_chain(db.conn) == []


def test_events_are_append_only(tmp_path) -> None:
    db = Database(tmp_path / "x.db")
    with db.write() as conn:
        append(conn, "skill.validated", "skill:a", {"skill_id": 1}, "me")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.conn.execute("UPDATE events SET actor='mallory'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.conn.execute("DELETE FROM events")


def test_tampering_breaks_the_chain(tmp_path) -> None:
    db = Database(tmp_path / "x.db")
    with db.write() as conn:
        for i in range(3):
            append(conn, "skill.validated", f"skill:{i}", {"skill_id": i}, "me")
    db.conn.execute("DROP TRIGGER events_append_only_update")
    db.conn.execute("UPDATE events SET payload='{\"skill_id\": 9}' WHERE seq=2")
    problems = check_chain(db.conn)
    assert any("event 2" in p and "hash does not match" in p for p in problems)


def test_failed_transaction_leaves_nothing(tmp_path) -> None:
    db = Database(tmp_path / "x.db")

    def append_then_fail() -> None:
        with db.write() as conn:
            append(conn, "skill.validated", "skill:a", {"skill_id": 1}, "me")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        append_then_fail()
    assert db.conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_migrations_run_once_in_order(tmp_path) -> None:
    from store.migrations import MIGRATIONS

    db = Database(tmp_path / "x.db")
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    db.close()
    again = Database(tmp_path / "x.db")  # reopening migrates nothing and loses nothing
    assert again.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    indexes = {
        r[0] for r in again.conn.execute("SELECT name FROM sqlite_master WHERE type='index'")
    }
    assert "skills_order" in indexes


def test_the_append_hash_equals_the_checked_hash() -> None:
    """`append` hashes its canonical payload without parsing it again; `check_chain`
    recomputes from the stored text: both must agree, whatever the text holds."""
    from store.events import _hash_canonical, canonical_json, event_hash

    payload = {"b": [1, {"z": "é\u202e\x1b", "a": None}], "a": 'line\nbreak "quoted"'}
    text = canonical_json(payload)
    for actor in ("Dana <d@x>", "ünï\u200b", ""):
        assert _hash_canonical(
            "0" * 64, "2026-11-03T09:00:00+00:00", "node.x", actor, "s:1", text
        ) == (event_hash("0" * 64, "2026-11-03T09:00:00+00:00", "node.x", actor, "s:1", text))


def test_append_many_writes_what_append_one_by_one_writes(tmp_path) -> None:
    """The bulk path (one read of the tail, one INSERT, projections after) leaves the same
    rows, hashes and projections as `append` event by event."""
    from store.events import append_many

    entries = [
        ("relation.added", "skill:a", {"source_id": 1, "type": "requires", "target_name": "b"}),
        ("relation.added", "skill:a", {"source_id": 1, "type": "extends", "target_name": "c"}),
        ("relation.removed", "skill:a", {"source_id": 1, "type": "requires", "target_name": "b"}),
        (
            "relation.added",
            "skill:é",
            {"source_id": 2, "type": "requires", "target_name": "\u202e"},
        ),
    ]
    one, many = Database(tmp_path / "one.db"), Database(tmp_path / "many.db")
    first, second = stepping_clock(), stepping_clock()
    with one.write() as conn:
        append(
            conn,
            "relation.added",
            "skill:z",
            {"source_id": 9, "type": "x", "target_name": "y"},
            "me",
            first(),
        )
        for type_, subject, payload in entries:
            append(conn, type_, subject, payload, "me", first())
    with many.write() as conn:
        append(
            conn,
            "relation.added",
            "skill:z",
            {"source_id": 9, "type": "x", "target_name": "y"},
            "me",
            second(),
        )
        made = append_many(conn, entries, "me", second)
    assert [e.seq for e in made] == [2, 3, 4, 5]
    rows = "SELECT seq, ts, type, actor, subject, payload, prev_hash, hash FROM events ORDER BY seq"
    assert one.conn.execute(rows).fetchall() == many.conn.execute(rows).fetchall()
    relations = "SELECT * FROM relations ORDER BY 1, 2, 3"
    assert one.conn.execute(relations).fetchall() == many.conn.execute(relations).fetchall()
    assert check_chain(many.conn) == []
