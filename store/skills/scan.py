"""Scanning: reconcile the catalog with the SKILL.md files under the roots, one committed
batch at a time (read, embed, record), then uninstall what is gone and relint what is left."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from store import catalog
from store.embed import EmbeddingError
from store.kernel import Kernel
from store.lifecycle.candidates import candidate_base
from store.lifecycle.requirements import all_unproven
from store.models import ScanReport, SkippedFile
from store.projections import store_blob
from store.skills import discovery
from store.skills.discovery import Found, Root
from store.skills.lint import LINT_VERSION
from store.skills.reconcile import (
    Candidate,
    Loaded,
    finding_dict,
    load,
    manifest_of,
    read_candidate,
)
from store.skills.relint import relint
from store.skills.surface import surfaces, text_hash

Progress = Callable[[int, int], None]
WRITE_BATCH = 250
#: Skills per committed scan batch: at least this many...
SCAN_BATCH_MIN = 32
#: ...at most this many, and otherwise a twentieth of the scan (the vector index is saved
#: after every batch, so a big first scan saves it about twenty times).
SCAN_BATCH_MAX = 500


def configured_roots(k: Kernel, home: Path | None = None, cwd: Path | None = None) -> list[Root]:
    """The roots a plain `scan` walks, in precedence order."""
    configured = [Path(str(p)) for p in k.config.get("skills.roots") or []]
    extra = [Path(str(p)) for p in k.config.get("skills.extra_roots") or []]
    if configured:
        roots = discovery.explicit_roots(configured, "configured")
    else:
        roots = discovery.default_roots(home or Path.home(), cwd or Path.cwd(), os.environ)
    known = {str(r.path) for r in roots}
    roots += [r for r in discovery.explicit_roots(extra, "extra") if str(r.path) not in known]
    return roots


def remember_roots(k: Kernel, paths: Sequence[Path]) -> None:
    extra = [str(p) for p in k.config.get("skills.extra_roots") or []]
    added = [str(p.expanduser().resolve()) for p in paths]
    merged = extra + [p for p in added if p not in extra]
    if merged != extra:
        k.config.set("skills.extra_roots", json.dumps(merged))


def scan(
    k: Kernel,
    paths: Sequence[Path] | None = None,
    *,
    embed: bool = True,
    progress: Progress | None = None,
) -> ScanReport:
    """Reconcile the catalog with the files under the roots (idempotent by content)."""
    started = time.perf_counter()
    roots = discovery.explicit_roots(list(paths), "extra") if paths else configured_roots(k)
    found, walk_skips, truncated = _walk(k, roots)
    known = known_by_path(k)
    tally = _ScanTally(skipped=[_kept(s, known.get(s.path)) for s in walk_skips])
    size = scan_batch_size(len(found))
    for start in range(0, len(found), size):
        _scan_batch(k, found[start : start + size], known, tally, embed=embed)
        if progress is not None:
            progress(min(start + size, len(found)), len(found))
    seen = {str(f.path) for f in found}
    gone = _write_uninstalls(k, roots, truncated, seen, known)
    relint(k.db, k.append_event)  # unchanged skills linted with older rules
    k.vectors.sync_index(embed=embed)
    report = catalog.graph_report(k.db)
    with k.db.read() as conn:
        unproven = tuple(all_unproven(conn))
    return ScanReport(
        roots=tuple(str(r.path) for r in roots),
        seen=len(found),
        installed=tally.installed,
        changed=tally.changed,
        unchanged=tally.unchanged,
        uninstalled=gone,
        skipped=tuple(tally.skipped),
        collisions=catalog.collisions(k.db),
        dangling=report.dangling,
        cycles=report.cycles,
        embedded=tally.embedded,
        seconds=round(time.perf_counter() - started, 3),
        unproven=unproven,
    )


def _scan_batch(
    k: Kernel, batch: list[Found], known: dict[str, sqlite3.Row], tally: _ScanTally, *, embed: bool
) -> None:
    """Read, embed and record one batch, each step committed: a scan killed midway keeps
    every finished batch (and the embeddings of the one it was in), and a rerun goes on
    from there. Only one batch of file contents is held at a time."""
    loaded, unchanged, skipped = _read_changed(k, batch, known)
    tally.unchanged += unchanged
    tally.skipped += skipped
    if not loaded:
        return
    if embed:
        tally.embedded += _embed_loaded(k, loaded)
    installed, changed = write_versions(k, loaded, known)
    tally.installed += installed
    tally.changed += changed
    if embed:
        k.vectors.sync_index(embed=False)  # the index follows every committed batch


def _walk(k: Kernel, roots: list[Root]) -> tuple[list[Found], list[SkippedFile], set[str]]:
    found: list[Found] = []
    skipped: list[SkippedFile] = []
    truncated: set[str] = set()
    claimed: set[str] = set()
    depth = int(k.config.get("skills.max_depth"))
    limit = int(k.config.get("skills.max_dirs"))
    paths = [r.path for r in roots]
    for root in roots:
        hits, problems = discovery.walk_root(root, depth, limit, paths)
        if any(p.code == "walk_limit" for p in problems):
            truncated.add(str(root.path))
        skipped += [p for p in problems if p.code != "root_missing"]
        for hit in hits:
            if str(hit.path) not in claimed:
                claimed.add(str(hit.path))
                found.append(hit)
    return found, skipped, truncated


def known_by_path(k: Kernel) -> dict[str, sqlite3.Row]:
    with k.db.read() as conn:
        rows = conn.execute(
            "SELECT s.skill_id, s.fs_path, s.root, s.status, s.current_version,"
            " s.served_version, v.content_hash, v.files_hash FROM skills s"
            " JOIN skill_versions v"
            " ON v.skill_id=s.skill_id AND v.version_no=s.current_version"
        ).fetchall()
    return {row["fs_path"]: row for row in rows}


def _read_changed(
    k: Kernel, found: list[Found], known: dict[str, sqlite3.Row]
) -> tuple[list[Loaded], int, list[SkippedFile]]:
    loaded: list[Loaded] = []
    skipped: list[SkippedFile] = []
    unchanged = 0
    for hit in found:
        candidate = read_candidate(hit)
        row = known.get(str(hit.path))
        if isinstance(candidate, SkippedFile):
            skipped.append(_kept(candidate, row))
        elif row is not None and row["status"] != "uninstalled" and _same(row, candidate):
            unchanged += 1
        else:
            result = load(candidate)
            if isinstance(result, SkippedFile):
                skipped.append(_kept(result, row))
            else:
                loaded.append(result)
    return loaded, unchanged, skipped


def write_versions(
    k: Kernel, loaded: list[Loaded], known: dict[str, sqlite3.Row]
) -> tuple[int, int]:
    installed = changed = 0
    for start in range(0, len(loaded), WRITE_BATCH):
        with k.db.write() as conn:
            next_id = (
                int(conn.execute("SELECT coalesce(max(skill_id),0) FROM skills").fetchone()[0]) + 1
            )
            for item in loaded[start : start + WRITE_BATCH]:
                row = known.get(str(item.candidate.found.path))
                if row is None or row["status"] == "uninstalled":
                    sid = next_id if row is None else int(row["skill_id"])
                    next_id += row is None
                    _append_version(k, conn, "skill.installed", sid, item, row)
                    installed += 1
                else:
                    _append_version(k, conn, "skill.changed", int(row["skill_id"]), item, row)
                    changed += 1
    return installed, changed


def _append_version(
    k: Kernel, conn: sqlite3.Connection, type_: str, sid: int, item: Loaded, row: sqlite3.Row | None
) -> None:
    cand, parsed = item.candidate, item.parsed
    version_no = 1 if row is None else int(row["current_version"]) + (0 if _same(row, cand) else 1)
    source_hash = store_blob(conn, cand.data.decode("utf-8", errors="replace"))
    body_hash = store_blob(conn, parsed.body)
    payload: dict[str, Any] = {
        "skill_id": sid,
        "fs_path": str(cand.found.path),
        "dir": str(cand.found.path.parent),
        "root": str(cand.found.root.path),
        "scope": cand.found.root.scope,
        "scope_rank": cand.found.root.scope_rank,
        "root_rank": cand.found.root.root_rank,
        "version_no": version_no,
        "content_hash": cand.content_hash,
        "files_hash": cand.files_hash,
        "source_hash": source_hash,
        "body_hash": body_hash,
        "manifest": manifest_of(parsed),
        "frontmatter": parsed.frontmatter,
        "warnings": [[w.code, w.message] for w in parsed.warnings],
        "findings": [finding_dict(f) for f in item.findings],
        "relations": relation_rows(parsed),
        "lint_version": LINT_VERSION,
    }
    if type_ == "skill.installed":
        payload["status"] = "stable"
    elif row is not None and version_no > int(row["current_version"]):
        base = candidate_base(conn, sid, str(row["status"]), cand.content_hash, cand.files_hash)
        if base:  # a new version of a stable skill proves itself first
            payload["candidate"] = base
    k.append_event(conn, type_, f"skill:{parsed.name}", payload)


def _write_uninstalls(
    k: Kernel, roots: list[Root], truncated: set[str], seen: set[str], known: dict[str, sqlite3.Row]
) -> int:
    scanned = {str(r.path) for r in roots} - truncated
    gone = [
        row
        for path, row in known.items()
        if row["status"] != "uninstalled"
        and row["root"] in scanned
        and path not in seen
        and not os.path.exists(path)
    ]
    if not gone:
        return 0
    with k.db.write() as conn:
        for row in gone:
            name = conn.execute(
                "SELECT name FROM skills WHERE skill_id=?", (row["skill_id"],)
            ).fetchone()[0]
            k.append_event(
                conn,
                "skill.uninstalled",
                f"skill:{name}",
                {
                    "skill_id": int(row["skill_id"]),
                    "fs_path": row["fs_path"],
                    "reason": "SKILL.md no longer exists",
                },
            )
    return len(gone)


def _embed_loaded(k: Kernel, loaded: list[Loaded]) -> int:
    """Embed new surfaces before the write transaction (slow work outside the lock)."""
    texts = {text_hash(t): t for item in loaded for _, t in surfaces(manifest_of(item.parsed))}
    try:
        return k.vectors.embed_missing(texts)
    except EmbeddingError:
        return 0


def relation_rows(parsed: Any) -> list[list[Any]]:
    """A parsed skill's relations as event rows: [type, target], or [type, target, version]
    when pinned."""
    pins = {(kind, target): version for kind, target, version in parsed.pins}
    return [
        [kind, target, pins[(kind, target)]] if (kind, target) in pins else [kind, target]
        for kind, target in parsed.relations
    ]


def scan_batch_size(count: int) -> int:
    """Skills per committed batch for a scan that found `count`."""
    return min(SCAN_BATCH_MAX, max(SCAN_BATCH_MIN, -(-count // 20)))


@dataclasses.dataclass
class _ScanTally:
    """What a scan did so far, batch after batch."""

    skipped: list[SkippedFile]
    installed: int = 0
    changed: int = 0
    unchanged: int = 0
    embedded: int = 0


def _same(row: sqlite3.Row, candidate: Candidate) -> bool:
    return bool(
        row["content_hash"] == candidate.content_hash and row["files_hash"] == candidate.files_hash
    )


def _kept(skip: SkippedFile, row: sqlite3.Row | None) -> SkippedFile:
    if row is None or row["status"] == "uninstalled":
        return skip
    return SkippedFile(skip.path, skip.code, f"{skip.reason}; kept the previous version")


def rescan_for(k: Kernel, path: Path) -> None:
    """Scan the root a written SKILL.md belongs to, keeping its scope and precedence."""
    with k.db.read() as conn:
        row = conn.execute("SELECT root FROM skills WHERE fs_path=?", (str(path),)).fetchone()
    scan_root(k, Path(str(row[0])) if row else path.parent.parent)


def scan_root(k: Kernel, root: Path) -> None:
    """Scan one root: the configured scan when it is configured (keeping its scope and
    precedence), else that root alone."""
    configured = {os.path.realpath(r.path) for r in configured_roots(k)}
    if os.path.realpath(root) in configured:
        scan(k)
    else:
        scan(k, [root])
