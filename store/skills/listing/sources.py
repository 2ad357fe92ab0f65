"""The skills Claude Code would list in a folder: managed, personal, project (the folder and its
parents up to the git root) and the enabled plugins' skills, with Claude Code's precedence —
managed over personal over project; plugin skills are `plugin:skill` and never collide
(code.claude.com/docs/en/skills, "Where skills live").

Skills the library has catalogued come from its rows (fast, with usage); a root the library
never scanned is read from disk for the report only (nothing is recorded). A skill is a
direct child of its root (`skills/<name>/SKILL.md`, or under `synced/`)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.files import Refused, read_regular
from store.models import ParseFailure
from store.skills.discovery import Root, claude_home, walk_root
from store.skills.listing.settings import ClaudeSettings, plugin_enabled
from store.skills.parser import MAX_FILE_BYTES, parse_skill_md

SCOPE_RANK = {"managed": 0, "personal": 1, "project": 2, "plugin": 3}
#: Claude Code's managed skills folder on Linux and on macOS.
MANAGED_SKILLS = (
    Path("/etc/claude-code/.claude/skills"),
    Path("/Library/Application Support/ClaudeCode/.claude/skills"),
)
_TRUE = frozenset({"true", "yes", "on", "1"})


@dataclass(frozen=True)
class ListingRoot:
    path: Path  # real path
    scope: str
    plugin: str = ""  # the plugin's name, for `plugin:skill`
    disabled: str = ""  # why the whole root is not loaded ("" when it is)


@dataclass(frozen=True)
class Source:
    """A skill file under a listing root, with what the listing needs from it."""

    command: str  # the key Claude Code resolves: the folder name, or `plugin:folder`
    name: str  # as listed: the declared name (display), `plugin:folder` for plugins
    scope: str
    path: str
    description: str
    when_to_use: str
    hidden: str  # why the model never sees it ("" when it may)
    in_library: bool
    note: str = ""  # e.g. retired in the library but still installed


def listing_roots(
    folder: Path,
    home: Path,
    env: Mapping[str, str],
    claude: ClaudeSettings,
    managed: Sequence[Path] = MANAGED_SKILLS,
) -> list[ListingRoot]:
    """Claude Code's skill roots for a session started in `folder`, in precedence order."""
    roots = [ListingRoot(Path(os.path.realpath(p)), "managed") for p in managed if p.is_dir()]
    personal = claude_home(home, env) / "skills"
    if personal.is_dir():
        roots.append(ListingRoot(Path(os.path.realpath(personal)), "personal"))
    for candidate in _project_chain(folder):
        path = candidate / ".claude" / "skills"
        if path.is_dir():
            roots.append(ListingRoot(Path(os.path.realpath(path)), "project"))
    roots += _plugin_roots(claude_home(home, env) / "plugins" / "cache", claude)
    seen: set[Path] = set()
    unique = []
    for root in roots:
        if root.path not in seen:
            seen.add(root.path)
            unique.append(root)
    return unique


def _project_chain(folder: Path) -> list[Path]:
    current = folder.resolve()
    chain = []
    for candidate in (current, *current.parents):
        chain.append(candidate)
        if (candidate / ".git").exists():
            return chain
    return [current]


def _plugin_roots(cache: Path, claude: ClaudeSettings) -> list[ListingRoot]:
    """`cache/<market>/<plugin>/<version>/skills`, the newest version of each plugin."""
    roots: list[ListingRoot] = []
    for market in _subdirs(cache):
        for plugin_dir in _subdirs(market):
            versions = [v for v in _subdirs(plugin_dir) if (v / "skills").is_dir()]
            if not versions:
                continue
            newest = max(versions, key=lambda v: _version_key(v.name))
            name = _plugin_name(newest) or plugin_dir.name
            off = not plugin_enabled(claude, name, market.name)
            reason = f"plugin {name}@{market.name} is disabled in enabledPlugins" if off else ""
            real = Path(os.path.realpath(newest / "skills"))
            roots.append(ListingRoot(real, "plugin", name, reason))
    return roots


def _subdirs(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=True))
    except OSError:
        return []


def _version_key(name: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in re.split(r"[.\-+]", name))


def _plugin_name(version_dir: Path) -> str:
    try:
        data = json.loads(read_regular(version_dir / ".claude-plugin" / "plugin.json", 65536))
    except (Refused, ValueError, RecursionError):
        return ""
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and re.fullmatch(r"[\w.-]{1,64}", name) else ""


# -- the skills under the roots ------------------------------------------------------------------


def sources(
    conn: sqlite3.Connection, roots: Sequence[ListingRoot]
) -> tuple[list[Source], list[str]]:
    """Every skill under `roots` (catalogued ones from the library, others from disk) and
    the files that could not be read."""
    found: list[Source] = []
    unread: list[str] = []
    catalogued = _catalogued_roots(conn)
    for root in roots:
        if str(root.path) in catalogued:
            found += _from_library(conn, root)
        else:
            more, problems = _from_disk(root)
            found += more
            unread += problems
    return found, unread


def _catalogued_roots(conn: sqlite3.Connection) -> set[str]:
    return {
        r[0] for r in conn.execute("SELECT DISTINCT root FROM skills WHERE status != 'uninstalled'")
    }


def _from_library(conn: sqlite3.Connection, root: ListingRoot) -> list[Source]:
    rows = conn.execute(
        "SELECT s.fs_path, s.status, v.name, v.description, v.when_to_use, v.frontmatter"
        " FROM skills s JOIN skill_versions v ON v.skill_id = s.skill_id"
        " AND v.version_no = s.current_version WHERE s.root = ? AND s.status != 'uninstalled'"
        " ORDER BY s.fs_path",
        (str(root.path),),
    ).fetchall()
    found = []
    for fs_path, status, name, description, when, frontmatter in rows:
        folder = _direct_child(root.path, Path(fs_path))
        if folder is None:
            continue
        try:
            meta = json.loads(frontmatter)
        except ValueError:
            meta = {}
        note = "retired in the library, still installed" if status == "retired" else ""
        found.append(_source(root, folder, fs_path, name, description, when, meta, True, note))
    return found


def _from_disk(root: ListingRoot) -> tuple[list[Source], list[str]]:
    hits, problems = walk_root(Root(root.path, "extra", 0), max_depth=2)
    found: list[Source] = []
    unread = [f"{p.path}: {p.reason}" for p in problems if p.code != "root_missing"]
    for hit in hits:
        folder = _direct_child(root.path, hit.path)
        if folder is None:
            continue
        try:
            data = read_regular(hit.path, MAX_FILE_BYTES, "SKILL.md")
        except Refused as refused:
            unread.append(f"{hit.path}: {refused.reason}")
            continue
        parsed = parse_skill_md(data, folder)
        if isinstance(parsed, ParseFailure):
            unread.append(f"{hit.path}: {parsed.reason}")
            continue
        found.append(
            _source(root, folder, str(hit.path), parsed.name, parsed.description,
                    parsed.when_to_use, parsed.frontmatter, False, "")
        )  # fmt: skip
    return found, unread


def _direct_child(root: Path, skill_md: Path) -> str | None:
    """The skill's folder name when it sits where Claude Code looks (else None)."""
    folder = skill_md.parent
    if folder.parent == root:
        return folder.name
    if folder.parent.name == "synced" and folder.parent.parent == root:
        return folder.name
    return None


def _source(
    root: ListingRoot,
    folder: str,
    path: str,
    name: str,
    description: str,
    when: str,
    meta: dict[str, Any],
    in_library: bool,
    note: str,
) -> Source:
    command = f"{root.plugin}:{folder}" if root.plugin else folder
    listed = command if root.plugin else (name or folder)
    hidden = root.disabled or (
        "disable-model-invocation: only you can invoke it, so it is not listed"
        if _true(meta.get("disable-model-invocation"))
        else ""
    )
    return Source(command, listed, root.scope, path, description, when, hidden, in_library, note)


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str | int) and str(value).strip().lower() in _TRUE)


# -- usage ---------------------------------------------------------------------------------------


def usage(conn: sqlite3.Connection, names: Iterable[str]) -> tuple[dict[str, tuple[int, str]], int]:
    """Sessions that invoked each name (and the last time), and how many sessions there are."""
    wanted = sorted(set(names))
    counts: dict[str, tuple[int, str]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT u.skill_name, count(DISTINCT u.session_id), coalesce(max(se.started_at), '')"
            f" FROM skill_uses u LEFT JOIN sessions se ON se.session_id = u.session_id"
            f" WHERE u.skill_name IN ({marks}) GROUP BY u.skill_name",
            chunk,
        ).fetchall()
        counts.update({r[0]: (int(r[1]), str(r[2])) for r in rows})
    (sessions,) = conn.execute("SELECT count(*) FROM sessions").fetchone()
    return counts, int(sessions)
