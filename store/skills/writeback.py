"""Writing into a skill folder: atomically (temp file + rename, DESIGN §5), and the hashes a
scan will find there afterwards.

The librarian writes a skill's files only on a reviewer's say: an approved draft (its
SKILL.md and `references/regression-cases.md`), an approved enrichment (the SKILL.md), a
runbook's regression case. Each write's event records the previous content (a blob) and the
hashes of the folder as written, so the next scan can tell the librarian's own write from an
edit (a new version that must prove itself).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from store.models import SkippedFile
from store.skills.discovery import Found, Root
from store.skills.reconcile import read_candidate


class WriteError(OSError):
    """A file in a skill folder that cannot be written."""


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temp file in the same folder and a rename; a symlink
    at `path` is replaced, never followed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_text(path: Path, limit: int = 4 * 1024 * 1024) -> str:
    """A file's text ("" when it is absent); a file too large or not a regular file is
    refused."""
    if not path.exists() and not path.is_symlink():
        return ""
    if path.is_symlink() or not path.is_file():
        raise WriteError(f"{path} is not a regular file: the librarian does not write through it")
    if path.stat().st_size > limit:
        raise WriteError(f"{path} is larger than {limit:,} bytes")
    return path.read_text(encoding="utf-8", errors="replace")


def folder_hashes(skill_md: Path) -> tuple[str, str]:
    """(content hash, files hash) of a skill folder as a scan computes them."""
    found = read_candidate(Found(skill_md, Root(skill_md.parent.parent, "extra", 0)))
    if isinstance(found, SkippedFile):
        raise WriteError(f"{skill_md} cannot be read back: {found.reason}")
    return found.content_hash, found.files_hash
