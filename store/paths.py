"""Where a library lives on disk."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

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
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)).resolve()


def default_demo_dir() -> Path:
    """The demo library lives apart from the user's real one."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)).resolve() / "demo"


@dataclass(frozen=True)
class LibraryPaths:
    """The files and folders inside one library directory."""

    root: Path

    @property
    def db(self) -> Path:
        return self.root / "library.db"

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
