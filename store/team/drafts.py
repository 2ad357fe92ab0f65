"""Approved team drafts become skills under the team skills root (`team.skills_root`,
default `~/.claude/skills`, where agents find them; point it at a folder your team shares).

After a pull, every draft the team approved that is not installed here yet is written
(atomically; an existing file with other content is left alone and reported), the root is
scanned by the caller's `scan`, and the skill is recorded as `proposed`: another library's
draft with `skill.proposed`, this library's own draft also with `pattern.graduated`. It runs
after every pull, so a draft whose file could not be written once is tried again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from store.config import Config
from store.models.events import EventType
from store.projections import blob_text
from store.team.local import TeamDeps
from store.team.validate import skill_md_problem


def team_root(config: Config) -> Path:
    """Where approved team drafts are written."""
    configured = str(config.get("team.skills_root", "") or "")
    return Path(configured).expanduser() if configured else Path.home() / ".claude" / "skills"


def install(deps: TeamDeps, scan: Callable[[Path], object]) -> tuple[list[str], list[str]]:
    """Write and install the drafts the team approved: (installed skill names, problems)."""
    root = team_root(deps.config)
    with deps.db.read() as conn:
        rows = conn.execute(
            "SELECT d.draft_id, d.pattern_id, d.name, d.content_hash, t.own, d.status,"
            " t.decided_by FROM team_items t JOIN drafts d ON d.draft_id = t.item_id"
            " WHERE t.kind='draft' AND t.status='approved' AND (t.own=1 AND d.status='pending'"
            " OR t.own=0 AND d.status='approved' AND NOT EXISTS (SELECT 1 FROM skills s"
            " WHERE s.fs_path = d.path AND s.status != 'uninstalled')) ORDER BY d.draft_id"
        ).fetchall()
        todo = [(*r[:3], blob_text(conn, r[3]), bool(r[4]), r[6]) for r in rows]
    written: list[tuple[str, str, str, Path, bool, str]] = []
    problems: list[str] = []
    for draft_id, pattern_id, name, content, own, approver in todo:
        target = root / name / "SKILL.md"
        why = skill_md_problem(content, name) or _write(target, content)
        if why:
            problems.append(f"team draft {draft_id} ({name}): {why}; not installed")
        else:
            written.append((draft_id, pattern_id, name, target, own, approver))
    if not written:
        return [], problems
    scan(root)
    installed: list[str] = []
    with deps.db.write() as conn:
        for draft_id, pattern_id, name, target, own, approver in written:
            row = conn.execute(
                "SELECT skill_id FROM skills WHERE fs_path IN (?, ?)",
                (str(target), os.path.realpath(target)),
            ).fetchone()
            if row is None:
                problems.append(f"team draft {draft_id} ({name}): written but did not load")
                continue
            if own:
                deps.append_event(
                    conn,
                    EventType.PATTERN_GRADUATED,
                    f"pattern:{pattern_id}",
                    {
                        "draft_id": draft_id,
                        "pattern_id": pattern_id,
                        "skill_name": name,
                        "path": str(target),
                    },
                )
            deps.append_event(
                conn,
                EventType.SKILL_PROPOSED,
                f"skill:{name}",
                {
                    "skill_id": int(row[0]),
                    "reason": f"team draft {draft_id} approved by {approver} in the team hub",
                },
            )
            installed.append(name)
    return installed, problems


def _write(target: Path, content: str) -> str | None:
    """Write a SKILL.md atomically; why it was not written (None: it was, or was there)."""
    if target.exists():
        try:
            same = target.read_text(encoding="utf-8") == content
        except (OSError, UnicodeDecodeError):
            same = False
        return None if same else f"{target} already exists with other content"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".SKILL.md.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        return f"cannot write {target}: {exc.strerror or exc}"
    return None
