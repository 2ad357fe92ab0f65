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
NODE_STATUSES: tuple[str, ...] = (
    "pending",
    "approved",
    "rejected",
    "merged",
    "forgotten",
    "suppressed",
    "superseded",
)
#: What a projection (and so every screen) shows in place of text `forget` erased.
ERASED = "[erased]"
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
    labels: tuple[str, ...] = ()  # each of `files` as messages and node keys name it
    # the main file each of `files` was read for, when a session has several (else empty)
    sources: tuple[str, ...] = ()


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
    strategy: str  # e.g. "episode", "keywords", "conclusion", "correction", "llm"
    #: How much a teammate learns from the summary (0..1, `store.ingest.bar`).
    informativeness: float = 0.0
    #: Why the node is kept out of the pending queue ("" when it passes the bar).
    suppressed: str = ""


@dataclass(frozen=True)
class ExtractedEdge:
    source: str  # ExtractedNode.key
    target: str  # ExtractedNode.key
    type: str  # one of EDGE_TYPES


@dataclass(frozen=True)
class PlannedSession:
    """A session the cold tier would send, and what it would cost (local estimate)."""

    session_id: str
    path: str  # the main file it is read from
    windows: int  # one call each
    input_tokens: int  # prompt and window text over its calls
    #: Why it is sent: "new" (the cold tier never read it), "changed" (the transcript grew
    #: since), "prompt" (read with another model or prompt version), "again" (`--again`).
    reason: str


@dataclass(frozen=True)
class UpgradePlan:
    """What `ingest --llm` would send before it sends anything: a cost-free count."""

    model: str
    prompt_version: str
    sessions: tuple[PlannedSession, ...]
    already: int  # sessions this model and prompt version already read: not sent
    output_tokens: int  # the output cap of one call
    problems: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        return sum(s.windows for s in self.sessions)

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.sessions)

    @property
    def max_output_tokens(self) -> int:
        return self.calls * self.output_tokens


@dataclass(frozen=True)
class UpgradeReport:
    """What the cold tier did over sessions (`ingest --llm`)."""

    model: str
    prompt_version: str
    sessions: int  # sessions sent
    already: int  # sessions already read by this model and prompt version: not sent
    calls: int  # windows sent, one call each
    nodes_added: int  # new nodes (pending or suppressed)
    superseded: int  # pending or suppressed warm nodes a cold node replaced
    merged: int  # cold nodes recorded as duplicates (of a reviewed node, or by dedup)
    suppressed: int  # new cold nodes below the knowledge bar
    dropped: int  # replies not kept: malformed, unknown type, evidence not in the window
    withheld: int  # not added: they would bring forgotten content back
    problems: tuple[str, ...] = ()


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
    #: How much a teammate learns from the summary (0..1, `store.ingest.bar`).
    informativeness: float = 0.0
    #: Why the knowledge bar kept it out of the queue ("" when it passed).
    suppressed_reason: str = ""
    #: The cold-tier node that restated it better (status `superseded`; "" otherwise).
    superseded_by: str = ""


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
    #: Below the knowledge bar: kept out of the pending queue, never lost.
    suppressed: int = 0


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
    flaw: str = ""  # why it does not pass the pattern bar and is never served ("" = it does)

    @property
    def served(self) -> bool:
        """Passes the pattern bar: agents may be given it."""
        return not self.flaw


@dataclass(frozen=True)
class Criterion:
    """One graduation criterion with the numbers behind it."""

    name: str  # "bar" | "sessions" | "retrieval" | "ratified" | "confidence"
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
    """One logged retrieval: what a tool was asked, what it returned, how often."""

    seq: int
    ts: str
    actor: str
    tool: str
    query: str
    project: str
    hits: tuple[tuple[str, str, int, float], ...]  # (kind, id, rank, score)
    calls: int = 1  # with the identical calls rolled up into it
    last_at: str = ""  # when the last of them was made ("" when there were none)


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


# -- the retirement runbook (DESIGN §8) ------------------------------------------------------

#: The seven steps: (number, id, title).
RUNBOOK_STEPS: tuple[tuple[int, str, str], ...] = (
    (1, "quarantine", "Quarantine"),
    (2, "blast", "Blast radius"),
    (3, "demote", "Demote dependents"),
    (4, "audit", "Audit recent invocations"),
    (5, "repair", "Repair or replace"),
    (6, "repromote", "Re-promote cautiously"),
    (7, "incident", "Record the incident"),
)


@dataclass(frozen=True)
class RunStep:
    """One step of a runbook run: done (with what it did) or still to do."""

    step: int
    name: str
    title: str
    done: bool
    summary: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    actor: str = ""
    ts: str = ""


@dataclass(frozen=True)
class Run:
    """A retirement runbook run for one skill; `step` is the last step done (0..7)."""

    run_id: str
    skill_id: int
    skill_name: str
    status: str  # open, done, abandoned
    step: int
    reason: str
    actor: str
    version_no: int  # the skill's version when the run started
    successor: str
    started_at: str
    updated_at: str
    steps: tuple[RunStep, ...]

    @property
    def next_step(self) -> int | None:
        return self.step + 1 if self.status == "open" and self.step < 7 else None


@dataclass(frozen=True)
class StepPlan:
    """What a runbook step will do, shown before it is done."""

    run_id: str
    step: int
    name: str
    title: str
    actions: tuple[str, ...]
    waiting: str = ""  # why it cannot run yet (an input it needs), "" when it can


@dataclass(frozen=True)
class Incident:
    """The record a retirement ends with: cause, scope and the regression case."""

    incident_id: str
    run_id: str
    skill_id: int
    skill_name: str
    version_no: int
    cause: str
    scope: str
    regression: str
    successor: str
    actor: str
    recorded_at: str


# -- the dependency graph: a skill's dependencies and the graph's problems -------------------


@dataclass(frozen=True)
class Dependency:
    """One outgoing relation of a skill, with where its target stands."""

    name: str  # the target skill
    relation: str  # one of RELATION_TYPES
    origins: tuple[str, ...]  # "extracted" | "manual" | "computed" (one relation, maybe twice)
    status: str  # the target's status, or "missing" when no installed skill has that name

    @property
    def manual(self) -> bool:
        return "manual" in self.origins

    @property
    def missing(self) -> bool:
        return self.status == "missing"


@dataclass(frozen=True)
class GraphProblems:
    """What is wrong with the dependency graph: references to skills that do not exist,
    `requires`/`extends` cycles (one cycle per knot of mutually dependent skills, starting at
    its smallest name, with the knot's members) and skills that require themselves."""

    dangling: tuple[Relation, ...]
    cycles: tuple[tuple[str, ...], ...]
    knots: tuple[tuple[str, ...], ...]  # the members of each cycle's knot, sorted
    self_loops: tuple[Relation, ...]

    @property
    def count(self) -> int:
        return len(self.dangling) + len(self.cycles) + len(self.self_loops)

    def touching(self, name: str) -> GraphProblems:
        """Only the problems that involve skill `name`."""
        kept = [i for i, knot in enumerate(self.knots) if name in knot]
        return GraphProblems(
            dangling=tuple(r for r in self.dangling if name in (r.source, r.target)),
            cycles=tuple(self.cycles[i] for i in kept),
            knots=tuple(self.knots[i] for i in kept),
            self_loops=tuple(r for r in self.self_loops if r.source == name),
        )


@dataclass(frozen=True)
class GraphFocus:
    """One skill in the middle of the dependency graph: what it depends on, what depends on
    it (the blast radius) and the graph problems that touch it."""

    skill_id: int
    name: str
    status: str
    version_no: int
    description: str
    dependencies: tuple[Dependency, ...]
    radius: BlastRadius  # its dependents: the nearest ones (a screen lists a few hundred)
    dependent_count: int  # every transitive dependent, listed or not
    direct_count: int  # those that require or extend it directly
    problems: GraphProblems
    complete: bool = True  # False: only the direct dependents are known yet


# -- health: recent outcomes and the changes `health --apply` would make ---------------------


@dataclass(frozen=True)
class Outcome:
    """One recorded run of a skill version."""

    seq: int
    ts: str
    actor: str
    version_no: int
    success: bool
    session_id: str
    detail: str
    inferred: bool


@dataclass(frozen=True)
class HealthChange:
    """A status change `health --apply` makes: demote a drifting skill, promote a proven one."""

    skill_id: int
    name: str
    event_type: str  # "skill.deprecated" | "skill.promoted"
    status: str  # the status it has now
    reason: str

    @property
    def target(self) -> str:
        return "deprecated" if self.event_type == "skill.deprecated" else "stable"

    def describe(self) -> str:
        verb = "deprecated" if self.target == "deprecated" else "promoted to stable"
        return f"{self.name}: {verb} ({self.reason})"


# -- lineage: a skill's versions, status history and where it came from ----------------------


@dataclass(frozen=True)
class LineageVersion:
    """One version of a skill's SKILL.md (a stable version is never changed in place)."""

    version_no: int
    created_at: str
    event: str  # "skill.installed" | "skill.changed"
    event_seq: int
    actor: str
    content_hash: str
    source_hash: str  # the SKILL.md text, in `blobs`
    description: str
    version_label: str  # the frontmatter's own `version`, if any
    warning_count: int
    finding_count: int
    max_severity: str
    statuses: tuple[str, ...]  # the statuses the skill went through while this was current


@dataclass(frozen=True)
class StatusChange:
    """One event of a skill's life (installed, changed, a status event, uninstalled)."""

    seq: int
    ts: str
    actor: str
    event: str
    from_status: str  # "" before the first install
    to_status: str
    reason: str
    version_no: int  # the version current after the event
    alert: str = ""  # e.g. "drifting" on a health demotion


@dataclass(frozen=True)
class ProvenanceSession:
    """A session in a skill's provenance: where its pattern's nodes (or its uses) came from."""

    session_id: str
    project: str
    started_at: str
    title: str  # the first prompt, one line ("" when the session is not in the library)
    nodes: tuple[Node, ...]  # the nodes of the chain from this session
    known: bool = True  # False: cited by the SKILL.md, but never ingested here


@dataclass(frozen=True)
class Provenance:
    """sessions → nodes → pattern → draft → skill for a graduated skill; the sessions that
    used it (and where it was installed from) for any other."""

    origin: str  # "graduated" | "installed"
    note: str  # one sentence for people
    pattern: Pattern | None
    draft: Draft | None
    sessions: tuple[ProvenanceSession, ...]  # the pattern's (and the SKILL.md's) sessions
    missing_nodes: tuple[str, ...]  # node ids the SKILL.md cites that the library lacks
    metadata: dict[str, str]  # the SKILL.md's `librarian-*` / `generated-by` metadata
    used_in: tuple[ProvenanceSession, ...]  # sessions that used the skill, newest first
    used_in_total: int


@dataclass(frozen=True)
class Lineage:
    """A skill's whole story, for `librarian lineage` and the Lineage screen."""

    skill_id: int
    name: str
    status: str
    fs_path: str
    current_version: int
    versions: tuple[LineageVersion, ...]  # newest first
    history: tuple[StatusChange, ...]  # newest first
    provenance: Provenance
    events: tuple[Event, ...]  # newest first, one page
    event_total: int
    events_offset: int
    runs: tuple[Run, ...]  # retirement runbook runs, newest first
    incidents: tuple[Incident, ...]
    superseded_by: tuple[str, ...]  # successors (`X supersedes this`, or named by a run)
    supersedes: tuple[str, ...]  # skills this one supersedes


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


# -- forgetting (store/forget.py) ----------------------------------------------------------------


@dataclass(frozen=True)
class ErasureItem:
    """One piece of text `forget` erases (or would): what it is and where it lives."""

    what: str  # "message" | "summary" | "evidence" | "reason" | "pattern" | "draft" | ...
    where: str  # e.g. "session s-one #3 (lines 7–8)", "node n_… (DEAD_END)"
    preview: str  # a short one-line excerpt for the person confirming (never recorded)


@dataclass(frozen=True)
class ForgetPlan:
    """What `librarian forget` erases for a node, a session or a text."""

    scope: str  # "node" | "session" | "text"
    target: str  # the node or session id ("" for a text: the text itself is never kept)
    items: tuple[ErasureItem, ...]
    nodes: tuple[str, ...]  # nodes forgotten: out of the queue, patterns and search
    sessions: tuple[str, ...]  # sessions whose archived messages lose text
    patterns: tuple[str, ...]  # patterns dissolved (their texts quoted a forgotten node)
    skills: tuple[str, ...]  # SKILL.md files that may quote it: files, left to their owner
    redactions: int  # events written before schema 9 whose inline text is redacted in place

    @property
    def empty(self) -> bool:
        return not self.items and not self.nodes


@dataclass(frozen=True)
class ForgetReport:
    """What one `forget` did."""

    plan: ForgetPlan
    seq: int  # the `blob.erased` event (0 when there was nothing to erase)
    blobs: int  # blobs now tombstones
    redacted: int  # old events redacted in place
    embeddings: int  # cached vectors of forgotten texts deleted
    scrubbed: bool  # WAL checkpointed and truncated, database vacuumed
    notes: tuple[str, ...] = ()
