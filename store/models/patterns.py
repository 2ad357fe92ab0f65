"""Patterns, memory retrieval and graduation: consolidated patterns, their drafts and
graduation criteria, memory hits and logged retrievals."""

from __future__ import annotations

from dataclasses import dataclass, field

from store.models.governance import RegressionCase, Replacement, RetrievalCount

# -- patterns, retrieval and graduation (DESIGN §7) -----------------------------------------

PATTERN_KINDS: tuple[str, ...] = ("pitfall", "strategy", "insight")
PATTERN_KIND_LABELS: dict[str, str] = {
    "pitfall": "Pitfall",
    "strategy": "Diagnostic strategy",
    "insight": "Architectural insight",
}
PATTERN_STATUSES: tuple[str, ...] = ("active", "decayed", "graduated", "dissolved")


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
    literal: str = ""  # the draft before its transient literals became parameters
    parameters: tuple[Replacement, ...] = ()  # each literal found, replaced or kept
    regressions: tuple[RegressionCase, ...] = ()  # the cases it must not break


@dataclass(frozen=True)
class GraduationCheck:
    """A pattern against the graduation criteria."""

    pattern: Pattern
    criteria: tuple[Criterion, ...]
    eligible: bool
    draft: Draft | None  # its latest draft, if any
    revalidate: bool  # graduated, but the pattern has decayed since
    retrievals: tuple[RetrievalCount, ...] = ()  # what returned it, and which counted


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
