"""The skill lifecycle: health verdicts and outcomes, blast radius, the retirement runbook,
the dependency graph and a skill's lineage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from store.models.events import Event, EventType
from store.models.governance import CandidateVersion, Pin, UnprovenRequirement
from store.models.patterns import Draft, Pattern
from store.models.sessions import Node
from store.models.skills import Relation

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
    served_version: int = 0  # the version judged: the one served (0: the current one)
    candidate: CandidateVersion | None = None  # the latest candidate (open or decided)


@dataclass(frozen=True)
class Dependent:
    """A skill that depends on another, and how far away."""

    name: str
    status: str
    relation: str  # how it points at the previous skill on its path
    depth: int
    path: tuple[str, ...]  # this skill ... the skill whose blast radius it is
    pin: int = 0  # the version of the skill it pins (direct dependents only; 0: none)


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
    version_no: int = 0  # the version whose blast radius it is (0: the whole skill)
    pinned: tuple[Dependent, ...] = ()  # direct dependents pinned to another version: not hit
    pins: tuple[Pin, ...] = ()  # who is pinned to which version of the skill


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
class RunChange:
    """A skill whose status a runbook run changed, and whether abandoning can put it back."""

    skill_id: int
    name: str
    before: str  # its status before the run
    after: str  # the status the run left it in
    now: str  # its status now (differs from `after` when something changed it since)

    @property
    def restorable(self) -> bool:
        return self.now == self.after and self.before != self.after and self.now != "uninstalled"


@dataclass(frozen=True)
class LeftBehind:
    """What abandoning an open run leaves behind (shown before it is abandoned)."""

    run_id: str
    skill_name: str
    step: int  # the last step done
    changes: tuple[RunChange, ...]  # status changes of the run, in the order it made them
    other: tuple[str, ...]  # what stays whatever is chosen (the recorded steps)
    #: Relations the run added that are still there (source id, source, type, target): the
    #: successor step 5 named. Restoring removes them with the statuses.
    relations: tuple[tuple[int, str, str, str], ...] = ()

    @property
    def restorable(self) -> tuple[RunChange, ...]:
        return tuple(c for c in self.changes if c.restorable)


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
    pin: int = 0  # the target's version it is pinned to (0: follows the served version)

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
    unproven: tuple[UnprovenRequirement, ...] = ()  # stable skills on proposed ones

    @property
    def count(self) -> int:
        return len(self.dangling) + len(self.cycles) + len(self.self_loops) + len(self.unproven)

    def touching(self, name: str) -> GraphProblems:
        """Only the problems that involve skill `name`."""
        kept = [i for i, knot in enumerate(self.knots) if name in knot]
        return GraphProblems(
            dangling=tuple(r for r in self.dangling if name in (r.source, r.target)),
            cycles=tuple(self.cycles[i] for i in kept),
            knots=tuple(self.knots[i] for i in kept),
            self_loops=tuple(r for r in self.self_loops if r.source == name),
            unproven=tuple(u for u in self.unproven if name in (u.source, u.target)),
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
    """A change `health --apply` makes: demote a drifting skill, promote a proven one, or
    decide a candidate version (it takes over, or it is set aside)."""

    skill_id: int
    name: str
    event_type: str  # skill.deprecated | skill.promoted | skill.candidate_promoted | _set_aside
    status: str  # the status it has now
    reason: str
    version_no: int = 0  # the candidate version, for the candidate events

    @property
    def target(self) -> str:
        return {
            EventType.SKILL_DEPRECATED.value: "deprecated",
            EventType.SKILL_CANDIDATE_PROMOTED.value: f"v{self.version_no} served",
            EventType.SKILL_CANDIDATE_SET_ASIDE.value: f"v{self.version_no} set aside",
        }.get(self.event_type, "stable")

    def describe(self) -> str:
        verb = {
            EventType.SKILL_DEPRECATED.value: "deprecated",
            EventType.SKILL_PROMOTED.value: "promoted to stable",
            EventType.SKILL_CANDIDATE_PROMOTED.value: f"candidate v{self.version_no} takes over",
            EventType.SKILL_CANDIDATE_SET_ASIDE.value: f"candidate v{self.version_no} set aside",
        }.get(self.event_type, self.event_type)
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
    served: bool = False  # the version the librarian serves now
    fate: str = ""  # as a candidate: "candidate", "candidate, took over", "…, set aside"


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
    served_version: int = 0  # the version the librarian serves (a candidate is not)
    candidates: tuple[CandidateVersion, ...] = ()  # newest first
