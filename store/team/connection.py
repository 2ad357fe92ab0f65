"""Reaching the hub: a libpq connection string from `[team] hub` in config.toml, which must
not hold a password (libpq finds it in `~/.pgpass`, a `passfile=` named in the string, a
service file or `PGPASSWORD`), and every failure turned into one line.

psycopg is imported inside the functions that connect: it is the `team` extra, and a
library that never uses team mode must not need it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from store.config import Config
from store.team.errors import HubSchemaError, HubUnavailable, TeamError, TeamNotConfigured
from store.team.hub_schema import REFUSED, TOO_OLD

if TYPE_CHECKING:
    import psycopg

#: Seconds to wait for the hub before saying it is unreachable (`team.connect_timeout`).
DEFAULT_TIMEOUT = 5


def warm() -> None:
    """Import psycopg now (a third of a second, cold), e.g. in a worker before it is needed."""
    with contextlib.suppress(ImportError):
        import psycopg  # noqa: F401  (the team extra; only loaded ahead of its use)


def configured_hub(config: Config) -> str:
    """The hub's connection string from the config (checked); TeamNotConfigured when unset."""
    conninfo = str(config.get("team.hub", "") or "").strip()
    if not conninfo:
        raise TeamNotConfigured(
            "team mode is off: set the hub with `librarian config set team.hub"
            " postgresql://USER@HOST:PORT/DATABASE`"
        )
    check_conninfo(conninfo)
    return conninfo


def parts(conninfo: str) -> dict[str, str]:
    try:
        from psycopg.conninfo import conninfo_to_dict  # the team extra (see the docstring)
    except ImportError as exc:
        raise TeamError("team mode needs psycopg: pip install 'skill-librarian[team]'") from exc
    try:
        return {k: str(v) for k, v in conninfo_to_dict(conninfo).items() if v is not None}
    except Exception as exc:  # psycopg.ProgrammingError: not a conninfo at all
        raise TeamError(f"the hub is not a valid connection string: {_first_line(exc)}") from exc


def check_conninfo(conninfo: str) -> None:
    """Refuse a connection string that carries a password."""
    if "password" in parts(conninfo):
        raise TeamError(
            "the hub's connection string holds a password: keep it out of config.toml (put it"
            " in ~/.pgpass, a passfile=…, a service file or PGPASSWORD)"
        )


def describe(conninfo: str) -> str:
    """`user@host:port/database`, for messages (never a password)."""
    given = parts(conninfo)
    user = given.get("user", "")
    host = given.get("host", "") or given.get("hostaddr", "") or "localhost"
    port = given.get("port", "5432")
    database = given.get("dbname", "") or user
    if given.get("service"):
        return f"service {given['service']}"
    return f"{user + '@' if user else ''}{host}:{port}/{database}"


def user_of(conninfo: str) -> str:
    return parts(conninfo).get("user", "")


def connect(conninfo: str, *, timeout: int = DEFAULT_TIMEOUT) -> psycopg.Connection[Any]:
    """An autocommit connection to the hub; HubUnavailable (one line) when it fails."""
    check_conninfo(conninfo)
    try:
        import psycopg  # the team extra (see the module docstring)
    except ImportError as exc:
        raise TeamError("team mode needs psycopg: pip install 'skill-librarian[team]'") from exc
    given = parts(conninfo)
    kwargs: dict[str, Any] = {"autocommit": True, "application_name": "skill-librarian"}
    if "connect_timeout" not in given:
        kwargs["connect_timeout"] = timeout
    try:
        return psycopg.connect(conninfo, **kwargs)
    except psycopg.Error as exc:
        raise HubUnavailable(_connect_failure(conninfo, exc)) from exc


def _connect_failure(conninfo: str, exc: Exception) -> str:
    where = describe(conninfo)
    text = str(exc)
    lower = text.lower()
    if "password authentication failed" in lower:
        return (
            f"the hub refused the password for {user_of(conninfo) or 'this user'} ({where});"
            " check ~/.pgpass, the passfile= in team.hub, or PGPASSWORD"
        )
    if "no password supplied" in lower or "fe_sendauth" in lower:
        return (
            f"the hub at {where} asks for a password and none was found: put it in ~/.pgpass"
            " (or a passfile= in team.hub, a service file, PGPASSWORD)"
        )
    if "does not exist" in lower and "database" in lower:
        return f"the hub at {where} has no such database"
    if "role" in lower and "does not exist" in lower:
        return f"the hub at {where} has no user {user_of(conninfo)!r}"
    if "timeout" in lower or "timed out" in lower:
        return f"the hub at {where} did not answer in time (unreachable?)"
    if "connection refused" in lower or "could not connect" in lower or "no such file" in lower:
        return f"the hub at {where} is unreachable (connection refused): is it running?"
    if "could not translate host name" in lower or "name or service not known" in lower:
        return f"the hub's host in {where} is unknown"
    return f"cannot connect to the hub at {where}: {_first_line(exc)}"


def hub_error(exc: Exception) -> TeamError:
    """A psycopg error raised while talking to the hub, as one line."""
    import psycopg  # only called with a psycopg error: it is loaded already

    state = getattr(exc, "sqlstate", None) or ""
    message = _primary(exc)
    if state == TOO_OLD:
        return HubSchemaError(f"{message}: upgrade the librarian; nothing was changed")
    if state == REFUSED:
        return TeamError(f"the hub refused: {message}")
    if state in ("42883", "42P01", "3F000", "42703"):  # undefined function, table, schema, column
        return HubSchemaError(
            "the hub has no librarian schema this version can use (run `librarian team init`"
            f" there, or upgrade the librarian): {message}"
        )
    if state == "42501":
        return TeamError(f"the hub does not allow it: {message}")
    if isinstance(exc, psycopg.OperationalError):
        return HubUnavailable(f"the hub went away: {message}; nothing partial was kept")
    return TeamError(f"the hub answered with an error: {message}")


@contextmanager
def hub_errors() -> Iterator[None]:
    """Turn psycopg errors inside the block into one-line TeamErrors."""
    import psycopg  # the team extra: only team operations enter this block

    try:
        yield
    except psycopg.Error as exc:
        raise hub_error(exc) from exc


def _primary(exc: Exception) -> str:
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    return _first_line(primary or exc)


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0].strip() if lines else type(value).__name__
