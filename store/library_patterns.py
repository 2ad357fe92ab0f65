"""`Library`'s methods for patterns (DESIGN §7): consolidation, pattern memory and the
retrieval log, graduation into drafts, and the enrichment of thin skills. Each hands the
library's kernel to the domain module that does the work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from store import search
from store.kernel import Kernel, LibraryError
from store.models import (
    ConsolidationReport,
    Draft,
    GraduationCheck,
    MemoryHit,
    Node,
    Pattern,
    Retrieval,
    Suggestion,
)
from store.models.governance import Enrichment, ThinSkill
from store.patterns import consolidate, decay, graduate, memory, session_start
from store.patterns.memory import Memory
from store.patterns.retrieval_log import RetrievalLog
from store.sessions.review import get_node
from store.skills import enrich, scan


class PatternMethods:
    """Patterns, pattern memory, retrievals, graduation and enrichment."""

    kernel: Kernel

    def consolidate(
        self, *, full: bool = False, llm: Any = None, progress: Any = None
    ) -> ConsolidationReport:
        """Cluster approved nodes into patterns; `llm` classifies when given."""
        return consolidate.consolidate(self.kernel, full=full, llm=llm, progress=progress)

    def decay(self) -> int:
        return decay.apply_decay(self.kernel)

    def patterns(
        self,
        *,
        kind: str | None = None,
        project: str | None = None,
        statuses: Sequence[str] = ("active", "decayed", "graduated"),
    ) -> list[Pattern]:
        with self.kernel.db.read() as conn:
            return memory.list_patterns(conn, kind=kind, project=project, statuses=statuses)

    def pattern(self, pattern_id: str) -> Pattern:
        with self.kernel.db.read() as conn:
            found = memory.get_pattern(conn, pattern_id)
        if found is None:
            raise LibraryError(f"no pattern {pattern_id!r}")
        return found

    def pattern_nodes(self, pattern_id: str) -> list[Node]:
        """A pattern's member nodes, most confident first."""
        with self.kernel.db.read() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT m.node_id FROM pattern_members m JOIN nodes n USING(node_id)"
                    " WHERE m.pattern_id=? ORDER BY n.confidence DESC, n.node_id",
                    (pattern_id,),
                )
            ]
        return [self._node(node_id) for node_id in ids]

    def _node(self, node_id: str) -> Node:
        found = get_node(self.kernel.db, node_id)
        if found is None:
            raise LibraryError(f"no node {node_id!r}")
        return found

    # -- pattern memory and the retrieval log -------------------------------------------------

    @property
    def memory(self) -> Memory:
        return self.kernel.service(Memory)

    @property
    def retrieval_log(self) -> RetrievalLog:
        """Where retrievals are recorded; its `window` coalesces repeats (MCP server)."""
        return self.kernel.service(RetrievalLog)

    def search_memory(
        self, query: str, *, project: str = "", limit: int | None = None
    ) -> list[MemoryHit]:
        return self.memory.search(query, project=project, limit=limit)

    def pitfalls(
        self, query: str = "", *, project: str = "", limit: int | None = None
    ) -> list[MemoryHit]:
        return self.memory.pitfalls(query, project=project, limit=limit)

    def diagnose(
        self, problem: str, *, project: str = "", limit: int | None = None
    ) -> list[MemoryHit]:
        return self.memory.diagnose(problem, project=project, limit=limit)

    def profile(self, project: str = "", *, log: bool = True) -> str:
        """The Markdown profile (logged as a retrieval of every pattern it includes)."""
        return memory.profile(self.kernel, project, log=log)

    def suggest_logged(
        self, context: str, *, limit: int | None = None, project: str = "", tool: str = "suggest"
    ) -> list[Suggestion]:
        """`suggest` for an agent or a person asking: the answer goes into the retrieval log."""
        found = search.suggest_many(self.kernel, [context], limit)[0]
        memory.log_retrieval(
            self.kernel,
            tool,
            context,
            [("skill", s.name, rank, s.score) for rank, s in enumerate(found, start=1)],
            project=project,
        )
        return found

    def log_retrieval(
        self,
        tool: str,
        query: str,
        hits: Sequence[tuple[str, str, int, float]],
        *,
        project: str = "",
        session_id: str = "",
    ) -> int:
        return memory.log_retrieval(
            self.kernel, tool, query, hits, project=project, session_id=session_id
        )

    def retrievals(self, limit: int = 100) -> list[Retrieval]:
        return memory.retrievals(self.kernel, limit)

    def project_for(self, cwd: str) -> str:
        """The known project a working directory belongs to ("" when none); see
        `session_start.project_for`."""
        with self.kernel.db.read() as conn:
            return session_start.project_for(conn, cwd)

    # -- graduation: patterns become drafts become skills ------------------------------------

    def graduation(self, *, include_all: bool = False) -> list[GraduationCheck]:
        return graduate.checks(self.kernel, include_all=include_all)

    def graduation_check(self, pattern_id: str) -> GraduationCheck:
        pattern = self.pattern(pattern_id)
        with self.kernel.db.read() as conn:
            return graduate.check(self.kernel, pattern, conn)

    def graduate(self, *, dry_run: bool = False) -> tuple[list[GraduationCheck], list[Draft]]:
        return graduate.graduate(self.kernel, dry_run=dry_run)

    def draft(self, pattern_id: str) -> Draft:
        return graduate.create_draft(self.kernel, pattern_id)

    def drafts(self, status: str | None = None) -> list[Draft]:
        return graduate.drafts(self.kernel, status)

    def get_draft(self, draft_id: str) -> Draft:
        return graduate.get_draft(self.kernel, draft_id)

    def approve_draft(self, draft_id: str, root: Path | None = None) -> Draft:
        return graduate.approve_draft(self.kernel, draft_id, root)

    def keep_literal(self, draft_id: str, literal: str, *, keep: bool = True) -> Draft:
        """Keep one of a pending draft's transient literals on purpose (or replace it again)."""
        return graduate.keep_literal(self.kernel, draft_id, literal, keep=keep)

    def reject_draft(self, draft_id: str, reason: str) -> Draft:
        return graduate.reject_draft(self.kernel, draft_id, reason)

    # -- enrichment of thin skills (issue 16) --------------------------------------------

    def thin_skills(self) -> list[ThinSkill]:
        """Skills whose frontmatter is too thin for an agent to pick them."""
        return enrich.thin_skills(self.kernel)

    def enrich(self, key: str | int, llm: enrich.ToolCaller | None = None) -> Enrichment:
        """Propose a rewrite of a skill's discovery frontmatter (by `llm`, else by rules)."""
        return enrich.propose(self.kernel, key, llm)

    def enrichments(self, status: str | None = "pending") -> list[Enrichment]:
        return enrich.listing(self.kernel, status)

    def enrichment(self, proposal_id: str) -> Enrichment:
        return enrich.get(self.kernel, proposal_id)

    def approve_enrichment(self, proposal_id: str) -> Enrichment:
        """Write the approved SKILL.md, then rescan its root: a new version, served at once."""
        path = enrich.write(self.kernel, proposal_id)
        scan.rescan_for(self.kernel, path)
        return enrich.get(self.kernel, proposal_id)

    def reject_enrichment(self, proposal_id: str, reason: str) -> Enrichment:
        return enrich.reject(self.kernel, proposal_id, reason)
