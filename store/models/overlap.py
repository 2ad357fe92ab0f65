"""Skills routing confuses, and exact duplicates under different names (issue 15, item 2)."""

from __future__ import annotations

from dataclasses import dataclass

#: What to do about a pair.
SUGGESTIONS: tuple[str, ...] = ("retire_one", "merge", "sharpen")


@dataclass(frozen=True)
class OverlapPair:
    """Two skills that overlap, with the evidence and a suggestion."""

    a: str  # skill names, in a stable order (a < b)
    b: str
    kind: str  # "duplicate" (same normalised description and body) | "confusable"
    suggestion: str  # one of SUGGESTIONS
    reason: str  # the suggestion in words
    cosine: float  # of the two descriptions' embeddings (0 when not computed)
    confusion: float  # how often routing picks the other for one's own tasks, 0..1
    a_to_b: float  # routing score of b over a's own tasks, relative to a's (1.0 = a tie)
    b_to_a: float
    body_similarity: float  # Jaccard of the bodies' word shingles, 0..1
    shared_terms: tuple[str, ...] = ()  # routing terms both descriptions use
    a_only: tuple[str, ...] = ()  # terms only a's description has (what sets it apart)
    b_only: tuple[str, ...] = ()
    a_id: int = 0
    b_id: int = 0
