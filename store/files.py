"""Opening files that come from outside (transcripts named by a hook, files found on disk):
only regular files, never a blocking open.

A FIFO opened for reading blocks until a writer appears, and a device such as `/dev/zero`
never ends; `open_regular` opens with `O_NONBLOCK` (so a FIFO returns at once) and checks
the opened descriptor with `fstat` (so a file swapped after a `stat` is still caught).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class NotRegularFile(OSError):
    """The path is not a regular file (an OSError, so readers that report unreadable files
    report it too, with its `strerror`)."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for binary reading if it is a regular file (symlinks followed); else
    `NotRegularFile`, without ever blocking."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = kind_of(mode)
            raise NotRegularFile(0, f"not a regular file ({what})", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def regular_file_problem(path: Path) -> str:
    """ "" when `path` is a regular file (symlinks followed), else why it is not read."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return exc.strerror or str(exc)
    return "" if stat.S_ISREG(mode) else f"not a regular file ({kind_of(mode)})"
