"""`Library`'s methods for the skill lifecycle (DESIGN §8): status changes and agent events,
health, the dependency graph, the retirement runbook, lineage and co-usage proposals. Each
hands the library's kernel to the domain module that does the work."""

from __future__ import annotations

from store.kernel import Kernel
from store.lifecycle import graph, health, lineage, proposals, relate, runbook, skill_events, status
from store.lifecycle.graph import DependencyGraph
from store.models import (
    BlastRadius,
    Dependency,
    Event,
    GraphFocus,
    GraphProblems,
    HealthChange,
    Incident,
    LeftBehind,
    Lineage,
    Outcome,
    RelationProposal,
    Run,
    SharedSession,
    SkillHealth,
    StepPlan,
)


class LifecycleMethods:
    """Status, events, health, graph, runbook, lineage and relation proposals."""

    kernel: Kernel

    def change_status(
        self, key: str | int, event_type: str, reason: str, **extra: str | float
    ) -> None:
        """Record a status event (deprecate, retire, promote, ...) for one skill."""
        status.change(self.kernel, key, event_type, reason, **extra)

    def skill_event(
        self,
        key: str | int,
        event: str,
        *,
        detail: str = "",
        success: bool | None = None,
        version: int | None = None,
        session_id: str = "",
        inferred: bool = False,
        at: str = "",
    ) -> Event:
        """Append one lifecycle event for a skill (`AGENT_LIFECYCLE_EVENTS` names), checked
        (`store.lifecycle.skill_events`)."""
        return skill_events.skill_event(
            self.kernel,
            key,
            event,
            detail=detail,
            success=success,
            version=version,
            session_id=session_id,
            inferred=inferred,
            at=at,
        )

    def record_outcome(
        self,
        key: str | int,
        success: bool,
        *,
        version: int | None = None,
        session_id: str = "",
        detail: str = "",
        at: str = "",
    ) -> Event:
        """One run's outcome for a skill version (the current one by default); `at`: when
        it ran, if earlier than now."""
        return self.skill_event(
            key,
            "outcome_recorded",
            detail=detail,
            success=success,
            version=version,
            session_id=session_id,
            at=at,
        )

    # -- health -----------------------------------------------------------------------------

    def health(
        self, *, apply: bool = False, trend: bool = True
    ) -> tuple[list[SkillHealth], list[str]]:
        """Health per skill and version, worst first; `apply` also demotes drifting skills
        and promotes proven proposed ones (events), returning what changed. `trend=False`
        (without `apply`) skips the weekly trends and the cited-file checks: the verdicts
        in half the time, for a first look."""
        if apply:
            found, changes = health.apply(self.kernel)
            if changes:  # a candidate that took over is served now
                self.kernel.vectors.sync_index(embed=False)
            return found, changes
        return health.compute(self.kernel, check_files=trend, trend=trend), []

    def outcomes(self, key: str | int, limit: int = 20) -> list[Outcome]:
        """A skill's most recent recorded runs, newest first."""
        return health.recent_outcomes(self.kernel, key, limit)

    def health_plan(self) -> list[HealthChange]:
        """What `health(apply=True)` would change now (nothing is changed)."""
        return health.plan(self.kernel)

    def health_trends(self) -> dict[int, tuple[float, ...]]:
        """Weekly failure rates by skill id (what `health(trend=False)` leaves out)."""
        return health.trends(self.kernel)

    def health_file_flags(self) -> dict[int, tuple[str, ...]]:
        """The "missing file" flags by skill id (what `health(trend=False)` leaves out)."""
        return health.file_flags(self.kernel)

    def health_first(self, limit: int = 200) -> tuple[list[SkillHealth], dict[str, int]]:
        """The worst `limit` skills (no trends or flags) and the count of every verdict: a
        first look that costs one grouped scan."""
        return health.first(self.kernel, limit)

    def health_settings(self) -> dict[str, float]:
        """The health window and thresholds (`[health]` in the config)."""
        return health.settings(self.kernel)

    # -- the dependency graph, for the Graph screen and `librarian relate` -------------------

    @property
    def dependency_graph(self) -> DependencyGraph:
        return self.kernel.service(DependencyGraph)

    def blast(self, key: str | int, version: int = 0) -> BlastRadius:
        """Transitive dependents, plus the sessions, patterns and drafts relying on a skill;
        with `version`, that version's (dependents pinned to another one are not hit)."""
        return graph.blast_radius(self.kernel, key, version)

    def relate(
        self, source: str, kind: str, target: str, *, remove: bool = False, version: int = 0
    ) -> str:
        """Add or remove a hand-made relation (checked: no self-relation, no cycle, no stable
        skill on a proposed one); `target@N` or `version` pins the target's version N."""
        return relate.relate(self.kernel, source, kind, target, remove=remove, version=version)

    def dependencies(self, key: str | int) -> list[Dependency]:
        """A skill's outgoing relations with each target's status ("missing": dangling)."""
        return graph.dependencies(self.kernel, key)

    def graph_problems(self) -> GraphProblems:
        """Dangling references, `requires`/`extends` cycles and self-relations."""
        return graph.problems(self.kernel)

    def graph_focus(self, key: str | int, *, whole: bool = True) -> GraphFocus:
        """A skill with its dependencies, blast radius (the nearest 500 dependents listed,
        all counted) and the problems touching it; `whole=False`: only what SQL answers at
        once (the direct dependents), without loading the whole graph."""
        return graph.focus(self.kernel, key, whole=whole)

    def default_graph_skill(self) -> str | None:
        """The deprecated skill with the largest blast radius, else the first by name."""
        return graph.default_focus(self.kernel)

    # -- the retirement runbook (DESIGN §8) --------------------------------------------------

    def start_run(self, key: str | int, reason: str) -> Run:
        """Open a retirement runbook run for a skill (or return its open run)."""
        return runbook.start(self.kernel, key, reason)

    def runs(self, *, status: str | None = None, skill: str | None = None) -> list[Run]:
        return runbook.runs(self.kernel, status=status, skill=skill)

    def run(self, run_id: str) -> Run:
        return runbook.get_run(self.kernel, run_id)

    def open_run(self, key: str | int) -> Run | None:
        return runbook.open_run_for(self.kernel, key)

    def plan_step(self, run_id: str, **inputs: str) -> StepPlan:
        """What the run's next step will do (nothing is changed)."""
        return runbook.plan(self.kernel, run_id, **inputs)

    def run_step(self, run_id: str, step: int, **inputs: str) -> Run:
        """Do the run's next step, atomically with its `runbook.step` event."""
        return runbook.execute(self.kernel, run_id, step, **inputs)

    def abandon_run(self, run_id: str, reason: str, *, restore: bool = True) -> Run:
        """Close an open run unfinished; `restore` puts back the statuses it changed."""
        return runbook.abandon(self.kernel, run_id, reason, restore=restore)

    def left_behind(self, run_id: str) -> LeftBehind:
        """What abandoning an open run would leave behind (nothing is changed)."""
        return runbook.left_behind(self.kernel, run_id)

    def incidents(self, skill: str | None = None) -> list[Incident]:
        return runbook.incidents(self.kernel, skill)

    # -- lineage (versions, status history, provenance) --------------------------------------

    def lineage(self, key: str | int, *, events_limit: int = 20, events_offset: int = 0) -> Lineage:
        """A skill's versions, status history, provenance chain, events, runs and incidents."""
        return lineage.lineage(
            self.kernel, key, events_limit=events_limit, events_offset=events_offset
        )

    def version_diff(self, key: str | int, a: int, b: int) -> str:
        """A bounded unified diff of a skill's SKILL.md between versions `a` and `b`
        (`a` = 0: the whole of `b`)."""
        return lineage.version_diff(self.kernel, key, a, b)

    def skill_events(
        self, key: str | int, *, limit: int = 20, offset: int = 0
    ) -> tuple[tuple[Event, ...], int]:
        """One page of a skill's events, newest first, and how many there are."""
        return lineage.events_page(self.kernel, key, limit, offset)

    def lineage_default(self) -> str | None:
        """The most recently graduated skill, else the most recently changed one."""
        return lineage.default_skill(self.kernel)

    # -- computed relations: co-usage proposals (DESIGN §5) ---------------------------------

    def propose_relations(self, *, since: int | None = None) -> list[RelationProposal]:
        """Propose `often_used_with` for every new open triangle of co-usage (with `since`,
        an event seq: only pairs that sessions ingested after it used together)."""
        return proposals.compute(self.kernel, since=since)

    def relation_proposals(self, status: str | None = "pending") -> list[RelationProposal]:
        """Relation proposals with `status` (None: all), most shared sessions first."""
        return proposals.proposals(self.kernel, status)

    def accept_relation(self, a: str, b: str) -> RelationProposal:
        """Accept a proposal: adds `a often_used_with b` (origin computed)."""
        return proposals.accept(self.kernel, a, b)

    def reject_relation(self, a: str, b: str, reason: str) -> RelationProposal:
        """Reject a proposal (with a reason); it is never proposed again."""
        return proposals.reject(self.kernel, a, b, reason)

    def proposal_sessions(self, a: str, b: str) -> list[SharedSession]:
        """The sessions a proposal's two skills were used in together."""
        return proposals.shared_sessions(self.kernel, a, b)
