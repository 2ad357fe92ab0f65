"""The head file: written after every commit that appended events, only forwards, only along
its own chain, never ahead of the database, whatever the number of writers."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from store import chain_head
from store.db import Database
from store.events import GENESIS_HASH, append, check_chain


def open_db(folder: Path) -> Database:
    return Database(folder / "library.db", head=folder / "head.json")


def add(db: Database, n: int = 1, subject: str = "skill:a") -> None:
    with db.write() as conn:
        for i in range(n):
            append(conn, "skill.validated", subject, {"skill_id": i}, "me")


def recorded(folder: Path) -> chain_head.Head:
    head = chain_head.read(folder / "head.json")
    assert head is not None
    return head


def test_a_new_library_records_its_head_from_the_first_event(tmp_path: Path) -> None:
    db = open_db(tmp_path)
    assert recorded(tmp_path) == chain_head.Head(0, GENESIS_HASH, since=0)
    add(db, 3)
    add(db, 2)
    assert recorded(tmp_path) == chain_head.tip(db.conn)
    assert recorded(tmp_path).events == 5
    assert recorded(tmp_path).since == 0


def test_a_commit_without_events_leaves_the_file_alone(tmp_path: Path) -> None:
    db = open_db(tmp_path)
    add(db)
    before = (tmp_path / "head.json").stat()
    with db.write() as conn:
        conn.execute("INSERT INTO blobs(hash, text) VALUES ('h', 't')")
    after = (tmp_path / "head.json").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_library_made_before_heads_gets_one_on_its_first_open_for_writing(
    tmp_path: Path,
) -> None:
    add(Database(tmp_path / "library.db"), 4)  # no head file, as before heads were kept
    assert not (tmp_path / "head.json").exists()
    reader = Database(tmp_path / "library.db", read_only=True, head=tmp_path / "head.json")
    reader.close()
    assert not (tmp_path / "head.json").exists()  # a reader records nothing
    db = open_db(tmp_path)
    assert recorded(tmp_path).events == 4
    assert recorded(tmp_path).since == 4
    add(db)
    assert (recorded(tmp_path).events, recorded(tmp_path).since) == (5, 4)


def test_the_head_never_moves_back(tmp_path: Path) -> None:
    first, second = open_db(tmp_path), open_db(tmp_path)
    add(first)
    stale = chain_head.tip(first.conn)
    add(second, 2)
    chain_head.HeadFile(tmp_path / "head.json").advance(first.conn, stale)  # a late writer
    assert recorded(tmp_path).events == 3


def test_a_different_chain_is_never_recorded_over(tmp_path: Path) -> None:
    db = open_db(tmp_path)
    add(db, 2)
    mine = recorded(tmp_path)
    db.close()
    (tmp_path / "library.db").unlink()
    other = open_db(tmp_path)  # a new database under the old head
    add(other, 5, subject="skill:other")
    assert recorded(tmp_path) == mine


def test_a_damaged_head_file_is_never_overwritten(tmp_path: Path) -> None:
    db = open_db(tmp_path)
    (tmp_path / "head.json").write_text("{not json")
    add(db)
    assert (tmp_path / "head.json").read_text() == "{not json"
    with pytest.raises(chain_head.HeadFileError):
        chain_head.read(tmp_path / "head.json")


def test_the_file_is_small_json_a_person_can_read(tmp_path: Path) -> None:
    add(open_db(tmp_path))
    data = json.loads((tmp_path / "head.json").read_text())
    assert set(data) == {"events", "hash", "recorded_since"}
    assert not list(tmp_path.glob(".head.json*"))  # no temp file left behind


def _writer(folder: str, rounds: int, name: str) -> None:
    db = open_db(Path(folder))
    for i in range(rounds):
        add(db, 1 + i % 3, subject=f"skill:{name}")
    db.close()


def test_concurrent_writers_keep_the_head_at_the_tip(tmp_path: Path) -> None:
    open_db(tmp_path).close()
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(str(tmp_path), 40, f"w{n}")) for n in range(4)]
    for worker in workers:
        worker.start()
    reader = sqlite3.connect(tmp_path / "library.db")
    while any(w.is_alive() for w in workers):
        head = chain_head.read(tmp_path / "head.json")  # the head first, then the log:
        assert head is not None
        assert chain_head.hash_at(reader, head.events) == head.hash  # never ahead of it
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    assert recorded(tmp_path) == chain_head.tip(reader)
    assert recorded(tmp_path).events == 4 * sum(1 + i % 3 for i in range(40))
    assert check_chain(reader) == []
