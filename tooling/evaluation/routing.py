"""Routing quality: does `suggest` put the right skill first for a realistic task?

Queries (written by hand over the real skills in the corpus, never naming the skill) live
in `store/eval/routing_queries.jsonl`. A hit is the expected skill or any skill of the same
name (an agent activates skills by name, so a shadowed twin is the same answer).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from store.library import Library
from store.models import Suggestion
from store.skills.listing.routing import QUERIES as ROUTING_QUERIES

QUERIES = ROUTING_QUERIES
KS = (1, 5, 10)


@dataclass(frozen=True)
class Query:
    text: str
    expected: tuple[str, ...]  # "<repo-slug>/<skill-dir>" under corpus/skills
    split: str


def load_queries(path: Path = QUERIES) -> list[Query]:
    queries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            queries.append(Query(item["query"], tuple(item["expected"]), item["split"]))
    return queries


def expected_names(library: Library, skills_root: Path) -> dict[str, str]:
    """Map "<repo>/<dir>" to the skill name the library gave that folder."""
    root = skills_root.resolve()
    mapping = {}
    for row in library.list_skills():
        folder = Path(row.fs_path).parent
        if folder.is_relative_to(root):
            mapping[str(folder.relative_to(root))] = row.name
    return mapping


def rank_of(hits: Sequence[Suggestion], wanted: set[str]) -> int:
    """1-based rank of the first hit whose name is wanted; 0 when absent."""
    return next((i for i, h in enumerate(hits, start=1) if h.name in wanted), 0)


def evaluate(library: Library, skills_root: Path, queries: Sequence[Query]) -> dict[str, object]:
    """recall@1/5/10 and MRR, overall and per split."""
    names = expected_names(library, skills_root)
    results = library.suggest_many([q.text for q in queries], max(KS))
    ranks: dict[str, list[int]] = {}
    for query, hits in zip(queries, results, strict=True):
        rank = rank_of(hits, {names.get(e, e) for e in query.expected})
        for split in ("all", query.split):
            ranks.setdefault(split, []).append(rank)
    return {split: _metrics(values) for split, values in ranks.items()}


def _metrics(ranks: list[int]) -> dict[str, float]:
    total = max(len(ranks), 1)
    metrics = {f"recall@{k}": round(sum(1 for r in ranks if 0 < r <= k) / total, 4) for k in KS}
    metrics["mrr"] = round(sum(1.0 / r for r in ranks if r) / total, 4)
    metrics["queries"] = len(ranks)
    return metrics
