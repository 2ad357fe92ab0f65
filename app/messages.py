"""Messages the app's workers post back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from store.models import (
    ConsolidationReport,
    ContextMessage,
    Draft,
    Edge,
    GraduationCheck,
    Node,
    Pattern,
    QueueCounts,
    RelationProposal,
    ScanReport,
    SessionSummary,
    SharedSession,
    SkillDetail,
    SkillSummary,
    Suggestion,
    TeamStatus,
)
from store.models.governance import Enrichment
from store.models.listing import ListingReport
from store.models.overlap import OverlapPair


@dataclass
class SkillsLoaded(Message):
    rows: list[SkillSummary]
    total: int


@dataclass
class DetailLoaded(Message):
    detail: SkillDetail | None


@dataclass
class OverlapsLoaded(Message):
    """The skills `skill_id` overlaps with (routing confuses them, or exact duplicates)."""

    skill_id: int
    pairs: list[OverlapPair]


@dataclass
class BudgetLoaded(Message):
    """Claude Code's skill listing for the working folder (None with `error` on failure)."""

    report: ListingReport | None
    error: str = ""


@dataclass
class SuggestionsReady(Message):
    context: str
    suggestions: list[Suggestion]
    seconds: float


@dataclass
class CatalogChanged(Message):
    """A scan (manual or by the file watcher) changed the catalog."""

    report: ScanReport


@dataclass
class ModelReady(Message):
    seconds: float
    ok: bool
    error: str = ""


# -- review queue and sessions ----------------------------------------------------------------


@dataclass
class NodesLoaded(Message):
    """A page of the review queue, for the filters it was asked with."""

    rows: list[Node]
    total: int  # rows matching the filters (more than `rows` when the list was capped)
    focus: str | None = None  # put the cursor on this node when it is in `rows`
    complete: bool = True  # False: a first page, the rest is still to be read
    #: Grouped by session: when each session started, by id (None: not grouped).
    sessions: dict[str, str] | None = None
    #: When each session started, by id, grouped or not (the `age` column's moment).
    starts: dict[str, str] | None = None


@dataclass
class NodeContextLoaded(Message):
    node_id: str
    messages: list[ContextMessage]


@dataclass
class NodesDecided(Message):
    """A decision was recorded; `nodes` are the nodes as they are now."""

    action: str
    nodes: list[Node]


@dataclass
class DecisionFailed(Message):
    """A decision was refused or failed (nothing was written)."""

    action: str
    node_ids: list[str]
    error: str  # empty when the failure is reported as a worker error


@dataclass
class DecisionUndone(Message):
    """The reviewer's last decision was reverted; `nodes` are the nodes as they are now."""

    nodes: list[Node]


@dataclass
class QueueCountsLoaded(Message):
    counts: QueueCounts


@dataclass
class ProjectsLoaded(Message):
    projects: list[str]


@dataclass
class SessionsLoaded(Message):
    rows: list[SessionSummary]


@dataclass
class SessionGraphLoaded(Message):
    session_id: str
    nodes: list[Node]
    edges: list[Edge]


@dataclass
class NodeOpenRequested(Message):
    """Somebody asked to see a node in the review queue."""

    node: Node


@dataclass
class NodeGraphRequested(Message):
    """Somebody asked to see a node in its session's reasoning graph."""

    node: Node


# -- patterns and drafts ----------------------------------------------------------------------


@dataclass
class PatternsLoaded(Message):
    """Every live pattern (their graduation checks follow in `PatternChecksLoaded`)."""

    patterns: list[Pattern]


@dataclass
class PatternChecksLoaded(Message):
    checks: list[GraduationCheck]


@dataclass
class PatternDetailLoaded(Message):
    """One pattern's fresh check and its member nodes."""

    check: GraduationCheck
    nodes: list[Node]


@dataclass
class DraftsLoaded(Message):
    """The drafts waiting for review, with the check of the pattern each came from."""

    drafts: list[Draft]
    checks: dict[str, GraduationCheck]  # by pattern id


@dataclass
class DraftWritten(Message):
    """A draft was created ("draft"), approved ("approve") or rejected ("reject")."""

    action: str
    draft: Draft


@dataclass
class DraftFailed(Message):
    """Drafting, approving or rejecting was refused or failed (nothing was written)."""

    action: str
    draft_id: str  # the pattern id when drafting
    error: str  # empty when the failure is reported as a worker error


@dataclass
class Consolidated(Message):
    """A consolidation finished (`report` None: it failed, reported as a worker error)."""

    report: ConsolidationReport | None


@dataclass
class FirstScreenChosen(Message):
    """Which screen the app opens on (the review queue when anything is pending)."""

    mode: str


# -- lifecycle screens (graph 4, health 5, lineage 7, runbook 8) ------------------------------


@dataclass
class SkillScreenRequested(Message):
    """Open a lifecycle screen (`mode`: graph, health, lineage or runbook) on one skill.

    Any screen may post it; the app switches to the screen and calls its `show_skill`."""

    mode: str
    skill: str


@dataclass
class SkillShowRequested(Message):
    """Open the Skills screen on one skill (by id). Any screen may post it."""

    skill_id: int


@dataclass
class SessionOpenRequested(Message):
    """Open the Sessions screen on one session's reasoning DAG. Any screen may post it."""

    session_id: str


@dataclass
class PatternOpenRequested(Message):
    """Open the Patterns screen on one pattern. Any screen may post it."""

    pattern_id: str


# -- computed relation proposals (the review queue's third list) -------------------------------


@dataclass
class ProposalsLoaded(Message):
    """The relation proposals waiting for review."""

    proposals: list[RelationProposal]


@dataclass
class ProposalSessionsLoaded(Message):
    """The sessions a proposal's two skills were used in together."""

    pair: tuple[str, str]
    sessions: list[SharedSession]


@dataclass
class ProposalDecided(Message):
    """A proposal was accepted ("accept") or rejected ("reject")."""

    action: str
    proposal: RelationProposal


@dataclass
class ProposalFailed(Message):
    """Accepting or rejecting a proposal was refused or failed (nothing was written)."""

    action: str
    pair: tuple[str, str]
    error: str  # empty when the failure is reported as a worker error


# -- the team hub ------------------------------------------------------------------------------


@dataclass
class TeamStatusLoaded(Message):
    """Where this library stands with its hub."""

    status: TeamStatus


class TeamProgress(Message):
    """How far a running push or pull is; a newer one replaces an older one still queued."""

    def __init__(self, verb: str, done: int, total: int) -> None:
        super().__init__()
        self.verb = verb
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, TeamProgress)


@dataclass
class TeamSyncFinished(Message):
    """A push, pull or verify ended: what it says, and whether it went well."""

    verb: str
    lines: tuple[str, ...]
    ok: bool


@dataclass
class EnrichmentsLoaded(Message):
    """The enrichment proposals waiting for review."""

    proposals: list[Enrichment]


@dataclass
class EnrichmentDecided(Message):
    """An enrichment was approved (its SKILL.md written: "approve") or rejected ("reject")."""

    action: str
    proposal: Enrichment


@dataclass
class EnrichmentFailed(Message):
    """Approving or rejecting an enrichment was refused or failed (nothing was written)."""

    action: str
    proposal_id: str
    error: str  # empty when the failure is reported as a worker error
