"""Which skills fit a task: lexical (FTS5 bm25) and dense (MiniLM) evidence, fused.

The fused score per skill is a weighted sum of the lexical score (bm25, scaled by the best
hit of the query) and the dense score (best cosine over the skill's discovery surfaces,
rescaled over the candidates), plus a small reciprocal-rank term that rewards agreement.
It is then weighted by importance and status. Every hit explains itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from store.embed import Matrix
from store.models import Suggestion
from store.skills.surface import SLOTS

if TYPE_CHECKING:
    from store.library import Library

TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
MAX_TERMS = 48
CANDIDATES = 200
BM25_WEIGHTS = (6.0, 1.0, 1.5)  # name, description, extra (when_to_use, triggers, tags)
STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further get gets got had hadn't has hasn't
have haven't having he her here hers herself him himself his how i i'd i'll i'm i've if in
into is isn't it it's its itself just let's like me more most much must my myself need needs
no nor not now of off on once only or other ought our ours ourselves out over own please
same she should shouldn't so some such than that that's the their theirs them themselves
then there there's these they they'd they'll they're they've this those through to too
under until up us very via want wants was wasn't we we'd we'll we're we've were weren't
what what's when where which while who whom why will with won't would wouldn't you you'd
you'll you're you've your yours yourself yourselves help hey hi thanks thank ok okay
something anything someone one ones lot lots really actually still already way thing things
""".split()
)


@dataclass
class Weights:
    lexical: float = 0.45
    dense: float = 0.55
    rrf: float = 0.10
    rrf_k: int = 60
    card: float = 0.5  # share of the card surface vs the best single surface in the dense score


@dataclass
class _Candidate:
    skill_id: int
    lexical: float = 0.0
    dense: float = 0.0
    lexical_rank: int = 0
    dense_rank: int = 0
    surfaces: dict[int, float] = field(default_factory=dict)


def query_terms(context: str) -> list[str]:
    """Lower-case words of a context, stopwords dropped, order kept, no repeats."""
    seen: dict[str, None] = {}
    for word in TOKEN.findall(context.lower()):
        word = word.split("'")[0]
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def fts_query(terms: Sequence[str]) -> str:
    """An explicit OR of individually quoted terms (plain spaces would mean AND)."""
    return " OR ".join(f'"{t}"' for t in terms)


def stem(word: str) -> str:
    """A crude suffix stripper, only for explaining matches to people."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def importance(
    last_used: str | None, installed: str, use_count: int, now: datetime | None = None
) -> float:
    """0.99 ** idle days with a floor of 0.3; each use adds a little, capped at 1."""
    moment = now or datetime.now(UTC)
    reference = last_used or installed
    try:
        then = datetime.fromisoformat(reference)
    except ValueError:
        return 1.0
    idle = max(0.0, (moment - then).total_seconds() / 86400.0)
    boost = 0.02 * math.log1p(max(use_count, 0))
    return float(min(1.0, max(0.3, 0.99**idle) + boost))


class Searcher:
    """Answers many contexts against one library in one process."""

    def __init__(self, library: Library, weights: Weights | None = None) -> None:
        self.library = library
        self.weights = weights or Weights()
        self.importance_weight = float(library.config.get("suggest.importance_weight"))
        self.deprecated_factor = float(library.config.get("suggest.deprecated_factor"))

    def suggest_many(self, contexts: Sequence[str], limit: int) -> list[list[Suggestion]]:
        texts = [c.strip() for c in contexts]
        vectors = self._embed([t for t in texts if t])
        results: list[list[Suggestion]] = []
        row = 0
        for text in texts:
            if not text:
                results.append([])
                continue
            vector = vectors[row] if vectors is not None else None
            row += 1
            results.append(self.suggest_one(text, vector, limit))
        return results

    def _embed(self, texts: list[str]) -> Matrix | None:
        if not texts or self.library.index.count == 0:
            return None
        from store.embed import EmbeddingError

        try:
            return self.library.embedder.embed(texts)
        except EmbeddingError:
            return None

    def suggest_one(self, context: str, vector: Matrix | None, limit: int) -> list[Suggestion]:
        terms = query_terms(context)
        candidates = self._lexical(terms)
        if vector is not None:
            self._dense(vector, candidates)
        if not candidates:
            return []
        rows = self._skill_rows(list(candidates))
        scored = [
            self._score(candidates[sid], rows[sid], terms) for sid in candidates if sid in rows
        ]
        scored.sort(key=lambda s: (-s.score, s.name))
        return scored[:limit]

    def _lexical(self, terms: list[str]) -> dict[int, _Candidate]:
        if not terms:
            return {}
        w = BM25_WEIGHTS
        with self.library.db.read() as conn:
            rows = conn.execute(
                f"SELECT rowid, -bm25(skills_fts, {w[0]}, {w[1]}, {w[2]}) FROM skills_fts"
                f" WHERE skills_fts MATCH ? ORDER BY rank LIMIT {CANDIDATES}",
                (fts_query(terms),),
            ).fetchall()
        best = max((r[1] for r in rows), default=0.0) or 1.0
        return {
            int(sid): _Candidate(int(sid), lexical=float(s) / best, lexical_rank=rank)
            for rank, (sid, s) in enumerate(rows, start=1)
        }

    def _dense(self, vector: Matrix, candidates: dict[int, _Candidate]) -> None:
        index = self.library.index
        for label, similarity in index.query(vector, CANDIDATES * 2):
            sid = label // SLOTS
            cand = candidates.setdefault(sid, _Candidate(sid))
            cand.surfaces[label % SLOTS] = similarity
        self._fill_missing_surfaces(vector, candidates)
        card = self.weights.card
        for cand in candidates.values():
            best = max(cand.surfaces.values(), default=0.0)
            cand.dense = card * cand.surfaces.get(0, best) + (1 - card) * best
        ranked = sorted(candidates.values(), key=lambda c: -c.dense)
        for rank, cand in enumerate(ranked, start=1):
            cand.dense_rank = rank
        top = ranked[0].dense if ranked else 1.0
        floor = ranked[-1].dense if ranked else 0.0
        spread = max(top - floor, 1e-6)
        for cand in candidates.values():
            cand.dense = max(0.0, (cand.dense - floor) / spread)

    def _fill_missing_surfaces(self, vector: Matrix, candidates: dict[int, _Candidate]) -> None:
        """Exact cosine for every surface of every candidate that the ANN query missed."""
        entries = self.library.index.entries
        wanted = [
            sid * SLOTS + slot
            for sid, cand in candidates.items()
            for slot in range(SLOTS)
            if sid * SLOTS + slot in entries and slot not in cand.surfaces
        ]
        if not wanted:
            return
        sims = self.library.index.vectors(wanted) @ vector
        for label, sim in zip(wanted, sims, strict=True):
            candidates[label // SLOTS].surfaces[label % SLOTS] = float(sim)

    def _skill_rows(self, ids: list[int]) -> dict[int, tuple[str, str, str, str | None, str, int]]:
        marks = ",".join("?" * len(ids))
        with self.library.db.read() as conn:
            rows = conn.execute(
                f"SELECT s.skill_id, s.name, s.status, v.description, s.last_used_at,"
                f" s.installed_at, s.use_count FROM skills s JOIN skill_versions v"
                f" ON v.skill_id=s.skill_id AND v.version_no=s.current_version"
                f" WHERE s.skill_id IN ({marks}) AND s.status NOT IN ('retired','uninstalled')"
                f" AND s.name NOT IN (SELECT name FROM denylist)"
                f" AND NOT EXISTS (SELECT 1 FROM skills o WHERE o.name=s.name"
                f"  AND o.status != 'uninstalled' AND (o.scope_rank, o.root_rank, o.fs_path)"
                f"  < (s.scope_rank, s.root_rank, s.fs_path))",
                ids,
            ).fetchall()
        return {int(r[0]): (r[1], r[2], r[3], r[4], r[5], int(r[6])) for r in rows}

    def _score(
        self, cand: _Candidate, row: tuple[str, str, str, str | None, str, int], terms: list[str]
    ) -> Suggestion:
        name, status, description, last_used, installed, uses = row
        w = self.weights
        rrf = sum(1.0 / (w.rrf_k + r) for r in (cand.lexical_rank, cand.dense_rank) if r)
        relevance = w.lexical * cand.lexical + w.dense * cand.dense + w.rrf * rrf * w.rrf_k / 2
        weight = importance(last_used, installed, uses)
        factor = (1 - self.importance_weight) + self.importance_weight * weight
        if status == "deprecated":
            factor *= self.deprecated_factor
        matched = _matched(terms, f"{name} {description}")
        reasons = _reasons(cand, status, weight)
        return Suggestion(
            skill_id=cand.skill_id,
            name=name,
            status=status,
            description=description,
            score=round(relevance * factor, 6),
            lexical=round(cand.lexical, 4),
            dense=round(cand.dense, 4),
            importance=round(weight, 4),
            matched_terms=tuple(matched),
            reasons=tuple(reasons),
        )


def _matched(terms: list[str], text: str) -> list[str]:
    stems = {stem(w) for w in TOKEN.findall(text.lower())}
    return [t for t in terms if stem(t) in stems]


def _reasons(cand: _Candidate, status: str, weight: float) -> list[str]:
    reasons = []
    if cand.lexical_rank:
        reasons.append(f"lexical rank {cand.lexical_rank}")
    if cand.dense_rank:
        reasons.append(f"dense rank {cand.dense_rank}")
    if status == "deprecated":
        reasons.append("deprecated: ranked below equals")
    if weight < 0.999:
        reasons.append(f"importance {weight:.2f} (idle)")
    return reasons
