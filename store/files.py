"""Reading files that come from outside (transcripts named by a hook, skill folders found on
disk) without trusting them.

Only regular files are read. A FIFO would block `open` until someone writes to it, a device
such as `/dev/zero` never ends, and a file can be swapped for either between a walk and a
read, so the type is checked before opening and again on the opened descriptor, and the file
is opened with `O_NONBLOCK`. `read_regular` also reads in bounded chunks up to a size cap;
`open_regular` hands back a file object for readers that stream.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 64 * 1024


class Refused(Exception):
    """A file that was not read, with a skip code and a reason a person can act on."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def kind_name(mode: int) -> str:
    """What a non-regular file is, in words."""
    kinds = (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISLNK, "symlink"),
    )
    return next((name for test, name in kinds if test(mode)), "special file")


def check_regular(mode: int) -> None:
    """Raise `Refused` unless `mode` is a regular file's."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise Refused("device_file", f"device file ({kind_name(mode)}), not read")
    raise Refused("not_regular", f"not a regular file ({kind_name(mode)})")


def read_regular(path: Path, limit: int, what: str = "file", *, follow: bool = True) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them, else `Refused`.

    `follow=False` refuses a symlink in the last component (for paths already resolved)."""
    try:
        check_regular(os.stat(path, follow_symlinks=follow).st_mode)
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
        fd = os.open(path, flags)
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror or exc}") from exc
    try:
        return _read_fd(fd, limit, what)
    except OSError as exc:
        raise Refused("unreadable", f"cannot read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int, what: str) -> bytes:
    info = os.fstat(fd)
    check_regular(info.st_mode)  # swapped since the stat above
    if info.st_size > limit:
        raise Refused("too_large", f"{what} is {info.st_size:,} bytes (limit {limit:,})")
    os.set_blocking(fd, True)
    parts: list[bytes] = []
    held = 0
    while chunk := os.read(fd, min(CHUNK_BYTES, limit + 1 - held)):
        parts.append(chunk)
        held += len(chunk)
        if held > limit:  # grew while being read
            raise Refused("too_large", f"{what} grew past the limit of {limit:,} bytes")
    return b"".join(parts)


class NotRegularFile(OSError):
    """`open_regular` on something that is not a regular file (an OSError, so readers that
    report unreadable files report this too, with its `strerror`)."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for binary reading if it is a regular file (symlinks followed); else
    `NotRegularFile`, without ever blocking."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(0, f"not a regular file ({kind_name(mode)})", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def regular_file_problem(path: Path) -> str:
    """ "" when `path` is a regular file (symlinks followed), else why it is not read."""
    try:
        check_regular(path.stat().st_mode)
    except OSError as exc:
        return exc.strerror or str(exc)
    except Refused as refused:
        return refused.reason
    return ""
