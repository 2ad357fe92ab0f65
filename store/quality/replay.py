"""Replaying judges' verdicts on a new pending queue (issue 11's *judged* figure, measured
while the rules change).

Judges score a kit (`store.quality.kit`): one record per pending node, one verdict per
record and judge. When the rules change, the new queue of the same sessions is a new kit;
`replay` says how the old verdicts fall on it. A new node counts as judged when a judged
node has the same file (by name), an overlapping line range and the same type; a judged
node is *kept* when some new node matches it. Nodes no judge saw are counted and listed, to
be read. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Judged:
    """A judged node: where it was, what it said, and how many judges approved it."""

    file: str
    lines: tuple[int, int]
    type: str
    summary: str
    approvals: int
    judges: int


@dataclass
class ReplayReport:
    """How the verdicts fall on the new queue. `approved`, `split` and `rejected` are
    (kept, judged) for nodes every judge approved, some did, none did."""

    pending: int
    approved: tuple[int, int]
    split: tuple[int, int]
    rejected: tuple[int, int]
    unjudged: list[dict[str, Any]] = field(default_factory=list)
    kept: list[tuple[Judged, dict[str, Any]]] = field(default_factory=list)

    @property
    def share(self) -> float | None:
        """The approval share the kept judged nodes would score (a split counts half)."""
        kept = self.approved[0] + self.split[0] + self.rejected[0]
        if not kept:
            return None
        return (self.approved[0] + 0.5 * self.split[0]) / kept

    def as_dict(self) -> dict[str, Any]:
        return {
            "pending": self.pending,
            "approved_kept": list(self.approved),
            "split_kept": list(self.split),
            "rejected_kept": list(self.rejected),
            "share": None if self.share is None else round(self.share, 3),
            "unjudged": [
                {"file": r["file"], "lines": r["lines"], "type": r["type"], "summary": r["summary"]}
                for r in self.unjudged
            ],
        }


def judged(
    records: Iterable[Mapping[str, Any]], verdicts: Sequence[Iterable[Mapping[str, Any]]]
) -> list[Judged]:
    """The kit's records with their verdicts (one iterable of verdict lines per judge;
    a record a judge did not score counts as that judge's rejection)."""
    approving: dict[str, int] = {}
    for judge in verdicts:
        for v in judge:
            if v.get("verdict") == "approve":
                approving[str(v.get("id"))] = approving.get(str(v.get("id")), 0) + 1
    return [
        Judged(
            _name(str(r["file"])),
            (int(r["lines"][0]), int(r["lines"][1])),
            str(r["type"]),
            str(r.get("summary", "")),
            approving.get(str(r["id"]), 0),
            len(verdicts),
        )
        for r in records
    ]


def replay(old: Sequence[Judged], new: Sequence[Mapping[str, Any]]) -> ReplayReport:
    """How the judged nodes `old` fall on the new kit's records `new`."""
    counts = {"approved": [0, 0], "split": [0, 0], "rejected": [0, 0]}
    seen: set[int] = set()
    kept: list[tuple[Judged, dict[str, Any]]] = []
    for j in old:
        group = (
            "approved" if j.approvals == j.judges else "rejected" if j.approvals == 0 else "split"
        )
        hits = [i for i, r in enumerate(new) if _matches(j, r)]
        counts[group][1] += 1
        if hits:
            counts[group][0] += 1
            kept.append((j, dict(new[hits[0]])))
        seen.update(hits)
    return ReplayReport(
        pending=len(new),
        approved=(counts["approved"][0], counts["approved"][1]),
        split=(counts["split"][0], counts["split"][1]),
        rejected=(counts["rejected"][0], counts["rejected"][1]),
        unjudged=[dict(r) for i, r in enumerate(new) if i not in seen],
        kept=kept,
    )


def _matches(j: Judged, r: Mapping[str, Any]) -> bool:
    lo, hi = int(r["lines"][0]), int(r["lines"][1])
    return (
        _name(str(r["file"])) == j.file
        and str(r["type"]) == j.type
        and lo <= j.lines[1]
        and j.lines[0] <= hi
    )


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]
