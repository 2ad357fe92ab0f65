"""Where skills live, and a bounded, loop-safe walk that finds their SKILL.md files.

Precedence on a name collision (documented in the README): user scope beats project
scope, which beats plugin caches, which beat extra roots; within a scope the root listed
first wins; within one root the path that sorts first wins.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from store.files import Refused, check_regular
from store.models import SkippedFile

SKILL_FILENAMES = ("SKILL.md", "skill.md")
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn"})
USER_CLIENT_DIRS = (".claude", ".agents", ".codex", ".gemini", ".cursor")
PROJECT_CLIENT_DIRS = (".claude", ".agents", ".codex", ".gemini", ".cursor", ".opencode")
#: Folders below `max_depth` looked at (at least) to report the skills the walk would miss.
DEEP_PROBE_DIRS = 2000
SCOPE_RANKS = {"configured": 0, "user": 1, "project": 2, "plugin": 3, "extra": 4}


@dataclass(frozen=True)
class Root:
    """A folder that holds skill folders."""

    path: Path
    scope: str
    root_rank: int

    @property
    def scope_rank(self) -> int:
        return SCOPE_RANKS.get(self.scope, 9)


@dataclass(frozen=True)
class Found:
    """A SKILL.md found under a root."""

    path: Path  # real path of the SKILL.md
    root: Root


def claude_home(home: Path, env: Mapping[str, str]) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR", "").split(",")[0].strip()
    return Path(configured).expanduser() if configured else home / ".claude"


def user_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    claude = claude_home(home, env)
    paths = [claude / "skills"]
    paths += [home / d / "skills" for d in USER_CLIENT_DIRS if d != ".claude"]
    paths.append(home / ".config" / "opencode" / "skills")
    return paths


def project_roots(cwd: Path) -> list[Path]:
    """Client skill folders from cwd up to the git root (cwd alone when not in a repo)."""
    chain: list[Path] = []
    current = cwd.resolve()
    for folder in (current, *current.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            break
    else:
        chain = [current]
    return [folder / d / "skills" for folder in chain for d in PROJECT_CLIENT_DIRS]


def plugin_roots(home: Path, env: Mapping[str, str], max_depth: int = 5) -> list[Path]:
    """`skills/` folders inside the plugin cache (cache/<market>/<plugin>/<version>/skills)."""
    cache = claude_home(home, env) / "plugins" / "cache"
    found: list[Path] = []
    if not cache.is_dir():
        return found
    queue: deque[tuple[Path, int]] = deque([(cache, 0)])
    seen: set[str] = set()
    while queue and len(seen) < 5000:
        folder, depth = queue.popleft()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        for entry in _subdirs(folder):
            if entry.name == "skills":
                found.append(entry)
            elif depth < max_depth and entry.name not in SKIP_DIRS:
                queue.append((entry, depth + 1))
    return sorted(found)


def default_roots(home: Path, cwd: Path, env: Mapping[str, str]) -> list[Root]:
    """Every default root that exists, in precedence order."""
    groups = [
        ("user", user_roots(home, env)),
        ("project", project_roots(cwd)),
        ("plugin", plugin_roots(home, env)),
    ]
    return _existing([(scope, path) for scope, paths in groups for path in paths])


def explicit_roots(paths: list[Path], scope: str) -> list[Root]:
    return _existing([(scope, p.expanduser()) for p in paths], keep_missing=True)


def _existing(candidates: list[tuple[str, Path]], keep_missing: bool = False) -> list[Root]:
    roots: list[Root] = []
    seen: set[str] = set()
    ranks: dict[str, int] = {}
    for scope, path in candidates:
        if not keep_missing and not path.is_dir():
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        ranks[scope] = ranks.get(scope, -1) + 1
        roots.append(Root(Path(real), scope, ranks[scope]))
    return roots


def _subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if _is_dir(e))
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def walk_root(
    root: Root,
    max_depth: int = 6,
    max_dirs: int = 20000,
    roots: Sequence[Path] = (),
) -> tuple[list[Found], list[SkippedFile]]:
    """Breadth-first walk: a folder holding SKILL.md is a skill (not descended further).

    Symlinked folders are followed once each (by real path), so loops end. A SKILL.md that is
    not a regular file, or a symlink to a file outside the skill roots (`roots`, default this
    one) or the skill's own folder, is reported, never read. Below `max_depth` the walk goes on
    only to report the skills it would miss, within a budget of folders of its own.
    """
    found: list[Found] = []
    skipped: list[SkippedFile] = []
    if not root.path.is_dir():
        return found, [SkippedFile(str(root.path), "root_missing", "root folder does not exist")]
    allowed = [os.path.realpath(p) for p in (roots or [root.path])]
    visited: set[str] = set()
    probed = 0
    queue: deque[tuple[Path, int]] = deque([(root.path, 0)])
    while queue:
        folder, depth = queue.popleft()
        real = os.path.realpath(folder)
        if real in visited:
            continue
        deep = depth > max_depth
        if deep:
            if probed >= max(DEEP_PROBE_DIRS, max_dirs // 10):
                continue
            probed += 1
        elif len(visited) - probed >= max_dirs:
            skipped.append(
                SkippedFile(
                    str(folder),
                    "walk_limit",
                    f"walk stopped after {max_dirs} folders under {root.path}",
                )
            )
            break
        visited.add(real)
        entry = _skill_entry(folder)
        if entry is not None:
            if deep:
                skipped.append(_too_deep(entry, root, max_depth))
            else:
                hit = _check_entry(entry, root, [*allowed, real])
                if isinstance(hit, Found):
                    found.append(hit)
                else:
                    skipped.append(hit)
            continue
        queue.extend((sub, depth + 1) for sub in _subdirs(folder) if sub.name not in SKIP_DIRS)
    return found, skipped


def _skill_entry(folder: Path) -> Path | None:
    """The folder's SKILL.md, whatever kind of file it is (a dangling symlink included)."""
    for name in SKILL_FILENAMES:
        candidate = folder / name
        if os.path.lexists(candidate):
            return candidate
    return None


def _check_entry(entry: Path, root: Root, allowed: list[str]) -> Found | SkippedFile:
    """A SKILL.md to read, or why it is not read."""
    try:
        check_regular(os.stat(entry).st_mode)
    except Refused as refused:
        return SkippedFile(str(entry), refused.code, refused.reason)
    except OSError as exc:
        if os.path.islink(entry):
            return SkippedFile(str(entry), "broken_symlink", "symlink to a file that is missing")
        return SkippedFile(str(entry), "unreadable", f"cannot read: {exc.strerror or exc}")
    real = os.path.realpath(entry)
    if os.path.islink(entry) and not any(_inside(real, base) for base in allowed):
        return SkippedFile(
            str(entry), "outside_roots", f"symlink to a file outside the skill roots ({real})"
        )
    return Found(Path(real), root)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _too_deep(entry: Path, root: Root, max_depth: int) -> SkippedFile:
    return SkippedFile(
        str(entry),
        "folder_too_deep",
        f"deeper than {max_depth} folders under {root.path} (skills.max_depth)",
    )
