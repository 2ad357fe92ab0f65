"""Skills and the catalog: parsed SKILL.md files, lint findings, relations, the skills list and
detail, suggestions, scan reports and proposed co-usage relations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.models.files import SkippedFile
from store.models.governance import CandidateVersion, UnprovenRequirement

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

#: The relation types that make one skill depend on another (the rest only relate them).
DEPENDENCY_TYPES: tuple[str, ...] = ("requires", "extends")

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
    #: "illustrative" when the finding sits in a clearly illustrative block of a Markdown file
    #: (an attack shown to be recognised): still shown, its severity lowered to low.
    context: str = ""


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
    pins: tuple[tuple[str, str, int], ...] = ()  # pinned ones: (type, target, version)
    warnings: tuple[SpecWarning, ...] = ()


@dataclass(frozen=True)
class Relation:
    source: str  # skill name
    type: str
    target: str  # skill name (may be dangling)
    origin: str = "extracted"  # "extracted" | "computed" | "manual"
    dangling: bool = False
    pin: int = 0  # the target's version it is pinned to (0: follows the served version)


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
    pattern_id: str = ""  # the pattern it graduated from
    revalidate: str = ""  # why it needs re-validation (its pattern decayed), else ""
    cycles: tuple[tuple[str, ...], ...] = ()
    served_version: int = 0  # the version the librarian serves (0: the current one)
    candidate: CandidateVersion | None = None  # the latest candidate version, if any
    unproven: tuple[UnprovenRequirement, ...] = ()  # stable, yet on a proposed skill


#: A suggestion's `relevance` (the cosine of the task with the skill's card or use text)
#: below which no skill fits the task well. Calibrated on the demo's skills (off-topic tasks
#: such as "bake sourdough bread" or "knit a wool scarf": best 0.10-0.13; the demo's real
#: tasks: 0.38-0.85) and on `store/eval` over the 217 corpus skills (0.25 leaves 24 of 434
#: real queries below, 5 of 40 unrelated chat prompts above).
FITS_WELL = 0.25


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
    #: How well the task fits the skill, on an absolute scale (the cosine of the task with
    #: the skill's card or use text, as the prompt hook judges): `score` ranks, relative to
    #: the other hits; this one says whether any fits (`FITS_WELL`).
    relevance: float = 0.0
    health: str = ""  # DRIFTING or DEGRADING when its recent runs fail (ranked lower), else ""


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
    unproven: tuple[UnprovenRequirement, ...] = ()  # stable skills requiring proposed ones


# -- computed relations (DESIGN §5: open triangles of co-usage) --------------------------------


@dataclass(frozen=True)
class RelationProposal:
    """Two skills used together in enough sessions, with no direct relation: a proposed
    `often_used_with` waiting for (or past) review. The pair is in canonical order."""

    source_name: str
    target_name: str
    shared: int  # sessions that used both, when proposed
    sessions: tuple[str, ...]  # some of them (newest first, at most 20)
    status: str  # "pending" | "accepted" | "rejected"
    reason: str
    proposed_at: str
    decided_at: str = ""
    decided_by: str = ""
    source_status: str = ""  # the skills' statuses now ("missing" when not in the catalog)
    target_status: str = ""


@dataclass(frozen=True)
class SharedSession:
    """A session two skills were used in, as a proposal's evidence."""

    session_id: str
    project: str
    branch: str
    started_at: str
    title: str  # the session's first prompt, one line
