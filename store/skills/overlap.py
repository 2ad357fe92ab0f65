"""Skills routing confuses, and exact duplicates under different names (issue 15, item 2).

Exact duplicates: the same description and body (whitespace and case folded) under two
names. Confusable pairs are found in two steps. Cosine between the skills' cards (name and
description, the vectors `suggest` already holds) only proposes candidates; the decision is
the ranking's: each skill's own description (its name left out, since a task rarely names
the skill) is routed through `suggest`'s relevance — FTS5 bm25 over name, description, use
and body with the same weights, cosine against card and use surfaces blended as `suggest`
blends them, the same 0.6/0.4 fusion — over every skill the description reaches, and the
pair is confusable when the other skill scores at least `CONFUSABLE` of the skill's own
score on its own words. Suggestions: retire one of an exact duplicate; merge two confusable
skills whose bodies say the same; otherwise sharpen one description with the words that set
it apart.

Reads the catalog (one connection) and the stored embeddings; loads no model."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from store import catalog
from store.db import Database
from store.kernel import Kernel, LibraryError
from store.models.overlap import OverlapPair
from store.query_terms import STOPWORDS, fts_query, query_terms
from store.search import (
    BM25_WEIGHTS,
    COMMON_MIN_DOCS,
    COMMON_SHARE,
    Weights,
    term_frequencies,
)
from store.skills.surface import SLOTS, name_words

#: Card cosine at or above which two skills are candidates.
CANDIDATE_COSINE = 0.75
#: Neighbours looked at per skill (by card cosine).
NEIGHBOURS = 8
#: A pair is confusable when one scores at least this share of the other's own score on the
#: other's description.
CONFUSABLE = 0.85
#: Bodies this similar (Jaccard of word 3-shingles) say the same thing: merge, not sharpen.
SAME_BODY = 0.5
_BLOCK = 1024
_WORD = re.compile(r"[a-z0-9]+")
Vectors = npt.NDArray[np.float32]


@dataclass
class _Skill:
    sid: int
    name: str
    description: str
    when_to_use: str
    body_hash: str
    uses: int
    scope_rank: int
    status: str
    row: int = -1  # row in the card matrix (-1: no stored vector)
    use_row: int = -1


@dataclass
class Catalog:
    """The active skills (one per name: shadowed ones are not routed) and their vectors."""

    skills: list[_Skill]
    cards: Vectors
    uses: Vectors  # the `use` surface (when_to_use, triggers, tags) where a skill has one
    by_id: dict[int, _Skill] = field(default_factory=dict)


def load_catalog(conn: sqlite3.Connection, model: str) -> Catalog:
    rows = conn.execute(
        """
        SELECT s.skill_id, s.name, v.description, v.when_to_use, v.body_hash,
               s.use_count, s.scope_rank, s.status
        FROM skills s
        JOIN skill_versions v ON v.skill_id = s.skill_id AND v.version_no = s.current_version
        WHERE s.status NOT IN ('retired', 'uninstalled')
          AND NOT EXISTS (SELECT 1 FROM skills o WHERE o.name = s.name
                AND o.status != 'uninstalled'
                AND (o.scope_rank, o.root_rank, o.fs_path) < (s.scope_rank, s.root_rank, s.fs_path))
        ORDER BY s.skill_id
        """
    ).fetchall()
    skills = [_Skill(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), r[7]) for r in rows]
    by_id = {s.sid: s for s in skills}
    cards: list[bytes] = []
    uses: list[bytes] = []
    for label, blob in conn.execute(
        "SELECT t.label, e.vector FROM skill_texts t JOIN embeddings e"
        " ON e.model = ? AND e.text_hash = t.text_hash ORDER BY t.label",
        (model,),
    ):
        skill = by_id.get(int(label) // SLOTS)
        if skill is None:
            continue
        if int(label) % SLOTS == 0:
            skill.row = len(cards)
            cards.append(blob)
        else:
            skill.use_row = len(uses)
            uses.append(blob)
    return Catalog(skills, _matrix(cards), _matrix(uses), by_id)


def _matrix(blobs: Sequence[bytes]) -> Vectors:
    if not blobs:
        return np.zeros((0, 1), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype=np.float32)
    return flat.reshape(len(blobs), -1)


# -- exact duplicates ------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def body_texts(conn: sqlite3.Connection, hashes: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(hashes))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(conn.execute(f"SELECT hash, text FROM blobs WHERE hash IN ({marks})", chunk))
    return found


def duplicates(conn: sqlite3.Connection, catalog: Catalog) -> list[tuple[_Skill, _Skill]]:
    """Pairs of skills with different names and the same normalised description and body
    (bodies are read only for skills whose descriptions already match)."""
    by_description: dict[str, list[_Skill]] = {}
    for skill in catalog.skills:
        by_description.setdefault(_normal(skill.description), []).append(skill)
    groups = [g for g in by_description.values() if len({s.name for s in g}) > 1]
    bodies = body_texts(conn, (s.body_hash for g in groups for s in g))
    pairs = []
    for group in groups:
        by_body: dict[str, list[_Skill]] = {}
        for skill in group:
            by_body.setdefault(_normal(bodies.get(skill.body_hash, "")), []).append(skill)
        for same in by_body.values():
            ordered = sorted(same, key=lambda s: s.name)
            pairs += [
                (a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :] if a.name != b.name
            ]
    return pairs


# -- candidates by card cosine ---------------------------------------------------------------


def neighbours(
    catalog: Catalog, only: Iterable[int] | None = None
) -> dict[int, list[tuple[int, float]]]:
    """Each skill's nearest others by card cosine (≥ CANDIDATE_COSINE, at most NEIGHBOURS),
    exact, in blocks."""
    with_row = [s for s in catalog.skills if s.row >= 0]
    if not with_row:
        return {}
    matrix = catalog.cards[np.array([s.row for s in with_row])]
    wanted_ids = None if only is None else set(only)
    wanted = [i for i, s in enumerate(with_row) if wanted_ids is None or s.sid in wanted_ids]
    found: dict[int, list[tuple[int, float]]] = {}
    for start in range(0, len(wanted), _BLOCK):
        block = wanted[start : start + _BLOCK]
        sims = matrix[block] @ matrix.T
        sims[np.arange(len(block)), block] = -1.0  # not its own neighbour
        rows, cols = np.nonzero(sims >= CANDIDATE_COSINE)
        per_row: dict[int, list[tuple[int, float]]] = {}
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            per_row.setdefault(r, []).append((with_row[c].sid, float(sims[r, c])))
        for r, near in per_row.items():
            ranked = sorted(near, key=lambda p: (-p[1], p[0]))[:NEIGHBOURS]
            found[with_row[block[r]].sid] = ranked
    return found


# -- the ranking -----------------------------------------------------------------------------


@dataclass
class Router:
    """`suggest`'s relevance for a skill's own description over the skills that could take
    its tasks: the skill and its neighbours. Lexical: FTS5 bm25 with `suggest`'s column
    weights and its rule for dropping terms most skills share, normalised by the best of the
    set; dense: card and use cosine to the skill's card, blended as `suggest` blends them
    (not stretched: over a handful of skills a min-max would turn a hair into the whole
    range); fused with `suggest`'s 0.6/0.4."""

    conn: sqlite3.Connection
    catalog: Catalog
    near: dict[int, list[tuple[int, float]]]
    weights: Weights = field(default_factory=Weights)
    documents: int = 0
    frequency: dict[str, int] = field(default_factory=dict)
    cache: dict[int, dict[int, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.documents = int(self.conn.execute("SELECT count(*) FROM skills_fts").fetchone()[0])

    def prepare(self, skills: Iterable[_Skill]) -> None:
        """Look up how common every word of these skills' descriptions is, in one batch."""
        words = sorted(
            {w for s in skills for w in query_terms(_own_words(s))} - set(self.frequency)
        )
        self.frequency.update(zip(words, term_frequencies(self.conn, words), strict=True))

    def scores(self, skill: _Skill, extra: Iterable[int] = ()) -> dict[int, float]:
        """Fused relevance, on `skill`'s description, of it, its neighbours and `extra`."""
        if skill.sid in self.cache:
            return self.cache[skill.sid]
        candidates = {skill.sid, *(sid for sid, _ in self.near.get(skill.sid, ())), *extra}
        lexical = self._lexical(skill, sorted(candidates))
        dense = self._dense(skill, candidates)
        w = self.weights
        fused = {
            sid: w.lexical * lexical.get(sid, 0.0) + w.dense * dense.get(sid, 0.0)
            for sid in candidates
        }
        self.cache[skill.sid] = fused
        return fused

    def _lexical(self, skill: _Skill, candidates: list[int]) -> dict[int, float]:
        words = query_terms(_own_words(skill))
        if any(w not in self.frequency for w in words):
            self.prepare([skill])
        ceiling = max(COMMON_SHARE * self.documents, COMMON_MIN_DOCS)
        terms = [w for w in words if 0 < self.frequency.get(w, 0) <= ceiling]
        if not terms:
            return {}
        b = BM25_WEIGHTS
        marks = ",".join("?" * len(candidates))
        rows = self.conn.execute(
            f"SELECT rowid, -bm25(skills_fts, {b[0]}, {b[1]}, {b[2]}, {b[3]}) FROM skills_fts"
            f" WHERE skills_fts MATCH ? AND rowid IN ({marks})",
            (fts_query(terms), *candidates),
        ).fetchall()
        best = max((r[1] for r in rows), default=0.0) or 1.0
        return {int(sid): float(score) / best for sid, score in rows}

    def _dense(self, skill: _Skill, candidates: set[int]) -> dict[int, float]:
        if skill.row < 0:
            return {}
        query = self.catalog.cards[skill.row]
        raw: dict[int, float] = {}
        card_share = self.weights.card
        for sid in candidates:
            other = self.catalog.by_id.get(sid)
            if other is None or other.row < 0:
                continue
            card = float(self.catalog.cards[other.row] @ query)
            use = float(self.catalog.uses[other.use_row] @ query) if other.use_row >= 0 else card
            raw[sid] = card_share * card + (1 - card_share) * max(card, use)
        return raw


def _own_words(skill: _Skill) -> str:
    """A skill's description and when_to_use without its own name's words: a task rarely
    names the skill it needs."""
    own = set(name_words(skill.name).lower().split())
    text = f"{skill.description} {skill.when_to_use}"
    return " ".join(w for w in text.split() if w.lower().strip(".,;:()'\"") not in own)


# -- pairs -----------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _shingles(text: str, size: int = 3) -> frozenset[str]:
    words = _WORD.findall(text.lower()[:20_000])
    return frozenset(" ".join(words[i : i + size]) for i in range(max(0, len(words) - size + 1)))


def body_similarity(a: str, b: str) -> float:
    left, right = _shingles(a), _shingles(b)
    if not left or not right:
        return 1.0 if _normal(a) == _normal(b) else 0.0
    return len(left & right) / len(left | right)


@lru_cache(maxsize=8192)
def _terms(text: str) -> list[str]:
    return [
        w for w in dict.fromkeys(_WORD.findall(text.lower())) if len(w) > 2 and w not in STOPWORDS
    ]


def _pair(
    a: _Skill,
    b: _Skill,
    kind: str,
    cosine: float,
    a_to_b: float,
    b_to_a: float,
    bodies: dict[str, str],
) -> OverlapPair:
    if a.name > b.name:
        a, b, a_to_b, b_to_a = b, a, b_to_a, a_to_b
    a_terms, b_terms = (
        _terms(a.description + " " + a.when_to_use),
        _terms(b.description + " " + b.when_to_use),
    )
    shared = tuple(t for t in a_terms if t in set(b_terms))[:10]
    a_only = tuple(t for t in a_terms if t not in set(b_terms))[:8]
    b_only = tuple(t for t in b_terms if t not in set(a_terms))[:8]
    same_body = body_similarity(bodies.get(a.body_hash, ""), bodies.get(b.body_hash, ""))
    confusion = round((min(1.0, a_to_b) + min(1.0, b_to_a)) / 2, 4)
    if kind == "duplicate":
        keep, drop = _keeper(a, b)
        suggestion = "retire_one"
        reason = (
            f"the same description and body under two names: keep {keep.name}"
            f" ({_why_keep(keep, drop)}) and retire {drop.name}"
        )
    elif same_body >= SAME_BODY:
        suggestion = "merge"
        reason = (
            f"routing cannot tell them apart and their bodies overlap ({same_body:.0%}):"
            " merge them into one skill and retire the other"
        )
    else:
        weaker, other = (a, b) if a_to_b >= b_to_a else (b, a)
        apart = list(a_only if weaker is a else b_only)
        if len(apart) < 3:  # the description says nothing of its own: the body does
            theirs = set(_terms(bodies.get(other.body_hash, "")))
            apart += [t for t in _terms(bodies.get(weaker.body_hash, "")) if t not in theirs]
        suggestion = "sharpen"
        reason = (
            f"different instructions that routing confuses: sharpen {weaker.name}'s description"
            + (f" with what sets it apart ({', '.join(apart[:5])})" if apart else "")
        )
    return OverlapPair(
        a=a.name,
        b=b.name,
        kind=kind,
        suggestion=suggestion,
        reason=reason,
        cosine=round(cosine, 4),
        confusion=confusion,
        a_to_b=round(a_to_b, 4),
        b_to_a=round(b_to_a, 4),
        body_similarity=round(same_body, 4),
        shared_terms=shared,
        a_only=a_only,
        b_only=b_only,
        a_id=a.sid,
        b_id=b.sid,
    )


def _keeper(a: _Skill, b: _Skill) -> tuple[_Skill, _Skill]:
    ranked = sorted((a, b), key=lambda s: (-s.uses, s.scope_rank, s.name))
    return ranked[0], ranked[1]


def _why_keep(keep: _Skill, drop: _Skill) -> str:
    if keep.uses != drop.uses:
        return f"used {keep.uses} times against {drop.uses}"
    if keep.scope_rank != drop.scope_rank:
        return "higher precedence"
    return "first by name"


def _relative(scores: dict[int, float], own: int, other: int) -> float:
    mine = scores.get(own, 0.0)
    return scores.get(other, 0.0) / mine if mine > 0 else 0.0


def overlaps(
    conn: sqlite3.Connection, catalog: Catalog, skill_id: int | None = None
) -> list[OverlapPair]:
    """Every overlapping pair in the catalog (or only those of `skill_id`), worst first."""
    near = neighbours(catalog, None if skill_id is None else [skill_id])
    if skill_id is not None:  # the skill's neighbours compete on their own tasks too
        near.update(neighbours(catalog, {sid for sid, _ in near.get(skill_id, ())}))
    router = Router(conn, catalog, near)
    router.prepare(catalog.by_id[sid] for sid in near)
    pairs: list[tuple[_Skill, _Skill, str, float, float, float]] = []
    seen: set[tuple[int, int]] = set()
    for a, b in duplicates(conn, catalog):
        if skill_id is None or skill_id in (a.sid, b.sid):
            seen.add(_key(a, b))
            pairs.append((a, b, "duplicate", _cosine(catalog, a, b), 1.0, 1.0))
    for sid, close in near.items():
        if skill_id is not None and sid != skill_id:
            continue
        a = catalog.by_id[sid]
        for other_id, cosine in close:
            b = catalog.by_id[other_id]
            if _key(a, b) in seen:
                continue
            seen.add(_key(a, b))
            a_to_b = _relative(router.scores(a, [b.sid]), a.sid, b.sid)
            b_to_a = _relative(router.scores(b, [a.sid]), b.sid, a.sid)
            if max(a_to_b, b_to_a) >= CONFUSABLE:
                pairs.append((a, b, "confusable", cosine, a_to_b, b_to_a))
    bodies = body_texts(conn, (s.body_hash for p in pairs for s in p[:2]))
    found = [_pair(*p, bodies) for p in pairs]
    return sorted(found, key=lambda p: (p.kind != "duplicate", -p.confusion, -p.cosine, p.a, p.b))


class OverlapFinder:
    """Overlaps for a library, with the catalog kept while it does not change (the Skills
    screen asks for one skill's pairs each time the cursor rests on it)."""

    def __init__(self, db: Database, model: str) -> None:
        self.db = db
        self.model = model
        self._catalog: tuple[tuple[object, ...], Catalog] | None = None

    def pairs(self, skill_id: int | None = None) -> list[OverlapPair]:
        with self.db.read() as conn:
            return overlaps(conn, self._current(conn), skill_id)

    def _current(self, conn: sqlite3.Connection) -> Catalog:
        signature = (
            *conn.execute("SELECT count(*), max(updated_at) FROM skills").fetchone(),
            *conn.execute("SELECT count(*), max(label) FROM skill_texts").fetchone(),
            self.model,
        )
        if self._catalog is None or self._catalog[0] != signature:
            self._catalog = (signature, load_catalog(conn, self.model))
        return self._catalog[1]


def _key(a: _Skill, b: _Skill) -> tuple[int, int]:
    return (min(a.sid, b.sid), max(a.sid, b.sid))


def _cosine(catalog: Catalog, a: _Skill, b: _Skill) -> float:
    if a.row < 0 or b.row < 0:
        return 0.0
    return float(catalog.cards[a.row] @ catalog.cards[b.row])


def finder(kernel: Kernel) -> OverlapFinder:
    """The library's overlap finder (`Kernel.service` keeps one per library)."""
    return OverlapFinder(kernel.db, kernel.model_name)


def pairs_for(kernel: Kernel, key: str | int | None = None) -> list[OverlapPair]:
    """Skills routing confuses and exact duplicates: every pair, or those of one skill."""
    found = kernel.service(finder)
    if key is None:
        return found.pairs()
    with kernel.db.read() as conn:
        sid = catalog.resolve(conn, key)
    if sid is None:
        raise LibraryError(f"no skill {key!r}")
    return found.pairs(sid)
