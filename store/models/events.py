"""The event log as callers see it: one frozen row per event."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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


class EventType(StrEnum):
    """Every event type the library writes: the one place its names are spelled. A member is
    its name as a `str` (stored, hashed and compared as such); `EVENT_TYPES` says what each
    records. New types are added here and there, nowhere else (a test checks that each
    projection handler's type is listed)."""

    SKILL_INSTALLED = "skill.installed"
    SKILL_CHANGED = "skill.changed"
    SKILL_UNINSTALLED = "skill.uninstalled"
    SKILL_RELINTED = "skill.relinted"
    SKILL_PROPOSED = "skill.proposed"
    SKILL_PROMOTED = "skill.promoted"
    SKILL_DEPRECATED = "skill.deprecated"
    SKILL_RETIRED = "skill.retired"
    SKILL_VALIDATED = "skill.validated"
    SKILL_REVISED = "skill.revised"
    SKILL_CONTRADICTED = "skill.contradicted"
    SKILL_APPLIED = "skill.applied"
    SKILL_OUTCOME_RECORDED = "skill.outcome_recorded"
    SKILL_CANDIDATE_PROMOTED = "skill.candidate_promoted"
    SKILL_CANDIDATE_SET_ASIDE = "skill.candidate_set_aside"
    SKILL_USED = "skill.used"
    SKILL_ENRICHMENT_PROPOSED = "skill.enrichment_proposed"
    SKILL_ENRICHMENT_APPROVED = "skill.enrichment_approved"
    SKILL_ENRICHMENT_REJECTED = "skill.enrichment_rejected"
    RELATION_ADDED = "relation.added"
    RELATION_REMOVED = "relation.removed"
    RELATION_PROPOSED = "relation.proposed"
    RELATION_PROPOSAL_ACCEPTED = "relation.proposal_accepted"
    RELATION_PROPOSAL_REJECTED = "relation.proposal_rejected"
    SESSION_INGESTED = "session.ingested"
    SESSION_COLD_EXTRACTED = "session.cold_extracted"
    NODE_EXTRACTED = "node.extracted"
    NODE_MERGED = "node.merged"
    NODE_SUPERSEDED = "node.superseded"
    NODE_APPROVED = "node.approved"
    NODE_REJECTED = "node.rejected"
    NODE_EDITED = "node.edited"
    NODE_RESCOPED = "node.rescoped"
    NODE_REOPENED = "node.reopened"
    NODE_UNSUPPRESSED = "node.unsuppressed"
    NODE_FORGOTTEN = "node.forgotten"
    PATTERN_CONSOLIDATED = "pattern.consolidated"
    PATTERN_DECAYED = "pattern.decayed"
    PATTERN_DRAFTED = "pattern.drafted"
    PATTERN_DRAFT_REVISED = "pattern.draft_revised"
    PATTERN_DRAFT_REJECTED = "pattern.draft_rejected"
    PATTERN_GRADUATED = "pattern.graduated"
    RETRIEVAL_LOGGED = "retrieval.logged"
    RETRIEVAL_REPEATED = "retrieval.repeated"
    RUNBOOK_STARTED = "runbook.started"
    RUNBOOK_STEP = "runbook.step"
    RUNBOOK_ABANDONED = "runbook.abandoned"
    INCIDENT_RECORDED = "incident.recorded"
    BLOB_ERASED = "blob.erased"
    TEAM_JOINED = "team.joined"
    TEAM_PUSHED = "team.pushed"
    TEAM_PULLED = "team.pulled"
    TEAM_RECEIVED = "team.received"


#: The lifecycle events an agent may append (MCP `record_skill_event`, `librarian
#: skill-event`), by their short names (DESIGN §4): the `skill.` types below, in this order.
AGENT_LIFECYCLE_EVENTS: tuple[str, ...] = tuple(
    t.value.removeprefix("skill.")
    for t in (
        EventType.SKILL_PROPOSED,
        EventType.SKILL_VALIDATED,
        EventType.SKILL_APPLIED,
        EventType.SKILL_OUTCOME_RECORDED,
        EventType.SKILL_REVISED,
        EventType.SKILL_DEPRECATED,
        EventType.SKILL_CONTRADICTED,
    )
)

#: What each event type records.
EVENT_TYPES: dict[EventType, str] = {
    # skills: versions and status (DESIGN §4, §8)
    EventType.SKILL_INSTALLED: "a skill folder found for the first time (version 1, or back"
    " after an uninstall)",
    EventType.SKILL_CHANGED: "a new version of a skill's files; `candidate` when it must prove"
    " itself before it is served",
    EventType.SKILL_UNINSTALLED: "a skill's SKILL.md is gone",
    EventType.SKILL_RELINTED: "an unchanged version's findings from newer lint rules",
    EventType.SKILL_PROPOSED: "a skill (re-)enters as proposed",
    EventType.SKILL_PROMOTED: "a skill becomes stable",
    EventType.SKILL_DEPRECATED: "a skill is no longer preferred (`alert` on a health demotion)",
    EventType.SKILL_RETIRED: "a skill is retired and on the denylist",
    EventType.SKILL_VALIDATED: "a check mark on a skill, no status change",
    EventType.SKILL_REVISED: "an agent says it revised a skill",
    EventType.SKILL_CONTRADICTED: "an agent says a skill was contradicted",
    EventType.SKILL_APPLIED: "an agent applied a skill (a use)",
    EventType.SKILL_OUTCOME_RECORDED: "one run of a skill version, success or failure",
    EventType.SKILL_CANDIDATE_PROMOTED: "a candidate version took over from the served version"
    " after its clean runs",
    EventType.SKILL_CANDIDATE_SET_ASIDE: "a candidate version drifted: set aside, the served"
    " version stays (an alert)",
    EventType.SKILL_USED: "`Skill` calls of a skill seen in a session's transcript (uses)",
    EventType.SKILL_ENRICHMENT_PROPOSED: "a proposed rewrite of a thin skill's discovery"
    " frontmatter",
    EventType.SKILL_ENRICHMENT_APPROVED: "an enrichment approved and written into the SKILL.md",
    EventType.SKILL_ENRICHMENT_REJECTED: "an enrichment rejected, with the reason",
    # relations
    EventType.RELATION_ADDED: "a relation between two skills (`pin`: a required version)",
    EventType.RELATION_REMOVED: "a hand-made relation removed",
    EventType.RELATION_PROPOSED: "a computed often_used_with relation proposed from co-usage",
    EventType.RELATION_PROPOSAL_ACCEPTED: "a computed relation accepted",
    EventType.RELATION_PROPOSAL_REJECTED: "a computed relation rejected",
    # sessions and the reasoning DAG
    EventType.SESSION_INGESTED: "a transcript read into a session",
    EventType.SESSION_COLD_EXTRACTED: "the cold tier (an LLM) read a session",
    EventType.NODE_EXTRACTED: "a reasoning node extracted from a session",
    EventType.NODE_MERGED: "a duplicate node merged into another",
    EventType.NODE_SUPERSEDED: "a warm node superseded by a cold node covering it",
    EventType.NODE_APPROVED: "a reviewer approved a node",
    EventType.NODE_REJECTED: "a reviewer rejected a node",
    EventType.NODE_EDITED: "a reviewer edited a node's summary",
    EventType.NODE_RESCOPED: "a reviewer switched a node's scope",
    EventType.NODE_REOPENED: "a decision undone",
    EventType.NODE_UNSUPPRESSED: "a node below the knowledge bar promoted to the queue",
    EventType.NODE_FORGOTTEN: "a node erased by `forget`",
    # patterns, retrieval, graduation
    EventType.PATTERN_CONSOLIDATED: "patterns clustered from approved nodes",
    EventType.PATTERN_DECAYED: "pattern confidences decayed without retrieval",
    EventType.PATTERN_DRAFTED: "a SKILL.md draft for a pattern that met every criterion",
    EventType.PATTERN_DRAFT_REVISED: "a draft's parameters changed (a literal kept, or replaced"
    " again)",
    EventType.PATTERN_DRAFT_REJECTED: "a draft rejected, with the reason",
    EventType.PATTERN_GRADUATED: "a draft approved and written as a skill",
    EventType.RETRIEVAL_LOGGED: "a retrieval: the query and the returned ids",
    EventType.RETRIEVAL_REPEATED: "repeats of logged retrievals, rolled up",
    # the retirement runbook
    EventType.RUNBOOK_STARTED: "a retirement runbook run opened",
    EventType.RUNBOOK_STEP: "one runbook step done",
    EventType.RUNBOOK_ABANDONED: "a runbook run closed unfinished",
    EventType.INCIDENT_RECORDED: "a retirement's incident: cause, scope, regression case",
    # forgetting
    EventType.BLOB_ERASED: "stored texts erased by `forget`",
    # the team hub (store/team/)
    EventType.TEAM_JOINED: "this library registered with a team hub (its library id and the hub)",
    EventType.TEAM_PUSHED: "a push to the hub committed: the local events it covered",
    EventType.TEAM_PULLED: "a pull from the hub stored: the hub cursor it reached",
    EventType.TEAM_RECEIVED: "an item pulled from the hub, with its origin, author and approver",
}
