"""The one façade over a library directory: typed methods returning frozen dataclasses."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from store import catalog, events, review, sessions
from store.config import Config
from store.db import Database
from store.embed import Embedder, EmbeddingError, FastEmbedder, Matrix, model_slug
from store.errors import LibrarianError
from store.identity import resolve_actor
from store.ingest.redact import redact
from store.lifecycle.candidates import candidate_base, settle
from store.lifecycle.manifest import governed
from store.lifecycle.requirements import all_unproven
from store.models import (
    AGENT_LIFECYCLE_EVENTS,
    AuditEntry,
    BlastRadius,
    ConsolidationReport,
    ContextMessage,
    Draft,
    Edge,
    Event,
    ForgetPlan,
    ForgetReport,
    GraduationCheck,
    Incident,
    LeftBehind,
    Lineage,
    MemoryHit,
    Node,
    Pattern,
    QueueCounts,
    RelationProposal,
    Retrieval,
    Run,
    ScanReport,
    SessionSummary,
    SharedSession,
    SkillDetail,
    SkillHealth,
    SkillSummary,
    SkippedFile,
    StepPlan,
    Suggestion,
    UpgradePlan,
)
from store.models.governance import Enrichment, ThinSkill
from store.models.listing import ListingReport
from store.models.overlap import OverlapPair
from store.paths import LibraryPaths
from store.patterns.retrieval_log import RetrievalLog
from store.projections import store_blob
from store.skills import discovery, enrich
from store.skills.discovery import Found, Root
from store.skills.surface import surfaces, text_hash
from store.skills.usage import ImportanceRule
from store.vectors import VectorIndex

if TYPE_CHECKING:
    from store.ingest.cold import LlmClient
    from store.ingest.pipeline import IngestReport
    from store.ingest.worker import DrainReport
    from store.lifecycle.graph import DependencyGraph
    from store.models import Dependency, GraphFocus, GraphProblems, HealthChange, Outcome
    from store.patterns.memory import Memory
    from store.skills.overlap import OverlapFinder
    from store.skills.reconcile import Candidate, Loaded

Progress = Callable[[int, int], None]
Clock = Callable[[], str]
WRITE_BATCH = 250
#: Skills per committed scan batch: at least this many...
SCAN_BATCH_MIN = 32
#: ...at most this many, and otherwise a twentieth of the scan (the vector index is saved
#: after every batch, so a big first scan saves it about twenty times).
SCAN_BATCH_MAX = 500
#: Texts embedded per committed transaction of the embedding cache.
EMBED_COMMIT = 256
STATUS_EVENTS = frozenset(
    {"skill.proposed", "skill.promoted", "skill.deprecated", "skill.retired", "skill.validated"}
)


class LibraryError(LibrarianError):
    """A problem a person can act on (bad argument, unknown skill, broken file)."""


class Library:
    """A skill library on disk: SQLite event log + projections, config, vector index."""

    def __init__(
        self,
        root: Path,
        embedder: Embedder | None = None,
        clock: Clock = events.now_iso,
        *,
        read_only: bool = False,
    ) -> None:
        """Open (and, unless `read_only`, create or upgrade) the library at `root`.

        Read-only opens create, migrate and rewrite nothing: the database is opened with
        SQLite's `mode=ro`, the vector index is kept in memory, and every write raises
        `ReadOnlyError`."""
        self.paths = LibraryPaths(root)
        self.clock = clock
        self.read_only = read_only
        if not read_only:
            if not self.paths.writable():
                raise LibraryError(
                    f"{root} is read-only for you: this command changes the library"
                    " (commands that only read, and the app, still open it)"
                )
            self.paths.ensure()
        self.config = Config(self.paths.config, create=not read_only)
        self.db = Database(self.paths.db, read_only=read_only, head=self.paths.head)
        self._embedder = embedder
        self._index: VectorIndex | None = None
        self._actor = ""
        self._memory: Memory | None = None
        self._graph: DependencyGraph | None = None
        self.memory_epoch = 0
        self._retrieval_log: RetrievalLog | None = None
        self._synced: tuple[tuple[Any, ...], bool] = ((), False)
        self._matrix: tuple[str, Matrix, dict[int, int]] | None = None
        self._overlap: OverlapFinder | None = None

    # -- wiring ------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = FastEmbedder(
                self.paths.models,
                model_name=str(self.config.get("embedding.model")),
                batch_size=int(self.config.get("embedding.batch_size")),
                max_length=int(self.config.get("embedding.max_length")),
            )
        return self._embedder

    @property
    def model_name(self) -> str:
        return (
            self._embedder.model_name if self._embedder else str(self.config.get("embedding.model"))
        )

    @property
    def actor(self) -> str:
        if not self._actor:
            self._actor = resolve_actor(
                str(self.config.get("reviewer.name") or ""),
                str(self.config.get("reviewer.email") or ""),
            )
        return self._actor

    def now(self) -> datetime:
        """The library's clock as a datetime (tests and the demo run on a fixed clock)."""
        return datetime.fromisoformat(self.clock())

    def append_event(
        self, conn: sqlite3.Connection, type_: str, subject: str, payload: dict[str, Any]
    ) -> Event:
        """Append an event (and update projections) inside an open write transaction."""
        if type_.startswith(("node.", "pattern.", "session.")):
            self.memory_epoch += 1  # what `Memory` serves may have changed
        return events.append(conn, type_, subject, payload, self.actor, ts=self.clock())

    @property
    def retrieval_log(self) -> RetrievalLog:
        """Where retrievals are recorded; its `window` coalesces repeats (MCP server)."""
        if self._retrieval_log is None:
            self._retrieval_log = RetrievalLog(self)
        return self._retrieval_log

    def close(self) -> None:
        """Write the retrieval repeats still counted in memory, then close the database."""
        try:
            if self._retrieval_log is not None:
                self._retrieval_log.flush()
        finally:
            self.db.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- roots and scanning ------------------------------------------------------------

    def configured_roots(self, home: Path | None = None, cwd: Path | None = None) -> list[Root]:
        """The roots a plain `scan` walks, in precedence order."""
        configured = [Path(str(p)) for p in self.config.get("skills.roots") or []]
        extra = [Path(str(p)) for p in self.config.get("skills.extra_roots") or []]
        if configured:
            roots = discovery.explicit_roots(configured, "configured")
        else:
            roots = discovery.default_roots(home or Path.home(), cwd or Path.cwd(), os.environ)
        known = {str(r.path) for r in roots}
        roots += [r for r in discovery.explicit_roots(extra, "extra") if str(r.path) not in known]
        return roots

    def remember_roots(self, paths: Sequence[Path]) -> None:
        extra = [str(p) for p in self.config.get("skills.extra_roots") or []]
        added = [str(p.expanduser().resolve()) for p in paths]
        merged = extra + [p for p in added if p not in extra]
        if merged != extra:
            self.config.set("skills.extra_roots", json.dumps(merged))

    def scan(
        self,
        paths: Sequence[Path] | None = None,
        *,
        embed: bool = True,
        progress: Progress | None = None,
    ) -> ScanReport:
        """Reconcile the catalog with the files under the roots (idempotent by content)."""
        started = time.perf_counter()
        roots = discovery.explicit_roots(list(paths), "extra") if paths else self.configured_roots()
        found, walk_skips, truncated = self._walk(roots)
        known = self._known_by_path()
        tally = _ScanTally(skipped=[_kept(s, known.get(s.path)) for s in walk_skips])
        size = scan_batch_size(len(found))
        for start in range(0, len(found), size):
            self._scan_batch(found[start : start + size], known, tally, embed=embed)
            if progress is not None:
                progress(min(start + size, len(found)), len(found))
        seen = {str(f.path) for f in found}
        gone = self._write_uninstalls(roots, truncated, seen, known)
        from store.skills.relint import relint  # scanning only (parser, lint)

        relint(self.db, self.append_event)  # unchanged skills linted with older rules
        self.sync_index(embed=embed)
        report = catalog.graph_report(self.db)
        with self.db.read() as conn:
            unproven = tuple(all_unproven(conn))
        return ScanReport(
            roots=tuple(str(r.path) for r in roots),
            seen=len(found),
            installed=tally.installed,
            changed=tally.changed,
            unchanged=tally.unchanged,
            uninstalled=gone,
            skipped=tuple(tally.skipped),
            collisions=catalog.collisions(self.db),
            dangling=report.dangling,
            cycles=report.cycles,
            embedded=tally.embedded,
            seconds=round(time.perf_counter() - started, 3),
            unproven=unproven,
        )

    def _scan_batch(
        self, batch: list[Found], known: dict[str, sqlite3.Row], tally: _ScanTally, *, embed: bool
    ) -> None:
        """Read, embed and record one batch, each step committed: a scan killed midway keeps
        every finished batch (and the embeddings of the one it was in), and a rerun goes on
        from there. Only one batch of file contents is held at a time."""
        loaded, unchanged, skipped = self._read_changed(batch, known)
        tally.unchanged += unchanged
        tally.skipped += skipped
        if not loaded:
            return
        if embed:
            tally.embedded += self._embed_loaded(loaded)
        installed, changed = self._write_versions(loaded, known)
        tally.installed += installed
        tally.changed += changed
        if embed:
            self.sync_index(embed=False)  # the index follows every committed batch

    def _walk(self, roots: list[Root]) -> tuple[list[Found], list[SkippedFile], set[str]]:
        found: list[Found] = []
        skipped: list[SkippedFile] = []
        truncated: set[str] = set()
        claimed: set[str] = set()
        depth = int(self.config.get("skills.max_depth"))
        limit = int(self.config.get("skills.max_dirs"))
        paths = [r.path for r in roots]
        for root in roots:
            hits, problems = discovery.walk_root(root, depth, limit, paths)
            if any(p.code == "walk_limit" for p in problems):
                truncated.add(str(root.path))
            skipped += [p for p in problems if p.code != "root_missing"]
            for hit in hits:
                if str(hit.path) not in claimed:
                    claimed.add(str(hit.path))
                    found.append(hit)
        return found, skipped, truncated

    def _known_by_path(self) -> dict[str, sqlite3.Row]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT s.skill_id, s.fs_path, s.root, s.status, s.current_version,"
                " s.served_version, v.content_hash, v.files_hash FROM skills s"
                " JOIN skill_versions v"
                " ON v.skill_id=s.skill_id AND v.version_no=s.current_version"
            ).fetchall()
        return {row["fs_path"]: row for row in rows}

    def _read_changed(
        self, found: list[Found], known: dict[str, sqlite3.Row]
    ) -> tuple[list[Loaded], int, list[SkippedFile]]:
        from store.skills.reconcile import load, read_candidate  # scanning only (parser, lint)

        loaded: list[Loaded] = []
        skipped: list[SkippedFile] = []
        unchanged = 0
        for hit in found:
            candidate = read_candidate(hit)
            row = known.get(str(hit.path))
            if isinstance(candidate, SkippedFile):
                skipped.append(_kept(candidate, row))
            elif row is not None and row["status"] != "uninstalled" and _same(row, candidate):
                unchanged += 1
            else:
                result = load(candidate)
                if isinstance(result, SkippedFile):
                    skipped.append(_kept(result, row))
                else:
                    loaded.append(result)
        return loaded, unchanged, skipped

    def _write_versions(
        self, loaded: list[Loaded], known: dict[str, sqlite3.Row]
    ) -> tuple[int, int]:
        installed = changed = 0
        for start in range(0, len(loaded), WRITE_BATCH):
            with self.db.write() as conn:
                next_id = (
                    int(conn.execute("SELECT coalesce(max(skill_id),0) FROM skills").fetchone()[0])
                    + 1
                )
                for item in loaded[start : start + WRITE_BATCH]:
                    row = known.get(str(item.candidate.found.path))
                    if row is None or row["status"] == "uninstalled":
                        sid = next_id if row is None else int(row["skill_id"])
                        next_id += row is None
                        self._append_version(conn, "skill.installed", sid, item, row)
                        installed += 1
                    else:
                        self._append_version(conn, "skill.changed", int(row["skill_id"]), item, row)
                        changed += 1
        return installed, changed

    def _append_version(
        self, conn: sqlite3.Connection, type_: str, sid: int, item: Loaded, row: sqlite3.Row | None
    ) -> None:
        from store.skills.lint import LINT_VERSION
        from store.skills.reconcile import finding_dict, manifest_of

        cand, parsed = item.candidate, item.parsed
        version_no = (
            1 if row is None else int(row["current_version"]) + (0 if _same(row, cand) else 1)
        )
        source_hash = store_blob(conn, cand.data.decode("utf-8", errors="replace"))
        body_hash = store_blob(conn, parsed.body)
        payload: dict[str, Any] = {
            "skill_id": sid,
            "fs_path": str(cand.found.path),
            "dir": str(cand.found.path.parent),
            "root": str(cand.found.root.path),
            "scope": cand.found.root.scope,
            "scope_rank": cand.found.root.scope_rank,
            "root_rank": cand.found.root.root_rank,
            "version_no": version_no,
            "content_hash": cand.content_hash,
            "files_hash": cand.files_hash,
            "source_hash": source_hash,
            "body_hash": body_hash,
            "manifest": manifest_of(parsed),
            "frontmatter": parsed.frontmatter,
            "warnings": [[w.code, w.message] for w in parsed.warnings],
            "findings": [finding_dict(f) for f in item.findings],
            "relations": relation_rows(parsed),
            "lint_version": LINT_VERSION,
        }
        if type_ == "skill.installed":
            payload["status"] = "stable"
        elif row is not None and version_no > int(row["current_version"]):
            base = candidate_base(conn, sid, str(row["status"]), cand.content_hash, cand.files_hash)
            if base:  # a new version of a stable skill proves itself first
                payload["candidate"] = base
        self.append_event(conn, type_, f"skill:{parsed.name}", payload)

    def _write_uninstalls(
        self, roots: list[Root], truncated: set[str], seen: set[str], known: dict[str, sqlite3.Row]
    ) -> int:
        scanned = {str(r.path) for r in roots} - truncated
        gone = [
            row
            for path, row in known.items()
            if row["status"] != "uninstalled"
            and row["root"] in scanned
            and path not in seen
            and not os.path.exists(path)
        ]
        if not gone:
            return 0
        with self.db.write() as conn:
            for row in gone:
                name = conn.execute(
                    "SELECT name FROM skills WHERE skill_id=?", (row["skill_id"],)
                ).fetchone()[0]
                self.append_event(
                    conn,
                    "skill.uninstalled",
                    f"skill:{name}",
                    {
                        "skill_id": int(row["skill_id"]),
                        "fs_path": row["fs_path"],
                        "reason": "SKILL.md no longer exists",
                    },
                )
        return len(gone)

    # -- embeddings and the vector index -----------------------------------------------

    def _embed_loaded(self, loaded: list[Loaded]) -> int:
        """Embed new surfaces before the write transaction (slow work outside the lock)."""
        from store.skills.reconcile import manifest_of

        texts = {text_hash(t): t for item in loaded for _, t in surfaces(manifest_of(item.parsed))}
        try:
            return self.embed_missing(texts)
        except EmbeddingError:
            return 0

    def embed_missing(self, texts: dict[str, str]) -> int:
        """Embed texts (by hash) not yet in the cache for this model; returns how many."""
        if not texts:
            return 0
        model = self.model_name
        with self.db.read() as conn:
            have = {
                row[0]
                for row in conn.execute("SELECT text_hash FROM embeddings WHERE model=?", (model,))
            }
        missing = [(h, t) for h, t in texts.items() if h not in have]
        for start in range(0, len(missing), EMBED_COMMIT):
            chunk = missing[start : start + EMBED_COMMIT]
            vectors = self.embedder.embed([t for _, t in chunk])
            with self.db.write() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings(model, text_hash, dim, vector)"
                    " VALUES (?,?,?,?)",
                    [
                        (model, h, int(v.shape[0]), v.astype(np.float32).tobytes())
                        for (h, _), v in zip(chunk, vectors, strict=True)
                    ],
                )
        return len(missing)

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = VectorIndex(self.paths.vectors, model_slug(self.model_name))
        return self._index

    def last_seq(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])

    def sync_index(self, *, embed: bool = True, force: bool = False) -> bool:
        """Make the vector index match SQLite; True when every surface is indexed.

        Cheap when nothing changed since the last sync in this process.
        """
        seq = self._catalog_signature()
        if not force and self._synced == (seq, True):
            return True
        if embed and not self.read_only:  # embedding stores vectors: a write
            try:
                self.embed_missing(self._unembedded_texts())
            except EmbeddingError:
                embed = False
        total, wanted = self._indexable()
        with self.db.lock:
            index = self.index
            loaded = index.meta is not None or index.load(self._dim())
            if force or not loaded or index.deleted > max(64, len(wanted) // 4):
                labels = sorted(wanted)
                index.build(self.model_name, wanted, labels, self._vectors_for(wanted, labels))
                self._save_index()
            elif index.entries != wanted:
                current = index.entries
                add = {lab: h for lab, h in wanted.items() if current.get(lab) != h}
                labels = sorted(add)
                index.update(
                    add,
                    labels,
                    self._vectors_for(add, labels),
                    [lab for lab in current if lab not in wanted],
                )
                self._save_index()
        self._synced = (seq, len(wanted) == total)
        self.similarities(np.zeros(self._dim(), dtype=np.float32), [])  # warm the matrix
        return len(wanted) == total

    def _save_index(self) -> None:
        if not self.read_only:  # a read-only library keeps its rebuilt index in memory
            self.index.save()

    def _catalog_signature(self) -> tuple[Any, ...]:
        """What the vector index depends on: the skills (a status or version change touches
        `updated_at`), their texts and the model. Retrievals, reviews and other events that
        append to the log leave it alone, so `sync_index` stays a no-op for them."""
        with self.db.read() as conn:
            skills = conn.execute("SELECT count(*), max(updated_at) FROM skills").fetchone()
            texts = conn.execute("SELECT count(*), max(label) FROM skill_texts").fetchone()
        return (*skills, *texts, self.model_name)

    def similarities(self, vector: Matrix, labels: Sequence[int]) -> dict[int, float]:
        """Exact cosine of `vector` with each indexed surface in `labels`, from an in-memory
        matrix of the indexed vectors (built once per index state: one SQL join)."""
        entries = self.index.entries
        fp = self.index.meta.fingerprint if self.index.meta else ""
        if self._matrix is None or self._matrix[0] != fp:
            with self.db.read() as conn:
                rows = [
                    (lab, blob)
                    for lab, blob in conn.execute(
                        "SELECT t.label, e.vector FROM skill_texts t JOIN embeddings e"
                        " ON e.model=? AND e.text_hash=t.text_hash ORDER BY t.label",
                        (self.model_name,),
                    )
                    if entries.get(lab)
                ]
            dim = self._dim()
            matrix = np.frombuffer(b"".join(b for _, b in rows), dtype=np.float32)
            self._matrix = (
                fp,
                matrix.reshape(len(rows), dim) if rows else np.zeros((0, dim), dtype=np.float32),
                {lab: row for row, (lab, _) in enumerate(rows)},
            )
        _, matrix, positions = self._matrix
        present = [lab for lab in labels if lab in positions]
        if not present:
            return {}
        sims = matrix[[positions[lab] for lab in present]] @ vector
        return {lab: float(sim) for lab, sim in zip(present, sims, strict=True)}

    def cached_vectors(self, hashes: set[str]) -> dict[str, Matrix]:
        """Stored embeddings (this model) of the given text hashes."""
        wanted = sorted(hashes)
        found: dict[str, Matrix] = {}
        with self.db.read() as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for h, blob in conn.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE model=? AND text_hash IN"
                    f" ({marks})",
                    (self.model_name, *chunk),
                ):
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _unembedded_texts(self) -> dict[str, str]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT t.text_hash, t.text FROM skill_texts t WHERE NOT EXISTS"
                " (SELECT 1 FROM embeddings e WHERE e.model=? AND e.text_hash=t.text_hash)",
                (self.model_name,),
            ).fetchall()
        return {h: t for h, t in rows}

    def _indexable(self) -> tuple[int, dict[int, str]]:
        """(number of surfaces, {label: text_hash} of those with a stored embedding)."""
        with self.db.read() as conn:
            total = int(conn.execute("SELECT count(*) FROM skill_texts").fetchone()[0])
            rows = conn.execute(
                "SELECT t.label, t.text_hash FROM skill_texts t JOIN embeddings e"
                " ON e.model=? AND e.text_hash=t.text_hash",
                (self.model_name,),
            ).fetchall()
        return total, {int(label): h for label, h in rows}

    def _vectors_for(self, wanted: Mapping[int, str], labels: list[int]) -> Matrix:
        found = self.cached_vectors({wanted[lab] for lab in labels})
        return _stack([found[wanted[lab]] for lab in labels], self._dim())

    def _dim(self) -> int:
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT dim FROM embeddings WHERE model=? LIMIT 1", (self.model_name,)
            ).fetchone()
        if row:
            return int(row[0])
        return self._embedder.dim if self._embedder is not None else 384

    def change_status(
        self, key: str | int, event_type: str, reason: str, **extra: str | float
    ) -> None:
        """Record a status event (deprecate, retire, promote, ...) for one skill."""
        from store.lifecycle.status import record

        if event_type not in STATUS_EVENTS:
            raise LibraryError(f"unknown status event {event_type!r}")
        if not reason.strip():
            raise LibraryError("a status change needs a reason")
        with self.db.write() as conn:
            sid = catalog.resolve(conn, key)
            if sid is None:
                raise LibraryError(f"no skill named {key!r}")
            name, status = conn.execute(
                "SELECT name, status FROM skills WHERE skill_id=?", (sid,)
            ).fetchone()
            record(self, conn, (sid, name, status), event_type, reason, **extra)

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
        # Cycles through the skill come from the cached dependency graph (a search of the
        # whole graph per skill shown is seconds at 200,000 relations).
        detail = catalog.get_skill(
            self.db,
            key,
            self.now(),
            self.dependency_graph.cycles_through,
            ImportanceRule.from_config(self.config),
        )
        if detail is None:
            raise LibraryError(f"no skill named {key!r}")
        detail = governed(self, detail)
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT pattern_id, confidence FROM patterns WHERE skill_name=?"
                " AND status='graduated' ORDER BY updated_at DESC, pattern_id LIMIT 1",
                (detail.summary.name,),
            ).fetchone()
        if row is None:
            return detail
        floor = float(self.config.get("patterns.min_confidence", 0.4))
        why = ""
        if float(row[1]) < floor:
            why = (
                f"graduated from pattern {row[0]}, whose confidence decayed to {row[1]:.2f}"
                f" (below {floor:.2f}): nobody has retrieved it lately"
            )
        return dataclasses.replace(detail, pattern_id=row[0], revalidate=why)

    def listing(self, folder: Path, **options: Any) -> ListingReport:
        """Claude Code's skill listing for a session in `folder`, against its budget
        (`store.skills.listing`); `options`: context_tokens, fraction, chars."""
        from store.skills.listing import budget  # the parser and Claude Code's settings

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
        from store.skills.overlap import OverlapFinder  # only the overlap report reads it

        if self._overlap is None:
            self._overlap = OverlapFinder(self.db, self.model_name)
        if key is None:
            return self._overlap.pairs()
        with self.db.read() as conn:
            sid = catalog.resolve(conn, key)
        if sid is None:
            raise LibraryError(f"no skill {key!r}")
        return self._overlap.pairs(sid)

    def suggest(self, context: str, limit: int | None = None) -> list[Suggestion]:
        return self.suggest_many([context], limit)[0]

    def suggest_many(
        self, contexts: Sequence[str], limit: int | None = None
    ) -> list[list[Suggestion]]:
        from store.search import Searcher

        self.sync_index(embed=True)
        searcher = Searcher(self)
        return searcher.suggest_many(contexts, limit or int(self.config.get("suggest.limit")))

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
        from store.ingest.pipeline import ingest

        since = self.last_seq()
        report = ingest(self, paths, progress=progress)
        if llm is not None:
            from store.ingest.upgrade import upgrade

            cold = upgrade(self, paths, llm, again=again, progress=progress)
            report = dataclasses.replace(
                report,
                cold=cold,
                withheld=report.withheld + cold.withheld,
                problems=report.problems + cold.problems,
            )
        if report.ingested:
            made = self.propose_relations(since=since)
            report = dataclasses.replace(report, relations_proposed=len(made))
            self.sync_index(embed=False)  # a candidate its runs promoted is served now
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
        from store.ingest.upgrade import plan

        return plan(self, paths, again=again, model=model, context_tokens=context_tokens)

    def drain_spool(self, *, locked: bool = False) -> DrainReport:
        """Ingest what the hooks queued (one worker at a time), then propose relations.
        `locked`: the caller holds the spool's lock already."""
        from store.ingest.worker import drain

        since = self.last_seq()
        report = drain(self, locked=locked)
        if report.ingested:
            self.propose_relations(since=since)
            self.sync_index(embed=False)  # a candidate its runs promoted is served now
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
        return review.decide(self, action, node_ids, reason=reason, summary=summary, scope=scope)

    def undo_review(self) -> list[Node]:
        """Revert this reviewer's last decision (batch)."""
        return review.undo_last(self)

    def audit(self, limit: int = 200, node_id: str | None = None) -> list[AuditEntry]:
        return review.audit(self.db, limit, node_id)

    def queue_counts(self) -> QueueCounts:
        """Pending nodes, and decisions since the reviewer's local midnight."""
        now = datetime.fromisoformat(self.clock()).astimezone()
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)
        return review.counts(self.db, midnight.isoformat(timespec="microseconds"))

    # -- forgetting (store/forget.py) ---------------------------------------------------

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
        from store import forget

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
        from store import forget

        return forget.forget(
            self,
            scope,
            target,
            reason=reason,
            regex=regex,
            ignore_case=ignore_case,
            with_messages=with_messages,
        )

    def scrub(self) -> tuple[bool, tuple[str, ...]]:
        """Checkpoint and truncate the WAL and vacuum: no erased bytes left in the files."""
        from store import forget

        return forget.scrub(self)

    def projects(self) -> list[str]:
        """Projects that have sessions, alphabetically."""
        with self.db.read() as conn:
            return [
                r[0] for r in conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project")
            ]

    # -- patterns, retrieval, graduation (DESIGN §7) ---------------------------------------

    def consolidate(
        self, *, full: bool = False, llm: Any = None, progress: Any = None
    ) -> ConsolidationReport:
        """Cluster approved nodes into patterns; `llm` classifies when given."""
        from store.patterns.consolidate import consolidate

        return consolidate(self, full=full, llm=llm, progress=progress)

    def decay(self) -> int:
        from store.patterns.decay import apply_decay

        return apply_decay(self)

    def patterns(
        self,
        *,
        kind: str | None = None,
        project: str | None = None,
        statuses: Sequence[str] = ("active", "decayed", "graduated"),
    ) -> list[Pattern]:
        from store.patterns.memory import list_patterns

        with self.db.read() as conn:
            return list_patterns(conn, kind=kind, project=project, statuses=statuses)

    def pattern(self, pattern_id: str) -> Pattern:
        from store.patterns.memory import get_pattern

        with self.db.read() as conn:
            found = get_pattern(conn, pattern_id)
        if found is None:
            raise LibraryError(f"no pattern {pattern_id!r}")
        return found

    def pattern_nodes(self, pattern_id: str) -> list[Node]:
        """A pattern's member nodes, most confident first."""
        with self.db.read() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT m.node_id FROM pattern_members m JOIN nodes n USING(node_id)"
                    " WHERE m.pattern_id=? ORDER BY n.confidence DESC, n.node_id",
                    (pattern_id,),
                )
            ]
        return [self.node(node_id) for node_id in ids]

    @property
    def memory(self) -> Memory:
        from store.patterns.memory import Memory

        if self._memory is None:
            self._memory = Memory(self)
        return self._memory

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
        from store.patterns.memory import profile

        return profile(self, project, log=log)

    def suggest_logged(
        self, context: str, *, limit: int | None = None, project: str = "", tool: str = "suggest"
    ) -> list[Suggestion]:
        """`suggest` for an agent or a person asking: the answer goes into the retrieval log."""
        from store.patterns.memory import log_retrieval

        found = self.suggest(context, limit)
        log_retrieval(
            self,
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
        from store.patterns.memory import log_retrieval

        return log_retrieval(self, tool, query, hits, project=project, session_id=session_id)

    def retrievals(self, limit: int = 100) -> list[Retrieval]:
        from store.patterns.memory import retrievals

        return retrievals(self, limit)

    def project_for(self, cwd: str) -> str:
        """The known project a working directory belongs to ("" when none); see
        `session_start.project_for`."""
        from store.patterns.session_start import project_for

        with self.db.read() as conn:
            return project_for(conn, cwd)

    def graduation(self, *, include_all: bool = False) -> list[GraduationCheck]:
        from store.patterns.graduate import checks

        return checks(self, include_all=include_all)

    def graduation_check(self, pattern_id: str) -> GraduationCheck:
        from store.patterns.graduate import check

        pattern = self.pattern(pattern_id)
        with self.db.read() as conn:
            return check(self, pattern, conn)

    def graduate(self, *, dry_run: bool = False) -> tuple[list[GraduationCheck], list[Draft]]:
        from store.patterns.graduate import graduate

        return graduate(self, dry_run=dry_run)

    def draft(self, pattern_id: str) -> Draft:
        from store.patterns.graduate import create_draft

        return create_draft(self, pattern_id)

    def drafts(self, status: str | None = None) -> list[Draft]:
        from store.patterns.graduate import drafts

        return drafts(self, status)

    def get_draft(self, draft_id: str) -> Draft:
        from store.patterns.graduate import get_draft

        return get_draft(self, draft_id)

    def approve_draft(self, draft_id: str, root: Path | None = None) -> Draft:
        from store.patterns.graduate import approve_draft

        return approve_draft(self, draft_id, root)

    def keep_literal(self, draft_id: str, literal: str, *, keep: bool = True) -> Draft:
        """Keep one of a pending draft's transient literals on purpose (or replace it again)."""
        from store.patterns.graduate import keep_literal

        return keep_literal(self, draft_id, literal, keep=keep)

    # -- enrichment of thin skills (issue 16) --------------------------------------------

    def thin_skills(self) -> list[ThinSkill]:
        """Skills whose frontmatter is too thin for an agent to pick them."""
        return enrich.thin_skills(self)

    def enrich(self, key: str | int, llm: enrich.ToolCaller | None = None) -> Enrichment:
        """Propose a rewrite of a skill's discovery frontmatter (by `llm`, else by rules)."""
        return enrich.propose(self, key, llm)

    def enrichments(self, status: str | None = "pending") -> list[Enrichment]:
        return enrich.listing(self, status)

    def enrichment(self, proposal_id: str) -> Enrichment:
        return enrich.get(self, proposal_id)

    def approve_enrichment(self, proposal_id: str) -> Enrichment:
        """Write the approved SKILL.md, then rescan its root: a new version, served at once."""
        path = enrich.write(self, proposal_id)
        self._rescan_for(path)
        return enrich.get(self, proposal_id)

    def reject_enrichment(self, proposal_id: str, reason: str) -> Enrichment:
        return enrich.reject(self, proposal_id, reason)

    def _rescan_for(self, path: Path) -> None:
        """Scan the root a written SKILL.md belongs to, keeping its scope and precedence."""
        with self.db.read() as conn:
            row = conn.execute("SELECT root FROM skills WHERE fs_path=?", (str(path),)).fetchone()
        root = Path(str(row[0])) if row else path.parent.parent
        configured = {os.path.realpath(r.path) for r in self.configured_roots()}
        if os.path.realpath(root) in configured:
            self.scan()
        else:
            self.scan([root])

    def reject_draft(self, draft_id: str, reason: str) -> Draft:
        from store.patterns.graduate import reject_draft

        return reject_draft(self, draft_id, reason)

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
        """Append one lifecycle event for a skill (`AGENT_LIFECYCLE_EVENTS` names), checked:
        the skill and version must exist; an outcome needs success or failure. `at` dates an
        outcome that happened earlier than it is recorded."""
        if event not in AGENT_LIFECYCLE_EVENTS:
            allowed = ", ".join(AGENT_LIFECYCLE_EVENTS)
            raise LibraryError(f"unknown lifecycle event {event!r} (one of: {allowed})")
        with self.db.write() as conn:
            sid = catalog.resolve(conn, key)
            if sid is None:
                raise LibraryError(f"no skill named {key!r}")
            row = conn.execute(
                "SELECT name, status, current_version FROM skills WHERE skill_id=?", (sid,)
            ).fetchone()
            name, status, current = row[0], row[1], int(row[2] or 0)
            if status in ("retired", "uninstalled") and event != "outcome_recorded":
                raise LibraryError(f"skill {name!r} is {status}")
            if f"skill.{event}" in STATUS_EVENTS:
                from store.lifecycle.status import check

                check(name, status, f"skill.{event}")
            detail = redact(detail)  # an agent's or a person's words: no secret kept
            payload: dict[str, Any] = {"skill_id": sid, "reason": detail, "detail": detail}
            if event == "outcome_recorded":
                if success is None:
                    raise LibraryError("an outcome needs success or failure")
                number = current if version is None else int(version)
                known = conn.execute(
                    "SELECT 1 FROM skill_versions WHERE skill_id=? AND version_no=?",
                    (sid, number),
                ).fetchone()
                if known is None:
                    raise LibraryError(f"skill {name!r} has no version {number}")
                payload.update(
                    version_no=number, success=success, session_id=session_id, inferred=inferred
                )
                if at:
                    payload["at"] = at
            appended = self.append_event(conn, f"skill.{event}", f"skill:{name}", payload)
            decided = None
            if event == "outcome_recorded":  # a candidate's runs may now decide it
                decided = settle(conn, self.append_event, self.config, sid)
        if decided is not None and decided.type == "skill.candidate_promoted":
            self.sync_index(embed=False)  # what is served (and searched) changed
        return appended

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

    def health(
        self, *, apply: bool = False, trend: bool = True
    ) -> tuple[list[SkillHealth], list[str]]:
        """Health per skill and version, worst first; `apply` also demotes drifting skills
        and promotes proven proposed ones (events), returning what changed. `trend=False`
        (without `apply`) skips the weekly trends and the cited-file checks: the verdicts
        in half the time, for a first look."""
        from store.lifecycle import health

        if apply:
            found, changes = health.apply(self)
            if changes:
                self.sync_index(embed=False)  # a candidate that took over is served now
            return found, changes
        return health.compute(self, check_files=trend, trend=trend), []

    @property
    def dependency_graph(self) -> DependencyGraph:
        from store.lifecycle.graph import DependencyGraph

        if self._graph is None:
            self._graph = DependencyGraph(self)
        return self._graph

    def blast(self, key: str | int, version: int = 0) -> BlastRadius:
        """Transitive dependents, plus the sessions, patterns and drafts relying on a skill;
        with `version`, that version's (dependents pinned to another one are not hit)."""
        from store.lifecycle.graph import blast_radius

        return blast_radius(self, key, version)

    def relate(
        self, source: str, kind: str, target: str, *, remove: bool = False, version: int = 0
    ) -> str:
        """Add or remove a hand-made relation (checked: no self-relation, no cycle, no stable
        skill on a proposed one); `target@N` or `version` pins the target's version N."""
        from store.lifecycle.graph import relate

        return relate(self, source, kind, target, remove=remove, version=version)

    # -- the retirement runbook (DESIGN §8) --------------------------------------------------

    def start_run(self, key: str | int, reason: str) -> Run:
        """Open a retirement runbook run for a skill (or return its open run)."""
        from store.lifecycle import runbook

        return runbook.start(self, key, reason)

    def runs(self, *, status: str | None = None, skill: str | None = None) -> list[Run]:
        from store.lifecycle import runbook

        return runbook.runs(self, status=status, skill=skill)

    def run(self, run_id: str) -> Run:
        from store.lifecycle import runbook

        return runbook.get_run(self, run_id)

    def open_run(self, key: str | int) -> Run | None:
        from store.lifecycle import runbook

        return runbook.open_run_for(self, key)

    def plan_step(self, run_id: str, **inputs: str) -> StepPlan:
        """What the run's next step will do (nothing is changed)."""
        from store.lifecycle import runbook

        return runbook.plan(self, run_id, **inputs)

    def run_step(self, run_id: str, step: int, **inputs: str) -> Run:
        """Do the run's next step, atomically with its `runbook.step` event."""
        from store.lifecycle import runbook

        return runbook.execute(self, run_id, step, **inputs)

    def abandon_run(self, run_id: str, reason: str, *, restore: bool = True) -> Run:
        """Close an open run unfinished; `restore` puts back the statuses it changed."""
        from store.lifecycle import runbook

        return runbook.abandon(self, run_id, reason, restore=restore)

    def left_behind(self, run_id: str) -> LeftBehind:
        """What abandoning an open run would leave behind (nothing is changed)."""
        from store.lifecycle import runbook

        return runbook.left_behind(self, run_id)

    def incidents(self, skill: str | None = None) -> list[Incident]:
        from store.lifecycle import runbook

        return runbook.incidents(self, skill)

    # -- the dependency graph and health, for the Graph and Health screens --------------------

    def dependencies(self, key: str | int) -> list[Dependency]:
        """A skill's outgoing relations with each target's status ("missing": dangling)."""
        from store.lifecycle.graph import dependencies

        return dependencies(self, key)

    def graph_problems(self) -> GraphProblems:
        """Dangling references, `requires`/`extends` cycles and self-relations."""
        from store.lifecycle.graph import problems

        return problems(self)

    def graph_focus(self, key: str | int, *, whole: bool = True) -> GraphFocus:
        """A skill with its dependencies, blast radius (the nearest 500 dependents listed,
        all counted) and the problems touching it; `whole=False`: only what SQL answers at
        once (the direct dependents), without loading the whole graph."""
        from store.lifecycle.graph import focus

        return focus(self, key, whole=whole)

    def default_graph_skill(self) -> str | None:
        """The deprecated skill with the largest blast radius, else the first by name."""
        from store.lifecycle.graph import default_focus

        return default_focus(self)

    def outcomes(self, key: str | int, limit: int = 20) -> list[Outcome]:
        """A skill's most recent recorded runs, newest first."""
        from store.lifecycle.health import recent_outcomes

        return recent_outcomes(self, key, limit)

    def health_plan(self) -> list[HealthChange]:
        """What `health(apply=True)` would change now (nothing is changed)."""
        from store.lifecycle import health

        return health.plan(self)

    def health_trends(self) -> dict[int, tuple[float, ...]]:
        """Weekly failure rates by skill id (what `health(trend=False)` leaves out)."""
        from store.lifecycle import health

        return health.trends(self)

    def health_file_flags(self) -> dict[int, tuple[str, ...]]:
        """The "missing file" flags by skill id (what `health(trend=False)` leaves out)."""
        from store.lifecycle import health

        return health.file_flags(self)

    def health_first(self, limit: int = 200) -> tuple[list[SkillHealth], dict[str, int]]:
        """The worst `limit` skills (no trends or flags) and the count of every verdict: a
        first look that costs one grouped scan."""
        from store.lifecycle import health

        return health.first(self, limit)

    def health_settings(self) -> dict[str, float]:
        """The health window and thresholds (`[health]` in the config)."""
        from store.lifecycle import health

        return health.settings(self)

    @contextmanager
    def acting_as(self, actor: str) -> Iterator[None]:
        """Record events as someone else for a while (the demo's scripted history)."""
        previous, self._actor = self._actor, actor
        try:
            yield
        finally:
            self._actor = previous

    # -- lineage (versions, status history, provenance) --------------------------------------

    def lineage(self, key: str | int, *, events_limit: int = 20, events_offset: int = 0) -> Lineage:
        """A skill's versions, status history, provenance chain, events, runs and incidents."""
        from store.lifecycle.lineage import lineage

        return lineage(self, key, events_limit=events_limit, events_offset=events_offset)

    def version_diff(self, key: str | int, a: int, b: int) -> str:
        """A bounded unified diff of a skill's SKILL.md between versions `a` and `b`
        (`a` = 0: the whole of `b`)."""
        from store.lifecycle.lineage import version_diff

        return version_diff(self, key, a, b)

    def skill_events(
        self, key: str | int, *, limit: int = 20, offset: int = 0
    ) -> tuple[tuple[Event, ...], int]:
        """One page of a skill's events, newest first, and how many there are."""
        from store.lifecycle.lineage import events_page

        return events_page(self, key, limit, offset)

    def lineage_default(self) -> str | None:
        """The most recently graduated skill, else the most recently changed one."""
        from store.lifecycle.lineage import default_skill

        return default_skill(self)

    # -- computed relations: co-usage proposals (DESIGN §5) ---------------------------------

    def propose_relations(self, *, since: int | None = None) -> list[RelationProposal]:
        """Propose `often_used_with` for every new open triangle of co-usage (with `since`,
        an event seq: only pairs that sessions ingested after it used together)."""
        from store.lifecycle import proposals

        return proposals.compute(self, since=since)

    def relation_proposals(self, status: str | None = "pending") -> list[RelationProposal]:
        """Relation proposals with `status` (None: all), most shared sessions first."""
        from store.lifecycle import proposals

        return proposals.proposals(self, status)

    def accept_relation(self, a: str, b: str) -> RelationProposal:
        """Accept a proposal: adds `a often_used_with b` (origin computed)."""
        from store.lifecycle import proposals

        return proposals.accept(self, a, b)

    def reject_relation(self, a: str, b: str, reason: str) -> RelationProposal:
        """Reject a proposal (with a reason); it is never proposed again."""
        from store.lifecycle import proposals

        return proposals.reject(self, a, b, reason)

    def proposal_sessions(self, a: str, b: str) -> list[SharedSession]:
        """The sessions a proposal's two skills were used in together."""
        from store.lifecycle import proposals

        return proposals.shared_sessions(self, a, b)


def relation_rows(parsed: Any) -> list[list[Any]]:
    """A parsed skill's relations as event rows: [type, target], or [type, target, version]
    when pinned."""
    pins = {(kind, target): version for kind, target, version in parsed.pins}
    return [
        [kind, target, pins[(kind, target)]] if (kind, target) in pins else [kind, target]
        for kind, target in parsed.relations
    ]


def scan_batch_size(count: int) -> int:
    """Skills per committed batch for a scan that found `count`."""
    return min(SCAN_BATCH_MAX, max(SCAN_BATCH_MIN, -(-count // 20)))


@dataclasses.dataclass
class _ScanTally:
    """What a scan did so far, batch after batch."""

    skipped: list[SkippedFile]
    installed: int = 0
    changed: int = 0
    unchanged: int = 0
    embedded: int = 0


def _same(row: sqlite3.Row, candidate: Candidate) -> bool:
    return bool(
        row["content_hash"] == candidate.content_hash and row["files_hash"] == candidate.files_hash
    )


def _kept(skip: SkippedFile, row: sqlite3.Row | None) -> SkippedFile:
    if row is None or row["status"] == "uninstalled":
        return skip
    return SkippedFile(skip.path, skip.code, f"{skip.reason}; kept the previous version")


def _stack(vectors: list[Matrix], dim: int) -> Matrix:
    if not vectors:
        return np.zeros((0, dim), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32)
