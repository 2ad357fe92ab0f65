"""Who may do what is enforced by PostgreSQL: connect as each member and try."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import psycopg
import pytest

from store.library import Library
from store.team import server
from store.team.errors import TeamError
from store.team.push import push
from store.team.review import TeamQueue
from tests.team.conftest import Hub
from tests.team.helpers import developer

DEAD = "Dead end: raising pool_size to 50 did not stop QueuePool timeouts in the api"


def staged(hub: Hub, team_library: Callable[..., Library], user: str = "alice") -> str:
    library = team_library(user, user)
    (node_id,) = developer(library, user[0], "/w/api", [DEAD])
    push(library)
    return node_id


def refused(conn: psycopg.Connection[object], sql: str, *params: object) -> str:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(sql, params or None)
    return str(caught.value)


def test_a_contributor_can_neither_approve_nor_rewrite_history(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    node_id = staged(hub, team_library)
    with hub.connect("alice") as alice:
        last = alice.execute(
            "SELECT last_event FROM librarian.items WHERE item_id=%s", (node_id,)
        ).fetchone()
        assert last is not None
        for sql in (
            "UPDATE librarian.items SET status='approved', published=true",
            "UPDATE librarian.events SET applied=false",
            "DELETE FROM librarian.events",
            "DELETE FROM librarian.items",
            "TRUNCATE librarian.events",
            "INSERT INTO librarian.heads(library_id, events, hash) VALUES"
            " ('00000000000000000000000000000000', 1, repeat('a', 64))",
            "UPDATE librarian.meta SET value='1' WHERE key='min_client'",
        ):
            assert "permission denied" in refused(alice, sql)
        approve = (
            "SELECT * FROM librarian.decide(1, ARRAY[%s], ARRAY[%s]::bigint[], 'approve', '{}')"
        )
        assert "permission denied for function decide" in refused(alice, approve, node_id, last[0])
        # The internals a definer function uses are not callable either.
        assert "permission denied" in refused(
            alice, "SELECT librarian._apply(e) FROM librarian.events e LIMIT 1"
        )
        # Through push, a contributor may stage, revise or withdraw, nothing else.
        library_id = alice.execute("SELECT library_id FROM librarian.libraries").fetchone()
        assert library_id is not None
        op = {"gid": f"{library_id[0]}:999999", "op": "approve", "item_id": node_id}
        message = refused(
            alice,
            "SELECT librarian.push(1, %s, 1, NULL, NULL, %s::jsonb)",
            library_id[0],
            json.dumps([op]),
        )
        assert "may stage, revise or withdraw" in message
        status = alice.execute(
            "SELECT status, published FROM librarian.items WHERE item_id=%s", (node_id,)
        ).fetchone()
        assert status == ("staged", False)


def test_nobody_pushes_into_anothers_library_or_reads_unpublished_items(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    node_id = staged(hub, team_library)
    with hub.connect("alice") as alice:
        (library_id,) = alice.execute("SELECT library_id FROM librarian.libraries").fetchone() or (
            "",
        )
    with hub.connect("bob") as bob:
        assert bob.execute("SELECT count(*) FROM librarian.items").fetchone() == (0,)
        assert bob.execute("SELECT count(*) FROM librarian.events").fetchone() == (0,)
        op = {"gid": f"{library_id}:1", "op": "withdraw", "item_id": node_id}
        message = refused(
            bob,
            "SELECT librarian.push(1, %s, 1, NULL, NULL, %s::jsonb)",
            library_id,
            json.dumps([op]),
        )
        assert "not registered to bob" in message
        message = refused(
            bob, "SELECT librarian.hello(1, %s, 'mine now', 1, repeat('a', 64))", library_id
        )
        assert "belongs to alice" in message
    with hub.connect("rita") as rita:  # a reviewer reads what waits for review
        assert rita.execute("SELECT count(*) FROM librarian.items").fetchone() == (1,)


def test_a_reviewer_decides_others_items_never_their_own(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    own = staged(hub, team_library, "rita")
    queue = TeamQueue(hub.url("rita"))
    try:
        queue.nodes(status="all")
        with pytest.raises(TeamError, match="rita authored"):
            queue.review("approve", [own])
        assert queue.nodes(status="pending") == []  # not waiting for her
    finally:
        queue.close()
    other = TeamQueue(hub.url("rex"))
    try:
        (node,) = other.nodes(status="pending")
        assert node.node_id == own
        assert other.review("approve", [own])[0].status == "approved"
    finally:
        other.close()
    with hub.connect("rex") as rex:
        assert "permission denied" in refused(rex, "UPDATE librarian.events SET kind='reject'")
        assert "permission denied" in refused(rex, "DELETE FROM librarian.events")


def test_history_is_append_only_for_the_owner_too(
    hub: Hub, team_library: Callable[..., Library]
) -> None:
    staged(hub, team_library)
    with hub.admin() as admin:  # a superuser: grants do not stop it, the triggers do
        for sql in (
            "UPDATE librarian.events SET actor='mallory'",
            "DELETE FROM librarian.events",
            "TRUNCATE librarian.events",
            "DELETE FROM librarian.heads",
            "UPDATE librarian.heads SET hash=repeat('b', 64)",
        ):
            assert "append-only" in refused(admin, sql)


def test_psql_as_a_contributor_is_refused(hub: Hub, team_library: Callable[..., Library]) -> None:
    node_id = staged(hub, team_library)
    psql = server.binaries() / "psql"
    attempts = {
        "UPDATE librarian.items SET status='approved'": "permission denied for table items",
        f"SELECT * FROM librarian.decide(1, ARRAY['{node_id}'], ARRAY[1]::bigint[],"
        " 'approve', '{}')": "permission denied for function decide",
        "DELETE FROM librarian.events": "permission denied for table events",
    }
    for sql, expected in attempts.items():
        result = subprocess.run(
            [str(psql), hub.url("alice"), "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert result.returncode != 0
        assert expected in result.stderr
