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
    pattern_id: str = ""  # the pattern it graduated from
    revalidate: str = ""  # why it needs re-validation (its pattern decayed), else ""
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


# -- sessions and the reasoning DAG (DESIGN §6) ---------------------------------------------

NODE_TYPES: tuple[str, ...] = (
    "HYPOTHESIS",
    "INVESTIGATION",
    "DISCOVERY",
    "PIVOT",
    "DEAD_END",
    "SOLUTION",
    "CONTEXT_LOAD",
)
EDGE_TYPES: tuple[str, ...] = ("informed", "triggered_pivot", "resolved")
NODE_STATUSES: tuple[str, ...] = ("pending", "approved", "rejected", "merged")
SCOPES: tuple[str, ...] = ("PROJECT", "TEAM")


@dataclass(frozen=True)
class ToolUse:
    """A tool call inside an assistant message."""

    id: str
    name: str
    input_text: str  # the tool input as compact JSON, bounded in size
    skill: str = ""  # for the `Skill` tool: the skill it launched


@dataclass(frozen=True)
class ToolResult:
    """A tool result inside a user record."""

    tool_use_id: str
    text: str  # the result content as text, bounded in size
    is_error: bool


@dataclass(frozen=True)
class TranscriptMessage:
    """One message of a session: consecutive records that form one turn part (assistant lines
    sharing `message.id` are merged), located by file and 1-based line range."""

    index: int  # position in the session, 0-based, in file order (main file, then subagents)
    file: str  # relative to the main file's folder: "abc.jsonl", "abc/subagents/agent-x.jsonl"
    line_start: int
    line_end: int
    uuid: str
    role: str  # "user" | "assistant" | "system" | "summary"
    kind: str  # "prompt" | "text" | "tool_use" | "tool_result" | "meta" | "compact" | "system"
    text: str  # the readable text of the message (text blocks joined; tool results' text)
    timestamp: str
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    is_sidechain: bool = False
    agent_id: str = ""
    is_meta: bool = False


@dataclass(frozen=True)
class ParsedSession:
    """A Claude Code session read from its JSONL file(s)."""

    session_id: str
    project: str  # from `cwd` in the records, never from the folder name
    branch: str  # from `gitBranch`
    client_version: str  # from `version`
    started_at: str
    ended_at: str
    messages: tuple[TranscriptMessage, ...]
    turns: int  # user prompts (not tool results, not meta)
    tool_calls: int
    errors: int  # tool results with is_error
    skills_used: tuple[str, ...]  # from Skill tool calls and "Base directory for this skill:"
    skipped: dict[str, int]  # reason -> count of lines skipped
    files: tuple[str, ...]  # absolute paths read (main file first, then subagent files)
    compactions: int = 0


@dataclass(frozen=True)
class ExtractedNode:
    """A node proposed by an extraction tier, before dedup and storage."""

    key: str  # deterministic within the session: "<tier>:<strategy>:<file>:<start>-<end>:<type>"
    type: str  # one of NODE_TYPES
    summary: str  # 1-2 readable sentences
    evidence: str  # a verbatim fragment of the transcript text (before redaction)
    file: str
    line_start: int
    line_end: int
    confidence: float
    tier: str  # "warm" | "cold"
    strategy: str  # e.g. "keywords", "error_resolution", "conclusion", "llm"


@dataclass(frozen=True)
class ExtractedEdge:
    source: str  # ExtractedNode.key
    target: str  # ExtractedNode.key
    type: str  # one of EDGE_TYPES


@dataclass(frozen=True)
class Node:
    """A stored reasoning node."""

    node_id: str
    session_id: str
    project: str
    type: str
    summary: str
    evidence: str  # verbatim, with secrets redacted
    file: str
    line_start: int
    line_end: int
    confidence: float
    scope: str
    tier: str
    status: str
    developer: str
    created_at: str
    decided_at: str = ""
    decided_by: str = ""
    reason: str = ""
    merged_into: str = ""
    retrieval_count: int = 0
    last_retrieved_at: str = ""


@dataclass(frozen=True)
class Edge:
    source: str  # node_id
    target: str  # node_id
    type: str


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    project: str
    branch: str
    client_version: str
    started_at: str
    ended_at: str
    turns: int
    tool_calls: int
    errors: int
    skills_used: tuple[str, ...]
    skipped: dict[str, int]
    node_count: int
    pending_count: int


@dataclass(frozen=True)
class ContextMessage:
    """An archived transcript message shown around a node's evidence."""

    index: int
    file: str
    line_start: int
    line_end: int
    role: str
    kind: str
    text: str
    timestamp: str
    is_error: bool
    in_range: bool  # the node's evidence comes from this message


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    ts: str
    actor: str
    action: str  # approved | rejected | edited | rescoped | reopened
    node_id: str
    before: dict[str, Any]
    after: dict[str, Any]
    reason: str
    batch: str = ""  # one id per decision call (a multi-selection shares it)


@dataclass(frozen=True)
class QueueCounts:
    pending: int
    decided_today: int
    approved: int
    rejected: int


# -- patterns, retrieval and graduation (DESIGN §7) -----------------------------------------

PATTERN_KINDS: tuple[str, ...] = ("pitfall", "strategy", "insight")
PATTERN_KIND_LABELS: dict[str, str] = {
    "pitfall": "Pitfall",
    "strategy": "Diagnostic strategy",
    "insight": "Architectural insight",
}
PATTERN_STATUSES: tuple[str, ...] = ("active", "decayed", "graduated", "dissolved")
#: Lifecycle events an agent may append through the MCP server (DESIGN §4 names).
AGENT_LIFECYCLE_EVENTS: tuple[str, ...] = (
    "proposed",
    "validated",
    "applied",
    "outcome_recorded",
    "revised",
    "deprecated",
    "contradicted",
)


@dataclass(frozen=True)
class Step:
    """One ordered step of a strategy (or a pitfall's resolution), with its evidence."""

    text: str
    node_id: str
    session_id: str
    file: str
    line_start: int
    line_end: int


@dataclass(frozen=True)
class Pattern:
    """Approved reasoning from one or more sessions, consolidated and classified."""

    pattern_id: str
    kind: str  # one of PATTERN_KINDS
    polarity: str  # "key" | "anti" | ""
    title: str
    summary: str
    trigger: str
    steps: tuple[Step, ...]
    resolution: str
    severity: str  # "high" | "medium" | "low" (pitfalls); "" otherwise
    scope: str  # "PROJECT" | "TEAM"
    project: str
    classifier: str  # "rules" | "llm"
    base_confidence: float
    confidence: float  # after decay
    members: int
    sessions: int
    developers: int
    first_seen: str
    last_seen: str
    status: str  # one of PATTERN_STATUSES
    retrieval_count: int = 0
    last_retrieved_at: str = ""
    skill_name: str = ""  # the skill it graduated into


@dataclass(frozen=True)
class Criterion:
    """One graduation criterion with the numbers behind it."""

    name: str  # "sessions" | "retrieval" | "ratified" | "confidence"
    met: bool
    value: float
    threshold: float
    detail: str


@dataclass(frozen=True)
class Citation:
    """Where a line of a drafted SKILL.md comes from."""

    marker: str  # e.g. "[1]"
    node_id: str
    session_id: str
    file: str
    line_start: int
    line_end: int


@dataclass(frozen=True)
class Draft:
    """A SKILL.md drafted from a pattern, waiting for (or past) review."""

    draft_id: str
    pattern_id: str
    name: str
    content: str  # the whole SKILL.md
    citations: tuple[Citation, ...]
    status: str  # "pending" | "approved" | "rejected"
    created_at: str
    created_by: str
    decided_at: str = ""
    decided_by: str = ""
    reason: str = ""
    path: str = ""


@dataclass(frozen=True)
class GraduationCheck:
    """A pattern against the graduation criteria."""

    pattern: Pattern
    criteria: tuple[Criterion, ...]
    eligible: bool
    draft: Draft | None  # its latest draft, if any
    revalidate: bool  # graduated, but the pattern has decayed since


@dataclass(frozen=True)
class MemoryHit:
    """One result of a memory search (a pattern, an approved node or a skill)."""

    rank: int
    kind: str  # "pattern" | "node" | "skill"
    item_id: str
    title: str
    detail: str
    score: float
    pattern_kind: str = ""


@dataclass(frozen=True)
class Retrieval:
    seq: int
    ts: str
    actor: str
    tool: str
    query: str
    project: str
    hits: tuple[tuple[str, str, int, float], ...]  # (kind, id, rank, score)


@dataclass(frozen=True)
class ConsolidationReport:
    nodes: int
    clusters: int
    patterns: int
    created: int
    changed: int
    dissolved: int
    unchanged: int
    method: str  # "exact" | "knn" | "incremental" | "none"
    classifier: str
    decayed: int
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)


# -- skill lifecycle: health (DESIGN §8) -----------------------------------------------------

HEALTH_VERDICTS: tuple[str, ...] = ("DRIFTING", "DEGRADING", "HEALTHY", "IDLE")


@dataclass(frozen=True)
class VersionHealth:
    version_no: int
    runs: int
    failures: int
    failure_rate: float
    verdict: str


@dataclass(frozen=True)
class SkillHealth:
    """A skill's runs in the health window, its verdict, trend and flags."""

    skill_id: int
    name: str
    status: str
    version_no: int
    verdict: str  # one of HEALTH_VERDICTS
    runs: int
    failures: int
    failure_rate: float
    last_run: str
    trend: tuple[float, ...]  # weekly failure rate, oldest first; -1.0 for a week without runs
    versions: tuple[VersionHealth, ...]
    flags: tuple[str, ...]


@dataclass(frozen=True)
class Dependent:
    """A skill that depends on another, and how far away."""

    name: str
    status: str
    relation: str  # how it points at the previous skill on its path
    depth: int
    path: tuple[str, ...]  # this skill ... the skill whose blast radius it is


@dataclass(frozen=True)
class BlastRadius:
    """Everything that relies on a skill."""

    skill: str
    status: str
    dependents: tuple[Dependent, ...]  # transitive, nearest first
    related: tuple[Dependent, ...]  # complements/enables/often_used_with, depth 1
    sessions: tuple[str, ...]  # sessions that used it, newest first
    patterns: tuple[str, ...]  # patterns learned in those sessions
    drafts: tuple[str, ...]  # drafts of those patterns
