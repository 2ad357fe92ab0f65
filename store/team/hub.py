"""The client side of the hub: one function per hub function, each one round trip.

Every call passes `HUB_SCHEMA`, so a hub too new for this librarian refuses before it does
anything. Errors are raised as psycopg errors; callers wrap them with
`connection.hub_errors()`.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.team.errors import HubSchemaError, TeamError
from store.team.hub_schema import HUB_SCHEMA, MIGRATIONS, ROLES, ROLES_SQL

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[Any]

#: Columns of a pulled row (`librarian.pull`), in order.
PULL_COLUMNS = (
    "id",
    "gid",
    "kind",
    "item_id",
    "actor",
    "at",
    "applied",
    "overruled_by",
    "body",
    "item_kind",
    "origin",
    "author",
    "status",
    "published",
    "summary",
    "scope",
    "decided_by",
    "decided_at",
    "reason",
    "last_event",
    "item_body",
)


@dataclass(frozen=True)
class InitReport:
    """What `librarian team init` did."""

    before: int
    after: int
    applied: tuple[int, ...]


def schema_of(conn: Conn) -> int:
    """The hub's schema version; 0 when it has none."""
    row = conn.execute(
        "SELECT to_regnamespace('librarian') IS NOT NULL"
        " AND to_regclass('librarian.meta') IS NOT NULL"
    ).fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT value FROM librarian.meta WHERE key='schema'").fetchone()
    return int(found[0]) if found else 0


def init_roles(conn: Conn) -> None:
    """The team's group roles (cluster-wide), before any member is added."""
    conn.execute(ROLES_SQL)


def init(conn: Conn) -> InitReport:
    """Create or upgrade the hub's schema and roles (needs a role that may create roles and
    schemas). Each migration is one transaction; a hub newer than this librarian is left as
    it is."""
    before = schema_of(conn)
    if before > HUB_SCHEMA:
        raise HubSchemaError(
            f"the hub has schema {before}, newer than this librarian knows ({HUB_SCHEMA}):"
            " upgrade the librarian; nothing was changed"
        )
    applied: list[int] = []
    for number in range(before + 1, HUB_SCHEMA + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(7262601)")
            if schema_of(conn) >= number:  # another init got here first
                continue
            conn.execute(ROLES_SQL)
            database = str(conn.execute("SELECT current_database()").fetchone()[0])  # type: ignore[index]
            conn.execute(f'GRANT CREATE ON DATABASE "{_ident(database)}" TO librarian_owner')
            conn.execute("SET LOCAL ROLE librarian_owner")
            conn.execute(MIGRATIONS[number - 1])
            conn.execute("UPDATE librarian.meta SET value=%s WHERE key='schema'", (str(number),))
            conn.execute("INSERT INTO librarian.migrations(version) VALUES (%s)", (number,))
        applied.append(number)
    return InitReport(before, schema_of(conn), tuple(applied))


def _ident(name: str) -> str:
    return name.replace('"', '""')


def add_member(conn: Conn, name: str, *, reviewer: bool = False) -> str:
    """Create a login role for a teammate (or update an existing one's password and role),
    returning a new random password. The password reaches the server only as a SCRAM
    verifier computed here, never in a statement's text."""
    if not name or not all(c.isalnum() or c in "_-." for c in name) or len(name) > 63:
        raise TeamError("a member name has letters, digits, '_', '-' or '.' (at most 63)")
    if name in ROLES or name.startswith("pg_"):
        raise TeamError(f"{name!r} is reserved")
    password = secrets.token_urlsafe(18)
    verifier = conn.pgconn.encrypt_password(password.encode(), name.encode(), b"scram-sha-256")
    role = f'"{_ident(name)}"'
    with conn.transaction():
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname=%s", (name,)).fetchone()
        quoted = verifier.decode().replace("'", "''")
        verb = "ALTER" if exists else "CREATE"
        conn.execute(f"{verb} ROLE {role} LOGIN PASSWORD '{quoted}'")
        conn.execute(f"GRANT librarian_contributor TO {role}")
        if reviewer:
            conn.execute(f"GRANT librarian_reviewer TO {role}")
        else:
            conn.execute(f"REVOKE librarian_reviewer FROM {role}")
    return password


def members(conn: Conn) -> list[tuple[str, bool]]:
    """(login, reviewer) of every member of the team, by name."""
    rows = conn.execute(
        "SELECT r.rolname, pg_has_role(r.oid, 'librarian_reviewer', 'MEMBER') FROM pg_roles r"
        " WHERE r.rolcanlogin AND pg_has_role(r.oid, 'librarian_contributor', 'MEMBER')"
        " AND NOT r.rolsuper ORDER BY r.rolname"
    ).fetchall()
    return [(str(r[0]), bool(r[1])) for r in rows]


def hello(conn: Conn, library_id: str, name: str, head: tuple[int, str]) -> dict[str, Any]:
    """Register (or greet) this library, anchor its chain head; the hub's view of it."""
    row = conn.execute(
        "SELECT librarian.hello(%s, %s, %s, %s, %s)",
        (HUB_SCHEMA, library_id, name, head[0], head[1]),
    ).fetchone()
    return dict(row[0]) if row else {}


def push(conn: Conn, library_id: str, through: int, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """One batch of ops, all or nothing (one transaction on the hub)."""
    row = conn.execute(
        "SELECT librarian.push(%s, %s, %s, NULL, NULL, %s::jsonb)",
        (HUB_SCHEMA, library_id, through, json.dumps(ops, ensure_ascii=False)),
    ).fetchone()
    return dict(row[0]) if row else {}


def pull(
    conn: Conn, library_id: str, cursor: int, projects: list[str], limit: int
) -> list[dict[str, Any]]:
    """Up to `limit` events after `cursor` this library should see, in the hub's order."""
    cur = conn.execute(
        f"SELECT {_PULL_SELECT} FROM librarian.pull(%s, %s, %s, %s, %s) AS p",
        (HUB_SCHEMA, library_id, cursor, projects, limit),
    )
    rows = [dict(zip(PULL_COLUMNS, row, strict=True)) for row in cur.fetchall()]
    for row in rows:
        for key in _PULL_JSON:
            if row[key] is not None:  # NULL stays None: `validate` says what is wrong
                row[key] = json.loads(row[key])
    return rows


#: The JSON columns of a pulled row come as text and are parsed here: the same values as
#: psycopg's jsonb loader gives, for about a quarter less of the pull's decoding.
_PULL_JSON = ("body", "item_body")
_PULL_SELECT = ", ".join(f"p.{c}::text" if c in _PULL_JSON else f"p.{c}" for c in PULL_COLUMNS)


def pulled(conn: Conn, library_id: str) -> None:
    conn.execute("SELECT librarian.pulled(%s, %s)", (HUB_SCHEMA, library_id))


def decide(
    conn: Conn,
    items: list[str],
    bases: list[int],
    action: str,
    values: dict[str, str],
) -> list[dict[str, Any]]:
    """A reviewer's decision on items (all or nothing); each item's result."""
    cur = conn.execute(
        "SELECT * FROM librarian.decide(%s, %s, %s, %s, %s::jsonb)",
        (HUB_SCHEMA, items, bases, action, json.dumps(values, ensure_ascii=False)),
    )
    names = ("item_id", "event_id", "applied", "status", "last_event", "summary", "scope")
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def status(conn: Conn, library_id: str) -> dict[str, Any]:
    row = conn.execute("SELECT librarian.status(%s, %s)", (HUB_SCHEMA, library_id)).fetchone()
    return dict(row[0]) if row else {}


def verify_chain(conn: Conn) -> dict[str, Any]:
    row = conn.execute("SELECT librarian.verify_chain(%s)", (HUB_SCHEMA,)).fetchone()
    return dict(row[0]) if row else {}


def verify_items(conn: Conn) -> dict[str, Any]:
    row = conn.execute("SELECT librarian.verify_items(%s)", (HUB_SCHEMA,)).fetchone()
    return dict(row[0]) if row else {}


def heads(conn: Conn, library_id: str) -> list[tuple[int, str, str]]:
    """Every chain head the hub anchored for a library: (events, hash, when), oldest first."""
    rows = conn.execute(
        "SELECT events, hash, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        " FROM librarian.heads WHERE library_id=%s ORDER BY events",
        (library_id,),
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]
