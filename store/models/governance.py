"""Governance (issue 16): candidate versions, version pins, the write gate of drafts, uses and
retrievals that count, enrichment proposals for thin skills."""

from __future__ import annotations

from dataclasses import dataclass, field

#: What becomes of a candidate version.
CANDIDATE_STATUSES: tuple[str, ...] = ("candidate", "promoted", "set_aside", "replaced")


@dataclass(frozen=True)
class CandidateVersion:
    """A new version of a stable skill proving itself while the served version stays.

    `status` is "candidate" while it proves itself, then "promoted" (it took over),
    "set_aside" (it drifted; the served version stayed) or "replaced" (a newer version came
    before it was decided)."""

    skill_id: int
    name: str
    version_no: int
    base_version: int  # the version served while it proves itself
    status: str
    opened_at: str
    decided_at: str = ""
    reason: str = ""
    alert: str = ""
    runs: int = 0
    failures: int = 0
    streak: int = 0  # successes in a row, newest last (a failure starts again)
    needed: int = 5  # `health.promote_after`
    verdict: str = "IDLE"  # over all its runs, with the health thresholds
    waiting: str = ""  # why it cannot take over yet although its runs would let it

    @property
    def open(self) -> bool:
        return self.status == "candidate"

    def describe(self) -> str:
        """One line for people: where the candidate stands."""
        head = f"v{self.version_no} (serving v{self.base_version})"
        if self.status == "promoted":
            return f"v{self.version_no} took over from v{self.base_version}: {self.reason}"
        if self.status == "set_aside":
            return f"v{self.version_no} set aside: {self.reason}"
        if self.status == "replaced":
            return f"v{self.version_no} replaced before it was decided ({self.reason})"
        fails = f", {self.failures} failed" if self.failures else ""
        text = f"candidate {head}: {self.streak} of {self.needed} clean runs in a row{fails}"
        return f"{text}; {self.waiting}" if self.waiting else text


@dataclass(frozen=True)
class Pin:
    """A dependent that requires (or extends) a skill at a fixed version."""

    dependent: str
    relation: str  # "requires" | "extends"
    target: str
    version_no: int  # the pinned version
    origin: str  # "extracted" (metadata `requires: name@N`) | "manual" (`relate`)
    target_served: int = 0  # the version the target serves now (0: unknown target)
    exists: bool = True  # the pinned version is on record


@dataclass(frozen=True)
class UnprovenRequirement:
    """A stable skill that depends on a proposed one (refused by `relate`, warned by scan)."""

    source: str
    relation: str
    target: str
    target_status: str
    reason: str


@dataclass(frozen=True)
class Replacement:
    """A transient literal of a draft turned into a named parameter (or kept on purpose)."""

    parameter: str  # e.g. "{host}"
    kind: str  # ticket, date, commit, path, home, user, host, port, token, email
    literal: str  # the text it replaced
    count: int  # occurrences replaced
    meaning: str  # what the parameter stands for, for the Parameters section
    kept: bool = False  # the reviewer kept the literal


@dataclass(frozen=True)
class RegressionCase:
    """A case a skill must not break: the situation, the wrong move, the right move."""

    situation: str
    wrong: str
    expected: str
    source: str = ""  # where it came from: "node n_…", "incident inc-…", "references/…"

    def line(self) -> str:
        return (
            f"When {_soft(self.situation)}: not {_soft(self.wrong)}; instead {_soft(self.expected)}"
        )


@dataclass(frozen=True)
class RetrievalCount:
    """One retrieval that returned a pattern, and whether graduation counted it."""

    seq: int
    ts: str
    tool: str
    query: str
    rank: int
    calls: int
    counted: bool
    why: str  # "an agent asked (mcp.search)", "injected by the library (session-start)", …


@dataclass(frozen=True)
class ThinSkill:
    """A skill whose frontmatter says too little for an agent to pick it."""

    skill_id: int
    name: str
    version_no: int
    description: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Enrichment:
    """A proposed rewrite of a thin skill's discovery frontmatter, waiting for review."""

    proposal_id: str
    skill_id: int
    skill_name: str
    version_no: int  # the version it was proposed against
    source: str  # "llm:<model>" | "rules"
    fields: dict[str, str]  # description, when_to_use, triggers, tags (proposed values)
    before: str  # the SKILL.md it was proposed against
    after: str  # the SKILL.md approval would write
    reasons: tuple[str, ...]  # why the skill is thin, and what the proposal rests on
    status: str  # pending | approved | rejected | stale
    created_at: str
    created_by: str
    decided_at: str = ""
    decided_by: str = ""
    reason: str = ""
    diff: str = field(default="", compare=False)


def _soft(text: str) -> str:
    """A sentence's first word in lower case inside another sentence ("Raising the pool" →
    "raising the pool"), unless it is a name or an acronym ("PgBouncer", "API")."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text
