"""The tools `librarian mcp` serves, each a thin wrapper over one `Library` method: their
argument and result types (the JSON schemas agents see, built by the SDK from these
annotations) and the functions behind them. Each docstring is the tool's description.

The MCP SDK takes over a second to import: it is imported inside the functions that need it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field
from typing_extensions import TypedDict

from store.errors import LibrarianError
from store.models.events import AGENT_LIFECYCLE_EVENTS

if TYPE_CHECKING:
    from store.library import Library
    from store.models import Event, MemoryHit, Suggestion

T = TypeVar("T")

# -- argument types (the JSON schema agents see) ----------------------------------------------

Query = Annotated[
    str,
    Field(min_length=1, max_length=8000, description="What you are looking for, in plain words."),
]
OptionalQuery = Annotated[
    str,
    Field(
        max_length=8000,
        description="Rank pitfalls by relevance to this text; empty: most severe first.",
    ),
]
Problem = Annotated[
    str,
    Field(
        min_length=1,
        max_length=8000,
        description="The problem or symptom, e.g. an error message and what you tried.",
    ),
]
Context = Annotated[
    str,
    Field(
        min_length=1,
        max_length=8000,
        description="The task at hand (what the user asked, files or tools involved).",
    ),
]
Project = Annotated[
    str,
    Field(
        max_length=4096,
        description=(
            "Project path to scope results to (team-wide patterns always apply)."
            " Empty: derived from `cwd`, else all projects."
        ),
    ),
]
Cwd = Annotated[
    str,
    Field(
        max_length=4096,
        description="Your working directory; mapped to a known project when `project` is empty.",
    ),
]
Limit = Annotated[
    int | None,
    Field(strict=True, ge=1, le=50, description="At most this many results (default: config)."),
]
SkillKey = Annotated[
    str,
    Field(min_length=1, max_length=1000, description="The skill's name (as in its SKILL.md)."),
]
Version = Annotated[
    int | None,
    Field(
        strict=True,
        ge=1,
        description="The skill version you used; default: its current version.",
    ),
]
SessionId = Annotated[
    str, Field(max_length=200, description="Your session id, if you know it (for evidence).")
]
Detail = Annotated[str, Field(max_length=4000, description="A short note: what happened, why.")]
Success = Annotated[bool, Field(strict=True, description="True if the skill helped, else false.")]
if TYPE_CHECKING:
    LifecycleEvent = str
else:  # the registry's names, as a `Literal` so that the tool's schema lists them (`enum`)
    LifecycleEvent = Literal[AGENT_LIFECYCLE_EVENTS]

# -- result types (the output schema agents see) ----------------------------------------------


class Hit(TypedDict):
    """One memory hit: a pattern, an approved reasoning node or a skill."""

    rank: int
    kind: str
    id: str
    title: str
    detail: str
    score: float
    pattern_kind: str


class Hits(TypedDict):
    query: str
    project: str
    hits: list[Hit]


class SkillHit(TypedDict):
    """One suggested skill, with the evidence behind its rank."""

    rank: int
    name: str
    status: str
    description: str
    score: float
    lexical: float
    dense: float
    importance: float
    matched_terms: list[str]
    reasons: list[str]


class SkillHits(TypedDict):
    context: str
    project: str
    skills: list[SkillHit]


class Recorded(TypedDict):
    """The event appended to the library's log."""

    seq: int
    ts: str
    type: str
    skill: str
    version: int | None
    success: bool | None


# -- the tools ------------------------------------------------------------------------------


class Tools:
    """The tool functions, bound to one library. Each docstring is the tool's description."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def search_memory(
        self, query: Query, project: Project = "", cwd: Cwd = "", limit: Limit = None
    ) -> Hits:
        """Search what earlier sessions learned: consolidated patterns (pitfalls, diagnostic
        strategies, insights) and approved reasoning steps, best match first."""
        text = _required(query, "query")
        scope = self._project(project, cwd)
        found = _guard(lambda: self.library.search_memory(text, project=scope, limit=limit))
        return {"query": text, "project": scope, "hits": [_hit(h) for h in found]}

    def pitfalls(
        self, query: OptionalQuery = "", project: Project = "", cwd: Cwd = "", limit: Limit = None
    ) -> Hits:
        """Known pitfalls (mistakes that recurred across sessions) with their resolutions:
        most relevant to `query` first, or most severe first when `query` is empty."""
        scope = self._project(project, cwd)
        found = _guard(lambda: self.library.pitfalls(query.strip(), project=scope, limit=limit))
        return {"query": query.strip(), "project": scope, "hits": [_hit(h) for h in found]}

    def diagnose(
        self, problem: Problem, project: Project = "", cwd: Cwd = "", limit: Limit = None
    ) -> Hits:
        """Diagnostic strategies (trigger and ordered steps) and pitfalls that match a problem
        or symptom, best match first."""
        text = _required(problem, "problem")
        scope = self._project(project, cwd)
        found = _guard(lambda: self.library.diagnose(text, project=scope, limit=limit))
        return {"query": text, "project": scope, "hits": [_hit(h) for h in found]}

    def profile(self, project: Project = "", cwd: Cwd = "") -> str:
        """The knowledge profile as Markdown: insights, pitfalls (most severe first),
        diagnostic strategies, key patterns and anti-patterns. Load it at the start of a task."""
        scope = self._project(project, cwd)
        return _guard(lambda: self.library.profile(scope))

    def suggest_skills(
        self, context: Context, project: Project = "", cwd: Cwd = "", limit: Limit = None
    ) -> SkillHits:
        """Skills from the library that fit a task, best first, with the terms and reasons
        behind each rank. Retired and denylisted skills are never suggested."""
        text = _required(context, "context")
        scope = self._project(project, cwd)
        found = _guard(
            lambda: self.library.suggest_logged(text, limit=limit, project=scope, tool="suggest")
        )
        skills = [_skill(rank, s) for rank, s in enumerate(found, start=1)]
        return {"context": text, "project": scope, "skills": skills}

    def record_skill_outcome(
        self,
        skill: SkillKey,
        success: Success,
        version: Version = None,
        session_id: SessionId = "",
        detail: Detail = "",
    ) -> Recorded:
        """Record whether a skill helped after you applied it (one outcome per use). This
        feeds the skill's health and success rate."""
        name = _required(skill, "skill")
        event = _guard(
            lambda: self.library.skill_event(
                name,
                "outcome_recorded",
                detail=detail,
                success=success,
                version=version,
                session_id=session_id,
            )
        )
        return _recorded(event)

    def skill_event(
        self,
        skill: SkillKey,
        event: Annotated[LifecycleEvent, Field(description="What happened to the skill.")],
        detail: Detail = "",
        success: Annotated[
            bool | None, Field(strict=True, description="Required for outcome_recorded.")
        ] = None,
        version: Version = None,
        session_id: SessionId = "",
    ) -> Recorded:
        """Append a lifecycle event for a skill: proposed, validated, applied,
        outcome_recorded (needs `success`), revised, deprecated or contradicted."""
        name = _required(skill, "skill")
        appended = _guard(
            lambda: self.library.skill_event(
                name,
                event,
                detail=detail,
                success=success,
                version=version,
                session_id=session_id,
            )
        )
        return _recorded(appended)

    def _project(self, project: str, cwd: str) -> str:
        if project.strip():
            return project.strip()
        return _guard(lambda: self.library.project_for(cwd.strip())) if cwd.strip() else ""


def _guard(call: Callable[[], T]) -> T:
    """Run a store call; a problem the caller can act on becomes a clean tool error."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return call()
    except LibrarianError as exc:
        raise ToolError(str(exc)) from None


def _required(value: str, name: str) -> str:
    from mcp.server.mcpserver.exceptions import ToolError

    text = value.strip()
    if not text:
        raise ToolError(f"{name} is empty: say what you are looking for")
    return text


def _hit(h: MemoryHit) -> Hit:
    return {
        "rank": h.rank,
        "kind": h.kind,
        "id": h.item_id,
        "title": h.title,
        "detail": h.detail,
        "score": float(h.score),
        "pattern_kind": h.pattern_kind,
    }


def _skill(rank: int, s: Suggestion) -> SkillHit:
    return {
        "rank": rank,
        "name": s.name,
        "status": s.status,
        "description": s.description,
        "score": float(s.score),
        "lexical": float(s.lexical),
        "dense": float(s.dense),
        "importance": float(s.importance),
        "matched_terms": list(s.matched_terms),
        "reasons": list(s.reasons),
    }


def _recorded(event: Event) -> Recorded:
    payload: dict[str, Any] = event.payload
    version = payload.get("version_no")
    success = payload.get("success")
    return {
        "seq": event.seq,
        "ts": event.ts,
        "type": event.type,
        "skill": event.subject.removeprefix("skill:"),
        "version": int(version) if version is not None else None,
        "success": bool(success) if success is not None else None,
    }
