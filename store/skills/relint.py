"""Lint unchanged skills again when the lint rules are newer than their findings.

Findings are recorded with each version (`skill.installed` / `skill.changed`), so a skill
whose files never change would keep the findings of the rules it was first scanned with.
After a scan, every current version whose findings come from an older `LINT_VERSION` is read
again; if its files are still the ones recorded, its new findings are a `skill.relinted` event
(the version and its number stay: its files did not change). A skill whose files changed is
left to the next scan, which records a new version anyway."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.db import Database
from store.models import SkippedFile
from store.models.events import EventType
from store.skills.discovery import SCOPE_RANKS, Found, Root
from store.skills.lint import LINT_VERSION
from store.skills.reconcile import finding_dict, load, read_candidate

AppendEvent = Callable[[sqlite3.Connection, str, str, dict[str, Any]], object]
#: Skills relinted per write transaction.
BATCH = 200


def stale(db: Database) -> list[tuple[int, int, str, str, str, str, str, str]]:
    """(skill id, version, SKILL.md, root, scope, content hash, files hash, name) of the
    current versions linted with older rules."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT s.skill_id, s.current_version, s.fs_path, s.root, s.scope, v.content_hash,"
            " v.files_hash, s.name FROM skills s JOIN skill_versions v ON v.skill_id = s.skill_id"
            " AND v.version_no = s.current_version WHERE s.status != 'uninstalled'"
            " AND v.lint_version < ? ORDER BY s.skill_id",
            (LINT_VERSION,),
        ).fetchall()
    return [tuple(r) for r in rows]


def relint(db: Database, append_event: AppendEvent) -> int:
    """Lint the stale versions again and record their findings; how many were recorded."""
    todo = stale(db)
    done = 0
    for start in range(0, len(todo), BATCH):
        found = [item for row in todo[start : start + BATCH] if (item := _findings(row))]
        if not found:
            continue
        with db.write() as conn:
            for sid, version, name, findings in found:
                payload = {
                    "skill_id": sid,
                    "version_no": version,
                    "lint_version": LINT_VERSION,
                    "findings": findings,
                }
                append_event(conn, EventType.SKILL_RELINTED, f"skill:{name}", payload)
        done += len(found)
    return done


def _findings(
    row: tuple[int, int, str, str, str, str, str, str],
) -> tuple[int, int, str, list[dict[str, Any]]] | None:
    sid, version, fs_path, root, scope, content_hash, files_hash, name = row
    found = Found(Path(fs_path), Root(Path(root), scope, SCOPE_RANKS.get(scope, 9)))
    candidate = read_candidate(found)
    if isinstance(candidate, SkippedFile):
        return None
    if (candidate.content_hash, candidate.files_hash) != (content_hash, files_hash):
        return None  # changed since: the next scan records a new version
    loaded = load(candidate)
    if isinstance(loaded, SkippedFile):
        return None
    return sid, version, name, [finding_dict(f) for f in loaded.findings]
