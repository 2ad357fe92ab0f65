"""Reading skill folders from disk: hashing, parsing, linting. No database access here;
`store.skills.scan` turns what this finds into events."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from store.files import Refused, read_regular
from store.models import LintFinding, ParsedSkill, ParseFailure, SkippedFile
from store.skills.discovery import Found
from store.skills.lint import lint_skill
from store.skills.parser import MAX_FILE_BYTES, parse_skill_md

BUNDLE_SUFFIXES = frozenset(
    {
        ".md",
        ".txt",
        ".sh",
        ".bash",
        ".zsh",
        ".py",
        ".js",
        ".mjs",
        ".ts",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".ps1",
        ".rb",
        ".pl",
        ".cfg",
        ".ini",
        ".env",
        ".html",
        ".xml",
        ".csv",
        ".sql",
    }
)
BUNDLE_MAX_FILES = 60
BUNDLE_MAX_BYTES = 512 * 1024
BUNDLE_MAX_DEPTH = 3


@dataclass
class Candidate:
    """A SKILL.md read from disk, with the hashes that decide whether anything changed."""

    found: Found
    data: bytes
    content_hash: str
    files_hash: str
    bundle: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Loaded:
    """A candidate that parsed."""

    candidate: Candidate
    parsed: ParsedSkill
    findings: list[LintFinding]


def read_candidate(found: Found) -> Candidate | SkippedFile:
    path = found.path
    try:  # `found.path` is already the real path: a symlink there now was swapped in
        data = read_regular(path, MAX_FILE_BYTES, "SKILL.md", follow=False)
    except Refused as refused:
        return SkippedFile(str(path), refused.code, refused.reason)
    bundle = list(_bundle_texts(path.parent))
    digest = hashlib.sha256()
    for relpath, text in bundle:
        digest.update(relpath.encode("utf-8", "replace") + b"\0")
        digest.update(text.encode("utf-8", "replace") + b"\0")
    return Candidate(found, data, hashlib.sha256(data).hexdigest(), digest.hexdigest(), bundle)


def _bundle_texts(folder: Path) -> Iterator[tuple[str, str]]:
    """Small regular text files beside SKILL.md (scripts, references): linted, never
    executed. Others (too large, binary, not regular) are left out of the hash and lint."""
    count = 0
    for relpath, path in _bundle_files(folder):
        if count >= BUNDLE_MAX_FILES:
            return
        try:
            raw = read_regular(path, BUNDLE_MAX_BYTES, follow=False)
        except Refused:
            continue
        if b"\0" in raw:
            continue
        count += 1
        yield relpath, raw.decode("utf-8", errors="replace")


def _bundle_files(folder: Path) -> Iterator[tuple[str, Path]]:
    stack: list[tuple[Path, int]] = [(folder, 0)]
    seen: set[str] = set()
    while stack:
        current, depth = stack.pop()
        real = os.path.realpath(current)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith(".git") or entry.name == "node_modules":
                continue
            if entry.is_dir(follow_symlinks=False) and depth < BUNDLE_MAX_DEPTH:
                stack.append((path, depth + 1))
            elif (
                entry.is_file(follow_symlinks=False)
                and path.suffix.lower() in BUNDLE_SUFFIXES
                and entry.name not in ("SKILL.md", "skill.md")
            ):
                yield str(path.relative_to(folder)), path


def load(candidate: Candidate) -> Loaded | SkippedFile:
    """Parse and lint a candidate; a parse failure becomes a skip with its reason."""
    folder_name = candidate.found.path.parent.name
    parsed = parse_skill_md(candidate.data, folder_name)
    if isinstance(parsed, ParseFailure):
        return SkippedFile(str(candidate.found.path), parsed.code, parsed.reason)
    text = _decoded(candidate.data)
    findings = lint_skill([("SKILL.md", text), *candidate.bundle], parsed.allowed_tools)
    return Loaded(candidate, parsed, findings)


def _decoded(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def manifest_of(parsed: ParsedSkill) -> dict[str, Any]:
    return {
        "name": parsed.name,
        "declared_name": parsed.declared_name,
        "description": parsed.description,
        "when_to_use": parsed.when_to_use,
        "triggers": list(parsed.triggers),
        "tags": list(parsed.tags),
        "role": parsed.role,
        "version": parsed.version,
        "license": parsed.license,
        "compatibility": parsed.compatibility,
        "allowed_tools": list(parsed.allowed_tools),
    }


def finding_dict(f: LintFinding) -> dict[str, Any]:
    return asdict(f)
