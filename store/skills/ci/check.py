"""Find the skills under some paths and check each one: spec warnings and security findings
as `Issue`s on one severity scale, with a fingerprint that survives the finding moving to
another line."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from store.models import LintFinding, SkippedFile, SpecWarning
from store.skills.discovery import SKILL_FILENAMES, Found, Root, walk_root
from store.skills.reconcile import Loaded, load, read_candidate

#: Severities from the most to the least severe; `--fail-on` takes one of them.
SEVERITIES: tuple[str, ...] = ("high", "medium", "low", "info")
RANK = {name: len(SEVERITIES) - i for i, name in enumerate(SEVERITIES)}  # high 4 … info 1

#: Spec warning code -> severity. `license_missing` is information: the spec makes `license`
#: optional. Medium: what other clients refuse or silently cut (an invalid or unsafe name, a
#: description past 1,024 characters, duplicate keys). Everything else is low.
SPEC_SEVERITY: dict[str, str] = {
    "license_missing": "info",
    "name_invalid": "medium",
    "name_unsafe": "medium",
    "name_too_long": "medium",
    "description_too_long": "medium",
    "yaml_duplicate_keys": "medium",
}
SPEC_PREFIX = "spec."


def spec_severity(code: str) -> str:
    return SPEC_SEVERITY.get(code, "low")


@dataclass(frozen=True)
class Issue:
    """One finding about one skill, as CI reports it."""

    rule: str  # a lint rule id, or "spec.<warning code>", or "spec.skipped"
    severity: str  # high | medium | low | info
    message: str
    path: str  # the file, relative to the base folder when inside it (always with "/")
    line: int  # 1-based; 0 for the whole file
    skill: str  # the skill's name ("" when it did not parse)
    excerpt: str = ""
    context: str = ""  # "illustrative" for findings in an illustrative example
    fingerprint: str = ""

    @property
    def kind(self) -> str:
        return "spec" if self.rule.startswith(SPEC_PREFIX) else "security"


@dataclass
class CheckResult:
    """Every issue found, the skill files checked, and what could not be read."""

    issues: list[Issue] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)  # SKILL.md paths, as reported
    unreadable: list[SkippedFile] = field(default_factory=list)


def fingerprint(rule: str, path: str, evidence: str) -> str:
    """Stable across line moves: the rule, the file and the finding's words."""
    text = "\0".join((rule, path, " ".join(evidence.split())))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def find_skills(paths: Sequence[Path]) -> tuple[list[Found], list[SkippedFile]]:
    """SKILL.md files under `paths` (a SKILL.md, a skill folder, or a folder of skills)."""
    found: list[Found] = []
    skipped: list[SkippedFile] = []
    seen: set[str] = set()
    for rank, given in enumerate(paths):
        path = given.expanduser()
        if path.name in SKILL_FILENAMES and not path.is_dir():
            path = path.parent
        if not path.exists():
            skipped.append(SkippedFile(str(given), "missing", "no such file or folder"))
            continue
        hits, problems = walk_root(Root(path.resolve(), "extra", rank), max_depth=8)
        skipped += [p for p in problems if p.code != "root_missing"]
        for hit in hits:
            if str(hit.path) not in seen:
                seen.add(str(hit.path))
                found.append(hit)
    return found, skipped


def check_paths(paths: Sequence[Path], base: Path) -> CheckResult:
    """Check every skill under `paths`; report paths relative to `base` where possible."""
    found, skipped = find_skills(paths)
    result = CheckResult(unreadable=skipped)
    for hit in sorted(found, key=lambda f: str(f.path)):
        result.skills.append(_shown(hit.path, base))
        result.issues += check_skill(hit, base)
    return result


def check_skill(hit: Found, base: Path) -> list[Issue]:
    """The issues of one skill (its SKILL.md and the text files beside it)."""
    skill_md = _shown(hit.path, base)
    candidate = read_candidate(hit)
    loaded = load(candidate) if not isinstance(candidate, SkippedFile) else candidate
    if isinstance(loaded, SkippedFile):
        message = f"not loaded: {loaded.reason} ({loaded.code})"
        return [_issue(f"{SPEC_PREFIX}skipped", "medium", message, skill_md, 0, "", message)]
    return list(_issues(loaded, skill_md, hit.path.parent, base))


def _issues(loaded: Loaded, skill_md: str, folder: Path, base: Path) -> Iterable[Issue]:
    name = loaded.parsed.name
    for warning in loaded.parsed.warnings:
        yield _spec_issue(warning, skill_md, name)
    for finding in loaded.findings:
        yield _lint_issue(finding, folder, base, name)


def _spec_issue(warning: SpecWarning, skill_md: str, name: str) -> Issue:
    rule = f"{SPEC_PREFIX}{warning.code}"
    severity = spec_severity(warning.code)
    return _issue(rule, severity, warning.message, skill_md, 0, name, warning.message)


def _lint_issue(f: LintFinding, folder: Path, base: Path, name: str) -> Issue:
    path = _shown(folder / f.file, base)
    issue = _issue(f.rule, f.severity, f.message, path, f.line, name, f.excerpt or f.message)
    return replace(issue, excerpt=f.excerpt, context=f.context)


def _issue(
    rule: str, severity: str, message: str, path: str, line: int, skill: str, evidence: str
) -> Issue:
    return Issue(
        rule, severity, message, path, line, skill, "", "", fingerprint(rule, path, evidence)
    )


def _shown(path: Path, base: Path) -> str:
    """`path` relative to `base` when inside it, else absolute; always with `/`."""
    try:
        relative = os.path.relpath(path, base)
    except ValueError:
        return path.as_posix()
    return Path(relative).as_posix() if not relative.startswith("..") else path.as_posix()


def at_or_above(severity: str, threshold: str) -> bool:
    return RANK.get(severity, 0) >= RANK.get(threshold, 99)
