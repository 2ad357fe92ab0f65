"""The event log as callers see it: one frozen row per event."""

from __future__ import annotations

from dataclasses import dataclass
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


#: Every event type the library writes, with what it records. New types are added here and
#: nowhere else (a test checks that each projection handler's type is listed).
EVENT_TYPES: dict[str, str] = {
    # skills: versions and status (DESIGN §4, §8)
    "skill.installed": "a skill folder found for the first time (version 1, or back after"
    " an uninstall)",
    "skill.changed": "a new version of a skill's files; `candidate` when it must prove itself"
    " before it is served",
    "skill.uninstalled": "a skill's SKILL.md is gone",
    "skill.relinted": "an unchanged version's findings from newer lint rules",
    "skill.proposed": "a skill (re-)enters as proposed",
    "skill.promoted": "a skill becomes stable",
    "skill.deprecated": "a skill is no longer preferred (`alert` on a health demotion)",
    "skill.retired": "a skill is retired and on the denylist",
    "skill.validated": "a check mark on a skill, no status change",
    "skill.revised": "an agent says it revised a skill",
    "skill.contradicted": "an agent says a skill was contradicted",
    "skill.applied": "an agent applied a skill (a use)",
    "skill.outcome_recorded": "one run of a skill version, success or failure",
    "skill.candidate_promoted": "a candidate version took over from the served version after"
    " its clean runs",
    "skill.candidate_set_aside": "a candidate version drifted: set aside, the served version"
    " stays (an alert)",
    "skill.used": "`Skill` calls of a skill seen in a session's transcript (uses)",
    "skill.enrichment_proposed": "a proposed rewrite of a thin skill's discovery frontmatter",
    "skill.enrichment_approved": "an enrichment approved and written into the SKILL.md",
    "skill.enrichment_rejected": "an enrichment rejected, with the reason",
    # relations
    "relation.added": "a relation between two skills (`pin`: a required version)",
    "relation.removed": "a hand-made relation removed",
    "relation.proposed": "a computed often_used_with relation proposed from co-usage",
    "relation.proposal_accepted": "a computed relation accepted",
    "relation.proposal_rejected": "a computed relation rejected",
    # sessions and the reasoning DAG
    "session.ingested": "a transcript read into a session",
    "session.cold_extracted": "the cold tier (an LLM) read a session",
    "node.extracted": "a reasoning node extracted from a session",
    "node.merged": "a duplicate node merged into another",
    "node.superseded": "a warm node superseded by a cold node covering it",
    "node.approved": "a reviewer approved a node",
    "node.rejected": "a reviewer rejected a node",
    "node.edited": "a reviewer edited a node's summary",
    "node.rescoped": "a reviewer switched a node's scope",
    "node.reopened": "a decision undone",
    "node.unsuppressed": "a node below the knowledge bar promoted to the queue",
    "node.forgotten": "a node erased by `forget`",
    # patterns, retrieval, graduation
    "pattern.consolidated": "patterns clustered from approved nodes",
    "pattern.decayed": "pattern confidences decayed without retrieval",
    "pattern.drafted": "a SKILL.md draft for a pattern that met every criterion",
    "pattern.draft_revised": "a draft's parameters changed (a literal kept, or replaced again)",
    "pattern.draft_rejected": "a draft rejected, with the reason",
    "pattern.graduated": "a draft approved and written as a skill",
    "retrieval.logged": "a retrieval: the query and the returned ids",
    "retrieval.repeated": "repeats of logged retrievals, rolled up",
    # the retirement runbook
    "runbook.started": "a retirement runbook run opened",
    "runbook.step": "one runbook step done",
    "runbook.abandoned": "a runbook run closed unfinished",
    "incident.recorded": "a retirement's incident: cause, scope, regression case",
    # forgetting
    "blob.erased": "stored texts erased by `forget`",
    # the team hub (store/team/)
    "team.joined": "this library registered with a team hub (its library id and the hub)",
    "team.pushed": "a push to the hub committed: the local events it covered",
    "team.pulled": "a pull from the hub stored: the hub cursor it reached",
    "team.received": "an item pulled from the hub, with its origin, author and approver",
}
