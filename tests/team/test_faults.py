"""Faults: a wrong password, an unreachable hub, a newer hub schema and a malformed staged
item each give one clear line and change nothing here; a hub killed in the middle of a push
or a pull leaves no partial batch, and the next run resumes."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from store.library import Library
from store.team import hub as hub_api
from store.team import server
from store.team.errors import HubSchemaError, HubUnavailable, TeamError
from store.team.pull import pull
from store.team.push import push
from store.team.review import TeamQueue
from store.team.status import team_status, team_verify
from store.verify import verify
from tests.store.conftest import snapshot
from tests.team.conftest import Hub
from tests.team.helpers import developer

DEAD = "Dead end: raising pool_size to 50 did not stop QueuePool timeouts in the api"
FIX = "Solution: connections idle in transaction held the pool; short transactions fixed it"


def unchanged(library: Library, action: Callable[[], object], error: type[Exception]) -> str:
    """Run `action`, which must fail with `error`; the library's files stay as they were."""
    before = snapshot(library.paths.root)
    with pytest.raises(error) as caught:
        action()
    assert snapshot(library.paths.root) == before
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_wrong_password_changes_nothing(
    hub: Hub, team_library: Callable[..., Library], tmp_path: Path
) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD])
    wrong = tmp_path / "wrong-pgpass"
    server.add_password(wrong, server.HOST, hub.server.port, "*", "alice", "not-her-password")
    url = hub.url("alice").replace(str(hub.server.passfile), str(wrong))
    alice.config.set("team.hub", json.dumps(url))
    for action in (lambda: push(alice), lambda: pull(alice)):
        message = unchanged(alice, action, HubUnavailable)
        assert "refused the password for alice" in message
        assert "not-her-password" not in message
    assert "refused the password" in team_status(alice).problem


def test_an_unreachable_hub_changes_nothing(team_library: Callable[..., Library]) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD])
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    alice.config.set("team.hub", json.dumps(f"postgresql://alice@127.0.0.1:{port}/librarian"))
    message = unchanged(alice, lambda: push(alice), HubUnavailable)
    assert f"127.0.0.1:{port}" in message
    assert "unreachable" in message
    status = team_status(alice)
    assert not status.reachable
    assert status.queued == 1  # the push queue is still there, for when the hub is back


def test_a_password_in_the_config_is_refused(team_library: Callable[..., Library]) -> None:
    alice = team_library("alice", "alice")
    alice.config.set("team.hub", json.dumps("postgresql://alice:s3cret@127.0.0.1:5/librarian"))
    message = unchanged(alice, lambda: push(alice), TeamError)
    assert "holds a password" in message
    assert "s3cret" not in message


def test_a_newer_hub_schema_changes_nothing(hub: Hub, team_library: Callable[..., Library]) -> None:
    alice = team_library("alice", "alice")
    developer(alice, "a", "/w/api", [DEAD])
    push(alice)
    alice.review("edit", ["n_a0"], summary="Dead end: pool_size 50 did not help")
    with hub.admin() as admin:
        admin.execute("UPDATE librarian.meta SET value='7' WHERE key IN ('schema', 'min_client')")
        with pytest.raises(HubSchemaError, match="newer than this librarian"):
            hub_api.init(admin)
    for action in (lambda: push(alice), lambda: pull(alice)):
        message = unchanged(alice, action, HubSchemaError)
        assert "the hub has schema 7" in message
    queue = TeamQueue(hub.url("rita"))
    try:
        with pytest.raises(HubSchemaError):
            queue.review("approve", ["n_a0"])
    finally:
        queue.close()


def test_a_malformed_staged_item_is_skipped_with_one_line(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice, bob = team_library("alice", "alice"), team_library("bob", "bob")
    (good,) = developer(alice, "a", "/w/api", [FIX], scope="TEAM")
    push(alice)
    queue = TeamQueue(hub.url("rita"))
    try:
        queue.nodes(status="pending")
        queue.review("approve", [good])
    finally:
        queue.close()
    # A hub owner (or a broken client) wrote an item no librarian would stage.
    bad_item = {
        "developer": "mallory",
        "project": "/w/api",
        "scope": "TEAM",
        "type": "DEAD_END",
        "summary": "looks fine",
        "rank": 0.5,
        "evidence": {"not": "text"},
        "session_id": "s",
        "file": "f",
        "line_start": 1,
        "line_end": 2,
        "confidence": 7,
        "tier": "warm",
        "informativeness": 0.1,
    }
    with hub.admin() as admin:
        body = {"kind": "node", "status": "staged", "item": bad_item}
        admin.execute(
            "SELECT librarian._record('f' || repeat('0', 31) || ':1', 'n_bad', repeat('f', 32),"
            " 'stage', NULL, true, NULL, %s::jsonb)",
            (json.dumps(body),),
        )
        admin.execute(
            "SELECT librarian._record(NULL, 'n_bad', NULL, 'approve', NULL, true, NULL,"
            ' \'{"status": "approved"}\')'
        )
    report = pull(bob)
    assert report.events == 1
    (line,) = report.skipped
    assert "n_bad" in line
    assert "malformed" in line
    assert "nothing of it was stored" in line
    assert bob.node(good).status == "approved"
    assert all(n.node_id != "n_bad" for n in bob.nodes())
    assert verify(bob).ok
    assert team_verify(bob).ok


# -- a hub killed in the middle ----------------------------------------------------------------


@pytest.fixture
def own_hub() -> Iterator[Hub]:
    """A hub server of this test's own, to kill."""
    folder = Path(tempfile.mkdtemp(prefix="librarian-kill-hub-"))
    local = server.start(folder, durable=False)
    try:
        with psycopg.connect(local.url(), autocommit=True) as conn:
            hub_api.init(conn)
            for name, reviewer in (("alice", False), ("bob", False), ("rita", True)):
                password = hub_api.add_member(conn, name, reviewer=reviewer)
                server.add_password(local.passfile, server.HOST, local.port, "*", name, password)
        yield Hub(local, server.DATABASE)
    finally:
        server.stop(folder, immediate=True)
        shutil.rmtree(folder, ignore_errors=True)


def library_on(hub: Hub, make: Callable[..., Library], name: str) -> Library:
    library = make(name, name)
    library.config.set("team.hub", json.dumps(hub.url(name)))
    return library


def hub_events(hub: Hub) -> int:
    with hub.admin() as admin:
        row = admin.execute("SELECT count(*) FROM librarian.events").fetchone()
    return int(row[0]) if row else 0


def many(library: Library, count: int) -> list[str]:
    summaries = [f"Dead end: retry {i} of npx tsc still fails with TS2307" for i in range(count)]
    return developer(library, "k", "/w/api", summaries, scope="TEAM")


def test_a_hub_killed_between_batches_keeps_whole_batches_and_the_push_resumes(
    own_hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = library_on(own_hub, team_library, "alice")
    many(alice, 1200)

    def kill_after_first(done: int, total: int) -> None:
        if done == 500:
            server.stop(own_hub.server.folder, immediate=True)

    with pytest.raises(HubUnavailable, match=r"went away|unreachable"):
        push(alice, batch=500, progress=kill_after_first)
    server.start(own_hub.server.folder, durable=False)
    assert hub_events(own_hub) == 500  # the first batch, whole; nothing of the second
    report = push(alice, batch=500)
    assert (report.ops, report.applied, report.duplicates) == (700, 700, 0)
    assert hub_events(own_hub) == 1200
    assert verify(alice).ok
    assert team_verify(alice).ok


def test_a_batch_the_hub_committed_but_this_library_did_not_record_is_not_sent_twice(
    own_hub: Hub, team_library: Callable[..., Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = library_on(own_hub, team_library, "alice")
    many(alice, 700)
    real = alice.append_event

    def die_after_the_hub_commits(conn: Any, type_: str, subject: str, payload: Any) -> Any:
        if type_ == "team.pushed":
            raise KeyboardInterrupt  # the process dies before it records the batch
        return real(conn, type_, subject, payload)

    monkeypatch.setattr(alice, "append_event", die_after_the_hub_commits)
    with pytest.raises(KeyboardInterrupt):
        push(alice, batch=500)
    monkeypatch.setattr(alice, "append_event", real)
    assert hub_events(own_hub) == 500
    report = push(alice, batch=500)
    assert (report.applied, report.duplicates) == (200, 500)
    assert hub_events(own_hub) == 700
    assert verify(alice).ok


def test_a_hub_killed_inside_a_batch_keeps_nothing_of_it(
    own_hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = library_on(own_hub, team_library, "alice")
    ids = many(alice, 600)
    push(alice, batch=600)
    for node_id in ids:  # 600 revisions in the next push, in one batch
        alice.review("scope", [node_id], scope="PROJECT")
    blocker = psycopg.connect(own_hub.server.url(database=own_hub.database))
    blocker.execute("SELECT 1 FROM librarian.items WHERE item_id=%s FOR UPDATE", (ids[300],))
    failure: list[BaseException] = []

    def pushing() -> None:
        try:
            push(alice, batch=600)
        except BaseException as exc:
            failure.append(exc)

    worker = threading.Thread(target=pushing)
    worker.start()
    with own_hub.admin() as admin:  # wait until the batch is inside its transaction, blocked
        for _ in range(200):
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename='alice'"
                " AND wait_event_type='Lock'"
            ).fetchone()
            if row and row[0]:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the push never reached the locked item")
    server.stop(own_hub.server.folder, immediate=True)
    worker.join(30)
    blocker.close()
    assert failure
    assert isinstance(failure[0], TeamError)
    server.start(own_hub.server.folder, durable=False)
    assert hub_events(own_hub) == 600  # the staging batch; the interrupted one left nothing
    report = push(alice, batch=600)
    assert report.applied == 600
    assert hub_events(own_hub) == 1200
    assert verify(alice).ok
    assert team_verify(alice).ok


def test_a_hub_killed_in_the_middle_of_a_pull_keeps_whole_pages_and_resumes(
    own_hub: Hub, team_library: Callable[..., Library]
) -> None:
    alice = library_on(own_hub, team_library, "alice")
    bob = library_on(own_hub, team_library, "bob")
    ids = many(alice, 1200)
    push(alice)
    queue = TeamQueue(own_hub.url("rita"))
    try:
        queue.nodes(status="pending", limit=5000)
        queue.review("approve", ids)
    finally:
        queue.close()

    def kill_after_first(done: int, total: int) -> None:
        server.stop(own_hub.server.folder, immediate=True)

    with pytest.raises(HubUnavailable):
        pull(bob, page=500, progress=kill_after_first)
    # Whole pages only (the page fetched ahead while the first was stored may have arrived).
    stored = bob.node_count(status="approved")
    assert stored in (500, 1000)
    assert verify(bob).ok
    server.start(own_hub.server.folder, durable=False)
    report = pull(bob, page=500)
    assert report.events == 1200 - stored
    assert bob.node_count(status="approved") == 1200
    with bob.db.read() as conn:
        received = conn.execute("SELECT count(*) FROM events WHERE type='team.received'")
        assert received.fetchone()[0] == 1200  # nothing twice
    assert verify(bob).ok
    assert team_verify(bob).ok


def test_a_hub_at_schema_1_is_upgraded_and_pulls_the_same(
    hub_server: server.LocalHub,
    team_library: Callable[..., Library],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with psycopg.connect(hub_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "hub_schema_1" WITH (FORCE)')
        conn.execute('CREATE DATABASE "hub_schema_1"')
    old = Hub(hub_server, "hub_schema_1")
    with old.admin() as admin:
        monkeypatch.setattr(hub_api, "HUB_SCHEMA", 1)  # the librarian before schema 2
        assert hub_api.init(admin).applied == (1,)
        monkeypatch.undo()
    alice, bob = team_library("alice", "alice"), team_library("bob", "bob")
    for library, user in ((alice, "alice"), (bob, "bob")):
        library.config.set("team.hub", f'"{old.url(user)}"')
    developer(alice, "a", "/w/api", [DEAD, FIX], scope="TEAM")
    push(alice)  # a newer librarian works with a hub at schema 1
    queue = TeamQueue(old.url("rita"))  # and reviews on it: the queue lists what was staged
    try:
        assert sorted(n.node_id for n in queue.nodes(status="pending")) == ["n_a0", "n_a1"]
    finally:
        queue.close()
    with old.connect("rita") as rita:
        hub_api.decide(rita, ["n_a0", "n_a1"], [1, 2], "approve", {})
    with old.connect("bob") as conn:
        before = [hub_api.pull(conn, "b" * 32, 0, [], 10), hub_api.pull(conn, "b" * 32, 3, [], 10)]
    with old.admin() as admin:
        assert hub_api.init(admin).applied == (2,)
        assert hub_api.init(admin).applied == ()
    with old.connect("bob") as conn:  # a library with no items, and with a cursor
        after = [hub_api.pull(conn, "b" * 32, 0, [], 10), hub_api.pull(conn, "b" * 32, 3, [], 10)]
        assert after == before
        assert [len(page) for page in before] == [2, 1]
        # a librarian that knows only schema 1 still pulls from a hub at schema 2
        old_client = conn.execute(
            "SELECT id FROM librarian.pull(1, %s, 0, %s, 10)", ("b" * 32, [])
        ).fetchall()
        assert [r[0] for r in old_client] == [r["id"] for r in after[0]]
    # a library with items of its own: every event on them (two stages, two approvals)
    assert pull(alice).events == 4
    assert (pull(bob).events, pull(bob).events) == (2, 0)
    assert verify(alice).ok
    assert verify(bob).ok
    with psycopg.connect(hub_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute('DROP DATABASE "hub_schema_1" WITH (FORCE)')
