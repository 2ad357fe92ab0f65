"""Where a library lives on disk."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "skill-librarian"
ENV_HOME = "LIBRARIAN_HOME"


def resolve_library_dir(
    explicit: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """`--library PATH`, else `$LIBRARIAN_HOME`, else the platform user data dir."""
    environ = os.environ if env is None else env
    if explicit:
        return Path(explicit).expanduser().resolve()
    if environ.get(ENV_HOME):
        return Path(environ[ENV_HOME]).expanduser().resolve()
    return _user_data_dir()


def _user_data_dir() -> Path:
    # Imported here: the Stop hook resolves an explicit --library and must start fast.
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)).resolve()


def default_demo_dir() -> Path:
    """The demo library lives apart from the user's real one."""
    return _user_data_dir() / "demo"


class LibraryPaths:
    """The files and folders inside one library directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LibraryPaths) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def db(self) -> Path:
        return self.root / "library.db"

    @property
    def head(self) -> Path:
        """The event log's head (count and last hash), kept outside the database."""
        return self.root / "head.json"

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    @property
    def vectors(self) -> Path:
        return self.root / "vectors"

    @property
    def spool(self) -> Path:
        return self.root / "spool"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def exports(self) -> Path:
        return self.root / "exports"

    def ensure(self) -> None:
        for folder in (self.root, self.vectors, self.spool, self.models, self.exports):
            folder.mkdir(parents=True, exist_ok=True)

    def writable(self) -> bool:
        """False when this user cannot change the library: its folder (or, before it exists,
        the nearest folder that does), its database files, config or head file."""
        folder = self.root
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return False
        files = (self.db, Path(f"{self.db}-wal"), Path(f"{self.db}-shm"), self.config, self.head)
        return all(os.access(f, os.W_OK) for f in files if f.exists())
