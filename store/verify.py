"""`librarian verify` and `librarian rebuild`: the library checks itself against its log."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from store import chain_head
from store.chain_head import Head
from store.content import BLOB_COLUMNS, erase_records, missing_references
from store.events import check_chain, iter_events
from store.migrations import PROJECTION_TABLES, migrate
from store.projectors import apply_event

if TYPE_CHECKING:
    from store.kernel import Kernel

MAX_LISTED = 10


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    problems: list[str] = field(default_factory=list)


@dataclass
class VerifyReport:
    checks: list[Check]
    #: Where the database's log ends (None when it could not be read), and the head file.
    head: Head | None = None
    recorded: Head | None = None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "checks": [c.__dict__ for c in self.checks],
            "head": None
            if self.head is None
            else {"events": self.head.events, "hash": self.head.hash},
            "recorded_head": None if self.recorded is None else self.recorded.as_dict(),
        }


def verify(library: Kernel) -> VerifyReport:
    """Integrity, hash chain, the head file, replay == projections, blobs, the vector index.

    Damage that stops a check from reading the database fails that check with the reason."""
    recorded, head_problem = _recorded_head(library.paths.head)
    with library.db.read() as conn:
        checks = [_guarded("integrity", _integrity, conn), _guarded("hash_chain", _chain, conn)]
        try:
            tip: Head | None = chain_head.tip(conn)
        except sqlite3.DatabaseError:
            tip = None
        checks.append(_guarded("head", _head, conn, tip, recorded, head_problem))
        checks += [_guarded("replay", _replay, conn), _guarded("blobs", _blobs, conn)]
    checks.append(_guarded("vectors", _vectors, library))
    return VerifyReport(checks, tip, recorded)


def unopened(head_file: Path, reason: str) -> VerifyReport:
    """The report on a library that could not be opened at all (its database damaged or
    unreadable, or its config file broken: `reason` says which)."""
    recorded, _ = _recorded_head(head_file)
    checks = [Check("database", False, reason)]
    if recorded is not None:
        checks.append(
            Check(
                "head",
                False,
                f"the head file records {recorded.events} events; the library could not be"
                " opened to compare",
            )
        )
    return VerifyReport(checks, None, recorded)


def _integrity(conn: sqlite3.Connection) -> Check:
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    ok = rows == ["ok"]
    return Check(
        "integrity",
        ok,
        "PRAGMA integrity_check: ok" if ok else "database is damaged",
        rows[:MAX_LISTED] if not ok else [],
    )


def _chain(conn: sqlite3.Connection) -> Check:
    problems = check_chain(conn)
    total = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return Check(
        "hash_chain",
        not problems,
        f"{total} events, chain intact" if not problems else "hash chain is broken",
        problems,
    )


def replay_into(source: sqlite3.Connection, target: sqlite3.Connection) -> int:
    """Apply every event of `source` to the (empty) projections of `target`."""
    count = 0
    target.execute("BEGIN")
    for event in iter_events(source):
        apply_event(target, event)
        count += 1
    target.execute("COMMIT")
    return count


def _replay(conn: sqlite3.Connection) -> Check:
    scratch = sqlite3.connect(":memory:", isolation_level=None)
    migrate(scratch)
    # Content blobs are addressed by hash (checked by `_blobs`); projections may read them,
    # and an erased one reads as erased (tombstones are copied too).
    scratch.executemany(
        f"INSERT INTO blobs({BLOB_COLUMNS}) VALUES (?,?,?,?,?,?)",
        conn.execute(f"SELECT {BLOB_COLUMNS} FROM blobs"),
    )
    replay_into(conn, scratch)
    problems: list[str] = []
    for table, key in PROJECTION_TABLES.items():
        problems += _compare(table, key, conn, scratch)
    scratch.close()
    return Check(
        "replay",
        not problems,
        "replaying the log reproduces every projection"
        if not problems
        else "projections differ from a replay of the log",
        problems[:MAX_LISTED],
    )


def _compare(
    table: str, key: str, live: sqlite3.Connection, replayed: sqlite3.Connection
) -> list[str]:
    columns = "rowid, *" if table.endswith("_fts") else "*"
    sql = f"SELECT {columns} FROM {table} ORDER BY {key}"
    left = [tuple(r) for r in live.execute(sql)]
    right = [tuple(r) for r in replayed.execute(sql)]
    if left == right:
        return []
    extra = set(left) - set(right)
    missing = set(right) - set(left)
    return [
        f"{table}: {len(extra)} rows not explained by the log, "
        f"{len(missing)} rows missing (e.g. {_short(next(iter(extra or missing)))})"
    ]


def _short(row: tuple[object, ...]) -> str:
    text = repr(row)
    return text if len(text) < 120 else text[:117] + "..."


def _blobs(conn: sqlite3.Connection) -> Check:
    problems = []
    recorded = erase_records(conn)
    erased = 0
    for digest, text, erased_at in conn.execute("SELECT hash, text, erased_at FROM blobs"):
        if erased_at:  # a tombstone: fine when the log says `forget` erased it
            erased += 1
            if digest not in recorded:
                problems.append(f"blob {digest[:12]}: marked erased without a `blob.erased` event")
            elif text:
                problems.append(f"blob {digest[:12]}: erased, but its content is still there")
        elif hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
            problems.append(f"blob {digest[:12]}: content does not match its hash")
    problems += missing_references(conn)
    referenced = conn.execute(
        "SELECT count(*) FROM skill_versions v WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE"
        " b.hash=v.source_hash) OR NOT EXISTS (SELECT 1 FROM blobs b WHERE b.hash=v.body_hash)"
    ).fetchone()[0]
    if referenced:
        problems.append(f"{referenced} skill versions reference missing content")
    detail = "content blobs match their hashes" if not problems else "content blobs are damaged"
    if erased:
        detail += f"; {erased} erased by `librarian forget`"
    return Check("blobs", not problems, detail, problems[:MAX_LISTED])


def _vectors(library: Kernel) -> Check:
    with library.db.read() as conn:
        wanted = {int(r[0]): r[1] for r in conn.execute("SELECT label, text_hash FROM skill_texts")}
        stored = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT text_hash, vector FROM embeddings WHERE model=?", (library.model_name,)
            )
        }
    index = library.vectors.index
    dim = next((len(v) // 4 for v in stored.values()), 384)
    if not wanted:
        if (index.meta is None and not index.load(dim)) or not index.count:
            return Check("vectors", True, "no skills to index")
        return Check(
            "vectors",
            False,
            "vector index does not match SQLite",
            [f"the index holds {index.count} surfaces, the database none"],
        )
    if index.meta is None and not index.load(dim):
        return Check(
            "vectors",
            False,
            "vector index is missing or unreadable",
            ["run `librarian rebuild` to regenerate it"],
        )
    problems = _index_problems(index.entries, wanted, stored)
    if not problems:
        problems = _vector_mismatches(library, wanted, stored)
    return Check(
        "vectors",
        not problems,
        f"{len(wanted)} surfaces indexed for {library.model_name}"
        if not problems
        else "vector index does not match SQLite",
        problems[:MAX_LISTED],
    )


def _index_problems(
    entries: Mapping[int, str], wanted: dict[int, str], stored: dict[str, bytes]
) -> list[str]:
    problems = []
    not_embedded = [h for h in wanted.values() if h not in stored]
    if not_embedded:
        problems.append(f"{len(not_embedded)} surfaces have no stored embedding")
    missing = [lab for lab in wanted if lab not in entries]
    extra = [lab for lab in entries if lab not in wanted]
    stale = [lab for lab, h in wanted.items() if lab in entries and entries[lab] != h]
    for label, what in ((missing, "missing from"), (extra, "extra in"), (stale, "stale in")):
        if label:
            problems.append(f"{len(label)} labels {what} the index (e.g. {sorted(label)[0]})")
    return problems


def _vector_mismatches(
    library: Kernel, wanted: dict[int, str], stored: dict[str, bytes]
) -> list[str]:
    labels = sorted(wanted)
    if not labels:
        return []
    actual = library.vectors.index.vectors(labels)
    expected = np.vstack([np.frombuffer(stored[wanted[lab]], dtype=np.float32) for lab in labels])
    sims = np.sum(actual * expected, axis=1) / (
        np.linalg.norm(actual, axis=1) * np.linalg.norm(expected, axis=1) + 1e-12
    )
    bad = [lab for lab, s in zip(labels, sims, strict=True) if s < 0.999]
    return [f"{len(bad)} index vectors differ from SQLite (e.g. label {bad[0]})"] if bad else []


def rebuild(library: Kernel) -> dict[str, int]:
    """Regenerate every projection from the log, then the vector index."""
    with library.db.write() as conn:
        for table in PROJECTION_TABLES:
            conn.execute(f"DELETE FROM {table}")
        count = 0
        for event in list(iter_events(conn)):
            apply_event(conn, event)
            count += 1
    library.vectors.sync_index(embed=True, force=True)
    return {"events": count, "surfaces": library.vectors.index.count}


# -- damage that stops a check, and the head file -------------------------------------


def _guarded(name: str, check: Callable[..., Check], *args: Any) -> Check:
    try:
        return check(*args)
    except sqlite3.DatabaseError as exc:
        return Check(name, False, f"the database cannot be read: {exc}")


def _recorded_head(path: Path) -> tuple[Head | None, str]:
    try:
        return chain_head.read(path), ""
    except chain_head.HeadFileError as exc:
        return None, str(exc)


def _head(conn: sqlite3.Connection, tip: Head | None, recorded: Head | None, problem: str) -> Check:
    if problem or tip is None:
        return Check("head", False, problem or "the log's end cannot be read")
    if recorded is None:
        if not tip.events:
            return Check("head", True, "no events yet, no head recorded")
        return Check(
            "head",
            True,
            "no head recorded yet (a library made before heads were kept): it is recorded the"
            " next time a command that writes opens the library",
        )
    since = (
        "head recorded since the first event"
        if recorded.since == 0
        else f"head first recorded at event {recorded.since} (a library made before heads"
        " were kept: a change to earlier history made before then would not show)"
    )
    if recorded.events > tip.events:
        return Check(
            "head",
            False,
            "events were removed or the database was replaced",
            [f"the head file records {recorded.events} events, the log has {tip.events}"],
        )
    found = chain_head.hash_at(conn, recorded.events)
    if found != recorded.hash:
        return Check(
            "head",
            False,
            "history was rewritten: the log no longer holds the recorded head",
            [f"event {recorded.events} should have hash {recorded.hash}", f"it has {found}"],
        )
    if recorded.events < tip.events:
        later = tip.events - recorded.events
        return Check(
            "head",
            True,
            f"the log goes on {later} events past the recorded head and chains from it"
            f" (a writer stopped before recording them); {since}",
        )
    return Check("head", True, f"the log ends at the recorded head; {since}")
