"""The entry object of the CLI, the app and the MCP server: one library directory behind
typed methods returning frozen dataclasses.

`Library` opens a `store.kernel.Kernel` and hands it to the domain modules (skills, sessions,
patterns, lifecycle); nothing under `store/` imports this module. Its lifecycle and pattern
methods live in `store.library_lifecycle` and `store.library_patterns`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from store import catalog, forget, search
from store.config import Config
from store.db import Database
from store.embed import Embedder, Matrix
from store.forget import erasing
from store.ingest import pipeline, upgrade, worker
from store.ingest.cold import LlmClient
from store.ingest.pipeline import IngestReport
from store.ingest.worker import DrainReport
from store.kernel import Clock, Kernel, LibraryError
from store.library_lifecycle import LifecycleMethods
from store.library_patterns import PatternMethods
from store.models import (
    AuditEntry,
    ContextMessage,
    Edge,
    Event,
    ForgetPlan,
    ForgetReport,
    Node,
    QueueCounts,
    ScanReport,
    SessionSummary,
    SkillDetail,
    SkillSummary,
    Suggestion,
    UpgradePlan,
)
from store.models.listing import ListingReport
from store.models.overlap import OverlapPair
from store.paths import LibraryPaths
from store.sessions import queries as sessions
from store.sessions import review
from store.skills import detail, overlap, scan
from store.skills.discovery import Root
from store.skills.listing import budget
from store.skills.scan import relation_rows, scan_batch_size
from store.vectors import VectorIndex, Vectors

__all__ = ["Clock", "Library", "LibraryError", "relation_rows", "scan_batch_size"]

Progress = Callable[[int, int], None]
T = TypeVar("T")


class Library(LifecycleMethods, PatternMethods):
    """A skill library on disk: SQLite event log + projections, config, vector index."""

    def __init__(
        self,
        root: Path,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        """Open (and, unless `read_only`, create or upgrade) the library at `root`.

        Read-only opens create, migrate and rewrite nothing: the database is opened with
        SQLite's `mode=ro`, the vector index is kept in memory, and every write raises
        `ReadOnlyError`. Without a `clock`, the library's own: `clock.start` in its config
        (the demo's date), else the real time."""
        self.kernel = Kernel(root, embedder, clock, read_only=read_only)

    # -- the kernel's parts, for the CLI, the app and tests ------------------------------

    @property
    def paths(self) -> LibraryPaths:
        return self.kernel.paths

    @property
    def config(self) -> Config:
        return self.kernel.config

    @property
    def db(self) -> Database:
        return self.kernel.db

    @property
    def read_only(self) -> bool:
        return self.kernel.read_only

    @property
    def clock(self) -> Clock:
        return self.kernel.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.kernel.clock = clock

    @property
    def actor(self) -> str:
        return self.kernel.actor

    @property
    def vectors(self) -> Vectors:
        return self.kernel.vectors

    @property
    def embedder(self) -> Embedder:
        return self.kernel.embedder

    @property
    def model_name(self) -> str:
        return self.kernel.model_name

    @property
    def index(self) -> VectorIndex:
        return self.kernel.vectors.index

    @property
    def memory_epoch(self) -> int:
        return self.kernel.memory_epoch

    def now(self) -> datetime:
        """The library's clock as a datetime (tests and the demo run on a fixed clock)."""
        return self.kernel.now()

    def append_event(self, conn: Any, type_: str, subject: str, payload: dict[str, Any]) -> Event:
        """Append an event (and update projections) inside an open write transaction."""
        return self.kernel.append_event(conn, type_, subject, payload)

    def append_events(
        self, conn: Any, entries: Sequence[tuple[str, str, dict[str, Any]]]
    ) -> list[Event]:
        """Append events in order, in one INSERT, and update projections (see
        `Kernel.append_events`)."""
        return self.kernel.append_events(conn, entries)

    def acting_as(self, actor: str) -> AbstractContextManager[None]:
        """Record events as someone else for a while (the demo's scripted history)."""
        return self.kernel.acting_as(actor)

    def last_seq(self) -> int:
        return self.kernel.last_seq()

    def service(self, build: Callable[[Kernel], T]) -> T:
        """The kernel's one instance of `build(kernel)` (see `Kernel.service`)."""
        return self.kernel.service(build)

    def close(self) -> None:
        """Write the retrieval repeats still counted in memory, then close the database."""
        self.kernel.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- roots, scanning and the vector index (store/skills/scan.py, store/vectors.py) ---

    def configured_roots(self, home: Path | None = None, cwd: Path | None = None) -> list[Root]:
        """The roots a plain `scan` walks, in precedence order."""
        return scan.configured_roots(self.kernel, home, cwd)

    def remember_roots(self, paths: Sequence[Path]) -> None:
        scan.remember_roots(self.kernel, paths)

    def scan(
        self,
        paths: Sequence[Path] | None = None,
        *,
        embed: bool = True,
        progress: Progress | None = None,
    ) -> ScanReport:
        """Reconcile the catalog with the files under the roots (idempotent by content)."""
        return scan.scan(self.kernel, paths, embed=embed, progress=progress)

    def _write_versions(self, loaded: list[Any], known: dict[str, Any]) -> tuple[int, int]:
        """Record scanned versions (the lifecycle benchmark's scan without a walk)."""
        return scan.write_versions(self.kernel, loaded, known)

    def _known_by_path(self) -> dict[str, Any]:
        return scan.known_by_path(self.kernel)

    def embed_missing(self, texts: dict[str, str]) -> int:
        """Embed texts (by hash) not yet in the cache for this model; returns how many."""
        return self.kernel.vectors.embed_missing(texts)

    def sync_index(self, *, embed: bool = True, force: bool = False) -> bool:
        """Make the vector index match SQLite; True when every surface is indexed."""
        return self.kernel.vectors.sync_index(embed=embed, force=force)

    def similarities(self, vector: Matrix, labels: Sequence[int]) -> dict[int, float]:
        """Exact cosine of `vector` with each indexed surface in `labels`."""
        return self.kernel.vectors.similarities(vector, labels)

    def cached_vectors(self, hashes: set[str]) -> dict[str, Matrix]:
        """Stored embeddings (this model) of the given text hashes."""
        return self.kernel.vectors.cached_vectors(hashes)

    # -- reading ------------------------------------------------------------------------

    def skill_count(self, include_uninstalled: bool = False) -> int:
        return catalog.count(self.db, include_uninstalled)

    def list_skills(
        self,
        text: str = "",
        include_uninstalled: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[SkillSummary]:
        return catalog.list_skills(self.db, text, include_uninstalled, limit, offset)

    def get_skill(self, key: str | int) -> SkillDetail:
        return detail.skill_detail(self.kernel, key)

    def listing(self, folder: Path, **options: Any) -> ListingReport:
        """Claude Code's skill listing for a session in `folder`, against its budget
        (`store.skills.listing`); `options`: context_tokens, fraction, chars."""
        fraction = float(self.config.get("budget.fraction") or 0)
        with self.db.read() as conn:
            return budget.report(
                conn,
                folder,
                home=Path.home(),
                env=os.environ,
                config_context_tokens=int(self.config.get("budget.context_tokens") or 0) or None,
                config_fraction=fraction if 0 < fraction <= 1 else None,
                **options,
            )

    def overlaps(self, key: str | int | None = None) -> list[OverlapPair]:
        """Skills routing confuses and exact duplicates (`store.skills.overlap`): every pair,
        or those of one skill."""
        return overlap.pairs_for(self.kernel, key)

    def suggest(self, context: str, limit: int | None = None) -> list[Suggestion]:
        return self.suggest_many([context], limit)[0]

    def suggest_many(
        self, contexts: Sequence[str], limit: int | None = None
    ) -> list[list[Suggestion]]:
        return search.suggest_many(self.kernel, contexts, limit)

    # -- sessions, nodes, review ----------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[Path] | None = None,
        *,
        llm: LlmClient | None = None,
        again: bool = False,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest transcripts (default: Claude Code's projects folders); new co-usage then
        becomes relation proposals. With `llm`, the cold tier then reads every session under
        the paths, changed or not, that this model and prompt version have not read yet (all
        of them with `again`); see `store.ingest.upgrade`."""
        since = self.kernel.last_seq()
        report = pipeline.ingest(self.kernel, paths, progress=progress)
        if llm is not None:
            cold = upgrade.upgrade(self.kernel, paths, llm, again=again, progress=progress)
            report = dataclasses.replace(
                report,
                cold=cold,
                withheld=report.withheld + cold.withheld,
                problems=report.problems + cold.problems,
            )
        if report.ingested:
            made = self.propose_relations(since=since)
            report = dataclasses.replace(report, relations_proposed=len(made))
            self.vectors.sync_index(embed=False)  # a candidate its runs promoted is served now
        return report

    def plan_upgrade(
        self,
        paths: Sequence[Path] | None = None,
        *,
        again: bool = False,
        model: str = "",
        context_tokens: int = 0,
    ) -> UpgradePlan:
        """What `ingest(paths, llm=…)` would send to the LLM, counted locally: no network, no
        writes (model and context default to the configured ones)."""
        return upgrade.plan(
            self.kernel, paths, again=again, model=model, context_tokens=context_tokens
        )

    def drain_spool(self, *, locked: bool = False) -> DrainReport:
        """Ingest what the hooks queued (one worker at a time), then propose relations.
        `locked`: the caller holds the spool's lock already."""
        since = self.kernel.last_seq()
        report = worker.drain(self.kernel, locked=locked)
        if report.ingested:
            self.propose_relations(since=since)
            self.vectors.sync_index(embed=False)  # a candidate its runs promoted is served now
        return report

    def sessions(
        self, project: str | None = None, text: str = "", limit: int | None = None
    ) -> list[SessionSummary]:
        return sessions.list_sessions(self.db, project, text, limit)

    def session(self, session_id: str) -> SessionSummary:
        found = sessions.get_session(self.db, session_id)
        if found is None:
            raise LibraryError(f"no session {session_id!r}")
        return found

    def session_graph(self, session_id: str) -> tuple[list[Node], list[Edge]]:
        return review.session_graph(self.db, session_id)

    def nodes(self, **filters: Any) -> list[Node]:
        """Nodes filtered by status, type_, project, session, text; ordered (`order`, grouped
        `by_session`) and paged."""
        return review.list_nodes(self.db, **filters)

    def session_starts(self) -> dict[str, str]:
        """When each session started, by id (the review queue's session headers)."""
        return review.session_starts(self.db)

    def node_count(self, **filters: Any) -> int:
        return review.count_nodes(self.db, **filters)

    def node(self, node_id: str) -> Node:
        found = review.get_node(self.db, node_id)
        if found is None:
            raise LibraryError(f"no node {node_id!r}")
        return found

    def node_context(self, node: Node, radius: int = 3) -> list[ContextMessage]:
        return review.context(self.db, node, radius)

    def review(
        self,
        action: str,
        node_ids: Sequence[str],
        *,
        reason: str = "",
        summary: str = "",
        scope: str = "",
    ) -> list[Node]:
        """approve | reject [reason] | edit summary | scope [PROJECT|TEAM] — audited events."""
        return review.decide(
            self.kernel, action, node_ids, reason=reason, summary=summary, scope=scope
        )

    def undo_review(self) -> list[Node]:
        """Revert this reviewer's last decision (batch)."""
        return review.undo_last(self.kernel)

    def audit(self, limit: int = 200, node_id: str | None = None) -> list[AuditEntry]:
        return review.audit(self.db, limit, node_id)

    def queue_counts(self) -> QueueCounts:
        """Pending nodes, and decisions since the reviewer's local midnight."""
        now = self.kernel.now().astimezone()
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)
        return review.counts(self.db, midnight.isoformat(timespec="microseconds"))

    # -- forgetting (store/forget/) ---------------------------------------------------

    def forget_plan(
        self,
        scope: str,
        target: str,
        *,
        regex: bool = False,
        ignore_case: bool = False,
        with_messages: bool = False,
    ) -> ForgetPlan:
        """What `forget` would erase for a node, a session or a text (nothing is changed)."""
        with self.db.read() as conn:
            return forget.plan(
                conn,
                scope,
                target,
                regex=regex,
                ignore_case=ignore_case,
                with_messages=with_messages,
            ).plan

    def forget(
        self,
        scope: str,
        target: str,
        *,
        reason: str = "",
        regex: bool = False,
        ignore_case: bool = False,
        with_messages: bool = False,
    ) -> ForgetReport:
        """Erase a node, a session or a text for good (an audited `blob.erased` event), then
        scrub the database file."""
        return erasing.forget(
            self.kernel,
            scope,
            target,
            reason=reason,
            regex=regex,
            ignore_case=ignore_case,
            with_messages=with_messages,
        )

    def scrub(self) -> tuple[bool, tuple[str, ...]]:
        """Checkpoint and truncate the WAL and vacuum: no erased bytes left in the files."""
        return erasing.scrub(self.kernel)

    def projects(self) -> list[str]:
        """Projects that have sessions, alphabetically."""
        with self.db.read() as conn:
            return [
                r[0] for r in conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project")
            ]
