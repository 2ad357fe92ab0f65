"""Plain, frozen data classes: the only part of `store` that widgets may import."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Relation types a skill can declare in `metadata` (source `extracted`) or that the
#: librarian computes (`often_used_with`, source `computed`).
RELATION_TYPES: tuple[str, ...] = (
    "requires",
    "extends",
    "complements",
    "enables",
    "supersedes",
    "often_used_with",
)

SKILL_STATUSES: tuple[str, ...] = ("proposed", "stable", "deprecated", "retired", "uninstalled")


@dataclass(frozen=True)
class SpecWarning:
    """A deviation from the Agent Skills spec; the skill still loads."""

    code: str
    message: str


@dataclass(frozen=True)
class LintFinding:
    """A security-lint hit in a skill's files. Shown to people, never acted on."""

    rule: str
    severity: str  # "high" | "medium" | "low"
    message: str
    file: str  # path relative to the skill folder, e.g. "SKILL.md" or "scripts/install.sh"
    line: int  # 1-based; 0 when the finding is about the whole file
    excerpt: str  # short, single-line, control characters already neutralised


@dataclass(frozen=True)
class ParsedSkill:
    """What a SKILL.md says, after lenient parsing."""

    name: str  # the effective name (declared name if usable, else the folder name)
    declared_name: str | None
    description: str
    frontmatter: dict[str, Any]  # JSON-safe copy of the YAML mapping
    body: str
    when_to_use: str = ""
    triggers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    role: str = ""
    version: str = ""
    license: str = ""
    compatibility: str = ""
    allowed_tools: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()  # (relation type, target skill name)
    warnings: tuple[SpecWarning, ...] = ()


@dataclass(frozen=True)
class ParseFailure:
    """Why a file was skipped. `code` is stable (for tests and --json); `reason` is for people."""

    code: str
    reason: str


@dataclass(frozen=True)
class SkippedFile:
    path: str
    code: str
    reason: str


@dataclass(frozen=True)
class Relation:
    source: str  # skill name
    type: str
    target: str  # skill name (may be dangling)
    origin: str = "extracted"  # "extracted" | "computed" | "manual"
    dangling: bool = False


@dataclass(frozen=True)
class SkillSummary:
    """One row of the skills list."""

    skill_id: int
    name: str
    status: str
    root: str
    scope: str
    description: str
    warning_count: int
    finding_count: int
    max_severity: str  # "" when no findings
    version_no: int
    shadowed: bool
    fs_path: str


@dataclass(frozen=True)
class SkillVersion:
    version_no: int
    content_hash: str
    created_at: str
    event: str  # the event type that produced it


@dataclass(frozen=True)
class SkillDetail:
    """Everything the detail pane and `librarian show` need about one skill."""

    summary: SkillSummary
    manifest: dict[str, Any]
    frontmatter: dict[str, Any]
    body: str
    warnings: tuple[SpecWarning, ...]
    findings: tuple[LintFinding, ...]
    relations: tuple[Relation, ...]
    dependents: tuple[Relation, ...]
    versions: tuple[SkillVersion, ...]
    shadowed_by: str = ""
    cycles: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Suggestion:
    """One ranked skill for a task context, with the evidence behind its rank."""

    skill_id: int
    name: str
    status: str
    description: str
    score: float
    lexical: float
    dense: float
    importance: float
    matched_terms: tuple[str, ...] = ()
    reasons: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class ScanReport:
    roots: tuple[str, ...]
    seen: int
    installed: int
    changed: int
    unchanged: int
    uninstalled: int
    skipped: tuple[SkippedFile, ...]
    collisions: tuple[tuple[str, tuple[str, ...]], ...]  # (name, paths; the first one wins)
    dangling: tuple[Relation, ...]
    cycles: tuple[tuple[str, ...], ...]
    embedded: int
    seconds: float


@dataclass(frozen=True)
class Event:
    """One row of the append-only, hash-chained event log."""

    seq: int
    ts: str
    type: str
    actor: str
    subject: str
    payload: dict[str, Any]
    prev_hash: str
    hash: str
