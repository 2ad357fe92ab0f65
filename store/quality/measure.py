"""Pending nodes against the labelled lessons: precision, coverage, narration, per file.

A pending node matches a lesson when it comes from the same file, its line range overlaps the
lesson's (ends included) and its type is compatible (`COMPATIBLE`). Precision is the share of
pending nodes of labelled files that match a lesson; coverage the share of lessons of
importance ≥ 2 that some pending node matches; narration the number of pending summaries
that open with narration or carry fewer than four content words. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.quality.labels import Labels, Lesson

#: Targets from issue 11 (precision and coverage are floors, narration a ceiling).
TARGETS: dict[str, float] = {"precision": 0.6, "coverage": 0.7, "narration": 0}
#: Node type -> the lesson kinds it may match (`Lesson.kind`).
COMPATIBLE: dict[str, frozenset[str]] = {
    "DEAD_END": frozenset({"DEAD_END"}),
    "SOLUTION": frozenset({"SOLUTION"}),
    "DISCOVERY": frozenset({"DISCOVERY", "HYPOTHESIS+confirmed"}),
    "HYPOTHESIS": frozenset({"HYPOTHESIS", "HYPOTHESIS+confirmed"}),
    "PIVOT": frozenset({"PIVOT"}),
    "INVESTIGATION": frozenset({"INVESTIGATION"}),
    "CONTEXT_LOAD": frozenset({"CONTEXT_LOAD"}),
}
#: Openings that narrate what the agent is doing or feeling instead of stating a fact.
NARRATION_OPENERS: tuple[str, ...] = (
    "let me", "let's", "let us", "i'll", "i will", "i'm going to", "i am going to",
    "i need to", "i'm", "i've", "i have", "i can see", "i see", "we'll", "we need to",
    "now i", "now let", "now,", "ah", "oh",
    "ok", "okay", "alright", "perfect", "great", "excellent", "good", "sure", "first,",
    "next,", "finally,", "done",
)  # fmt: skip
#: Words that carry no content of their own (articles, pronouns, auxiliaries, fillers).
STOPWORDS = frozenset(
    """a an the and or but if then so to of in on at by for with from as into onto up out
    is are was were be been being am it its it's this that these those there here i i'm
    i'll i've me my we we'll our you your they them he she let let's now just also all
    some any what which who do does did done has have had not no yes will would can could
    should may might must see ok okay""".split()
)
MIN_CONTENT_WORDS = 4

_TYPE_LABEL = re.compile(
    r"^\s*(?:hypothesis|investigation|discovery|pivot|dead[ _-]?end|solution"
    r"|context(?:[ _-]?load)?)\s*:\s*",
    re.IGNORECASE,
)
_OPENER = re.compile(
    r"^(?:" + "|".join(re.escape(o) for o in NARRATION_OPENERS) + r")(?![\w'])",
    re.IGNORECASE,
)
_EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}<>*_…“”‘’"


@dataclass(frozen=True)
class Candidate:
    """A node as the measure sees it: where it comes from (corpus-relative), what it says."""

    file: str
    line_start: int
    line_end: int
    type: str
    summary: str
    status: str = "pending"


@dataclass(frozen=True)
class FileScore:
    file: str
    pending: int
    matched: int
    narration: int
    lessons: int
    important: int
    covered: int


@dataclass(frozen=True)
class QualityReport:
    """What `measure` found; `to_json` gives the bench's JSON."""

    precision: float | None  # None when no pending node comes from a labelled file
    coverage: float | None  # None when no lesson is important
    narration: int
    pending: int
    matched: int
    important: int
    covered: int
    statuses: dict[str, int]
    files: tuple[FileScore, ...]
    matches: tuple[tuple[Candidate, tuple[str, ...]], ...]  # matched node, lesson ids
    unmatched: tuple[Candidate, ...]
    missed: tuple[Lesson, ...]  # important lessons no pending node matches
    narrated: tuple[tuple[Candidate, str], ...]  # pending node, why it counts as narration
    warnings: tuple[str, ...] = field(default=())

    def meets_targets(self) -> dict[str, bool]:
        return {
            "precision": (self.precision or 0.0) >= TARGETS["precision"],
            "coverage": (self.coverage or 0.0) >= TARGETS["coverage"],
            "narration": self.narration <= TARGETS["narration"],
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "coverage": self.coverage,
            "narration": self.narration,
            "pending": self.pending,
            "matched": self.matched,
            "important_lessons": self.important,
            "covered": self.covered,
            "nodes_by_status": dict(sorted(self.statuses.items())),
            "targets": dict(TARGETS),
            "meets_targets": self.meets_targets(),
            "files": [vars(f) for f in self.files],
            "matches": [
                {**_node(c), "lessons": list(ids), "narration": narration_reason(c.summary)}
                for c, ids in self.matches
            ],
            "unmatched": [_node(c) for c in self.unmatched],
            "missed": [_lesson(lesson) for lesson in self.missed],
            "narrated": [{**_node(c), "why": why} for c, why in self.narrated],
            "warnings": list(self.warnings),
        }


def _node(candidate: Candidate) -> dict[str, Any]:
    return {
        "file": candidate.file,
        "lines": [candidate.line_start, candidate.line_end],
        "type": candidate.type,
        "summary": candidate.summary,
    }


def _lesson(lesson: Lesson) -> dict[str, Any]:
    return {
        "id": lesson.id,
        "file": lesson.file,
        "lines": [lesson.line_start, lesson.line_end],
        "type": lesson.type,
        "importance": lesson.importance,
        "lesson": lesson.text,
    }


def compatible(node_type: str, lesson: Lesson) -> bool:
    return lesson.kind in COMPATIBLE.get(node_type, frozenset())


def matches(candidate: Candidate, lesson: Lesson) -> bool:
    return (
        candidate.file == lesson.file
        and lesson.overlaps(candidate.line_start, candidate.line_end)
        and compatible(candidate.type, lesson)
    )


def content_words(text: str) -> list[str]:
    """The words of `text` that carry content: punctuation trimmed, stopwords dropped."""
    words = (w.strip(_EDGE_PUNCTUATION).lower().replace("’", "'") for w in text.split())
    return [w for w in words if any(c.isalnum() for c in w) and w not in STOPWORDS]


def narration_reason(summary: str) -> str:
    """Why a summary counts as narration ("opens with 'let me'", "3 content words"), or ""."""
    clause = _TYPE_LABEL.sub("", summary, count=1).lstrip(_EDGE_PUNCTUATION + "#- ")
    opener = _OPENER.match(clause.replace("’", "'"))
    if opener:
        return f"opens with {opener.group(0).lower()!r}"
    count = len(content_words(clause))
    return f"{count} content words" if count < MIN_CONTENT_WORDS else ""


def measure(
    candidates: Sequence[Candidate], labels: Labels, warnings: Sequence[str] = ()
) -> QualityReport:
    """Score the pending candidates against the labels (other statuses are only counted)."""
    pending = [c for c in candidates if c.status == "pending"]
    names = labels.names
    judged = [c for c in pending if c.file in names]
    notes = list(warnings)
    outside = len(pending) - len(judged)
    if outside:
        notes.append(f"{outside} pending nodes come from transcripts that are not labelled")
    found = [(c, tuple(x.id for x in labels.lessons_in(c.file) if matches(c, x))) for c in judged]
    hits = [(c, ids) for c, ids in found if ids]
    covered_ids = {i for _, ids in hits for i in ids}
    important = [lesson for lesson in labels.lessons if lesson.important]
    narrated = [(c, why) for c in pending if (why := narration_reason(c.summary))]
    return QualityReport(
        precision=_share(len(hits), len(judged)),
        coverage=_share(sum(x.id in covered_ids for x in important), len(important)),
        narration=len(narrated),
        pending=len(pending),
        matched=len(hits),
        important=len(important),
        covered=sum(x.id in covered_ids for x in important),
        statuses=dict(Counter(c.status for c in candidates)),
        files=tuple(_file_scores(labels, pending, hits, covered_ids)),
        matches=tuple(hits),
        unmatched=tuple(c for c, ids in found if not ids),
        missed=tuple(x for x in important if x.id not in covered_ids),
        narrated=tuple(narrated),
        warnings=tuple(notes),
    )


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _file_scores(
    labels: Labels,
    pending: list[Candidate],
    hits: list[tuple[Candidate, tuple[str, ...]]],
    covered_ids: set[str],
) -> list[FileScore]:
    scores = []
    for labelled in sorted(labels.files, key=lambda f: f.file):
        name = labelled.file
        lessons = labels.lessons_in(name)
        important = [x for x in lessons if x.important]
        scores.append(
            FileScore(
                file=name,
                pending=sum(c.file == name for c in pending),
                matched=sum(c.file == name for c, _ in hits),
                narration=sum(
                    c.file == name and bool(narration_reason(c.summary)) for c in pending
                ),
                lessons=len(lessons),
                important=len(important),
                covered=sum(x.id in covered_ids for x in important),
            )
        )
    return scores
