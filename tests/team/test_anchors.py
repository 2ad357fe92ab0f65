"""The hub anchors each library's chain head: a library whose history lost or rewrote what it
pushed is caught by `librarian team verify`, and its next push refuses to go on."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from store.events import GENESIS_HASH, event_hash
from store.library import Library
from store.team.errors import TeamError
from store.team.push import push
from store.team.status import team_verify
from tests.team.conftest import Hub
from tests.team.helpers import developer

DEAD = "Dead end: raising pool_size to 50 did not stop QueuePool timeouts in the api"
FIX = "Solution: connections idle in transaction held the pool; short transactions fixed it"


def test_a_library_restored_from_an_older_copy_is_caught(
    hub: Hub, team_library: Callable[..., Library], tmp_path: Path
) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD])
    push(alice)
    backup = tmp_path / "backup"
    shutil.copytree(alice.paths.root, backup)
    developer(alice, "b", "/w/api", [FIX], session_day=12)
    push(alice)  # anchors a later head
    assert team_verify(alice).ok
    folder = alice.paths.root
    alice.close()
    shutil.rmtree(folder)
    shutil.copytree(backup, folder)  # the older copy comes back, head file and all
    restored = team_library("alice", "alice")
    report = team_verify(restored)
    assert not report.ok
    (anchors,) = [c for c in report.checks if c["name"] == "anchors"]
    assert "no longer contains what it pushed" in anchors["detail"]
    assert any("the log here ends at" in p for p in anchors["problems"])
    with pytest.raises(TeamError, match="history was lost"):
        push(restored)


def test_a_rewritten_history_is_caught_even_with_its_hashes_recomputed(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD, FIX])
    push(alice)
    path = alice.paths.db
    alice.close()
    # Someone with the file edits an early event and recomputes every hash after it (and the
    # head file): the library agrees with itself; only the hub still knows the old head.
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER events_append_only_update")
        rows = conn.execute(
            "SELECT seq, ts, type, actor, subject, payload FROM events ORDER BY seq"
        ).fetchall()
        prev = GENESIS_HASH
        for seq, ts, type_, actor, subject, payload in rows:
            if seq == 2:
                actor = "mallory"
            digest = event_hash(prev, ts, type_, actor, subject, payload)
            conn.execute(
                "UPDATE events SET actor=?, prev_hash=?, hash=? WHERE seq=?",
                (actor, prev, digest, seq),
            )
            prev = digest
    (path.parent / "head.json").unlink()
    rewritten = team_library("alice", "alice")
    report = team_verify(rewritten)
    assert not report.ok
    (anchors,) = [c for c in report.checks if c["name"] == "anchors"]
    assert any("history here was rewritten" in p for p in anchors["problems"])
    with pytest.raises(TeamError, match="rewritten"):
        push(rewritten)
