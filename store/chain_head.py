"""The chain head: the event log's count and last hash, kept in a small file beside the
database so that a database emptied, replaced or rewritten as a whole no longer passes.

A database carries its own hash chain, and a chain recomputed after an edit is as consistent
as the original; only something outside the database can say which chain it should be. The
head file is that something (a team hub will later keep the heads off the machine).

Writers record the new tip after every commit that appended events: atomically (temp file +
rename), under a file lock, only forwards (a writer that committed earlier never moves it
back) and only along the chain it records (a database whose history no longer holds the
recorded head is left alone, for `verify` to report). The file is written after the commit,
never before, so it is never ahead of the database; a writer that dies between the two
leaves it behind, by events that chain from it, which `verify` accepts.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from store.errors import LibrarianError
from store.events import GENESIS_HASH


class HeadFileError(LibrarianError):
    """The head file exists but cannot be read as a head."""


@dataclass(frozen=True)
class Head:
    """A point in the event log: how many events, and the hash of the last one."""

    events: int
    hash: str
    #: The event count when this library's head was first recorded (0: from its first event;
    #: more for a library made before heads were kept, whose earlier history the head does
    #: not vouch for).
    since: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"events": self.events, "hash": self.hash, "recorded_since": self.since}


def tip(conn: sqlite3.Connection) -> Head:
    """The database's own head: its last event (the genesis hash when it has none)."""
    row = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return Head(int(row[0]), str(row[1])) if row else Head(0, GENESIS_HASH)


def read(path: Path) -> Head | None:
    """The recorded head; None when the file does not exist."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HeadFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        data = json.loads(raw)
        head = Head(int(data["events"]), str(data["hash"]), int(data.get("recorded_since", 0)))
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise HeadFileError(f"{path}: not a chain head ({type(exc).__name__})") from exc
    if head.events < 0 or len(head.hash) != 64 or not 0 <= head.since <= head.events:
        raise HeadFileError(f"{path}: not a chain head (impossible values)")
    return head


def hash_at(conn: sqlite3.Connection, seq: int) -> str | None:
    """The hash of event `seq` (the genesis hash for 0); None when there is no such event."""
    if seq == 0:
        return GENESIS_HASH
    row = conn.execute("SELECT hash FROM events WHERE seq=?", (seq,)).fetchone()
    return None if row is None else str(row[0])


class HeadFile:
    """One library's head file, and the last head this process knows is recorded in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self.known = -1  # the event count last read or written; -1: not yet

    def record_if_missing(self, conn: sqlite3.Connection) -> None:
        """On opening for writing: a library without a head (new, or made before heads were
        kept) gets one now, at its current tip."""
        if self.path.exists():
            self.known = self._peek()
            return
        with self._locked():
            current = self._read_quietly()
            if current is None:
                now = tip(conn)
                current = Head(now.events, now.hash, since=now.events)
                self._write(current)
            self.known = current.events

    def advance(self, conn: sqlite3.Connection, new: Head) -> None:
        """After a commit that ended the log at `new`: move the head there, if that is
        forwards along the recorded chain. Never raises for a file problem (the commit has
        happened; a head left behind is what `verify` tolerates)."""
        if new.events == self.known:
            return
        try:
            with self._locked():
                current = self._read_quietly()
                if current is None:
                    self._write(Head(new.events, new.hash, since=new.events))
                elif 0 <= current.events < new.events and hash_at(conn, current.events) == (
                    current.hash
                ):
                    self._write(Head(new.events, new.hash, since=current.since))
                self.known = new.events
        except OSError:
            pass

    def _read_quietly(self) -> Head | None:
        """The recorded head; a damaged file counts as present and is never overwritten."""
        try:
            return read(self.path)
        except HeadFileError:
            return Head(-1, "")

    def _peek(self) -> int:
        head = self._read_quietly()
        return -1 if head is None else head.events

    def _write(self, head: Head) -> None:
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text(json.dumps(head.as_dict(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock
