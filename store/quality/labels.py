"""The labelled dev set: which transcripts were read, and the lessons a reviewer keeps.

Two JSONL files in one folder (`tests/quality/` in the project, see `RUBRIC.md` there):
`transcripts.jsonl` (one line per transcript read, lessons or not) and `lessons.jsonl` (one
line per lesson). Paths are relative to the corpus `transcripts` folder; line numbers are the
1-based physical JSONL lines that nodes carry in `line_start` / `line_end`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from store.errors import LibrarianError
from store.models import NODE_TYPES

#: The project's labels; absent when the package runs from an installed wheel.
LABELS_DIR = Path(__file__).resolve().parents[2] / "tests" / "quality"
#: Lessons at or above this importance are the ones coverage counts.
IMPORTANT = 2
T = TypeVar("T")


class LabelError(LibrarianError):
    """The labels folder is missing or a label line is malformed."""


@dataclass(frozen=True)
class Lesson:
    """What a careful reviewer keeps from one stretch of a transcript."""

    id: str
    file: str
    line_start: int
    line_end: int
    type: str
    importance: int
    text: str
    sidechain: bool = False
    confirmed: bool = False  # a HYPOTHESIS the session later confirmed

    @property
    def kind(self) -> str:
        """The type as the compatibility table names it (confirmed hypotheses apart)."""
        return "HYPOTHESIS+confirmed" if self.type == "HYPOTHESIS" and self.confirmed else self.type

    @property
    def important(self) -> bool:
        return self.importance >= IMPORTANT

    def overlaps(self, line_start: int, line_end: int) -> bool:
        return line_start <= self.line_end and self.line_start <= line_end


@dataclass(frozen=True)
class LabelledFile:
    """A transcript that was read (with or without lessons)."""

    file: str
    sha256: str
    lines: int
    role: str  # "session" or "subagent"
    note: str
    subagent_lines: tuple[tuple[int, int], ...] = ()
    parent: str = ""  # the session file a subagent file belongs to


@dataclass(frozen=True)
class Labels:
    files: tuple[LabelledFile, ...]
    lessons: tuple[Lesson, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.file for f in self.files)

    def lessons_in(self, file: str) -> tuple[Lesson, ...]:
        return tuple(lesson for lesson in self.lessons if lesson.file == file)


def load_labels(folder: Path = LABELS_DIR) -> Labels:
    """Read and check both files; a `LabelError` names the first bad line."""
    if not folder.is_dir():
        raise LabelError(f"no labels at {folder}")
    files = tuple(_parse(folder / "transcripts.jsonl", _file))
    lessons = tuple(_parse(folder / "lessons.jsonl", _lesson))
    _check(files, lessons)
    return Labels(files, lessons)


def _parse(path: Path, convert: Callable[[dict[str, Any]], T]) -> list[T]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LabelError(f"{path.name}: {exc.strerror or exc}") from exc
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                item = json.loads(line)
                rows.append(convert(item))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise LabelError(f"{path.name}:{number}: {exc!r}") from exc
    return rows


def _file(item: dict[str, Any]) -> LabelledFile:
    return LabelledFile(
        file=str(item["file"]),
        sha256=str(item["sha256"]),
        lines=int(item["lines"]),
        role=str(item.get("role", "session")),
        note=str(item.get("note", "")),
        subagent_lines=tuple((int(a), int(b)) for a, b in item.get("subagent_lines", [])),
        parent=str(item.get("parent", "")),
    )


def _lesson(item: dict[str, Any]) -> Lesson:
    first, last = item["lines"]
    return Lesson(
        id=str(item["id"]),
        file=str(item["file"]),
        line_start=int(first),
        line_end=int(last),
        type=str(item["type"]),
        importance=int(item["importance"]),
        text=str(item["lesson"]),
        sidechain=bool(item.get("sidechain", False)),
        confirmed=bool(item.get("confirmed", False)),
    )


def _check(files: tuple[LabelledFile, ...], lessons: tuple[Lesson, ...]) -> None:
    lengths = {f.file: f.lines for f in files}
    if len(lengths) != len(files):
        raise LabelError("a transcript is listed twice")
    if len({lesson.id for lesson in lessons}) != len(lessons):
        raise LabelError("two lessons share an id")
    for lesson in lessons:
        problem = _problem(lesson, lengths)
        if problem:
            raise LabelError(f"lesson {lesson.id}: {problem}")


def _problem(lesson: Lesson, lengths: dict[str, int]) -> str:
    if lesson.file not in lengths:
        return f"{lesson.file} is not in transcripts.jsonl"
    if lesson.type not in NODE_TYPES:
        return f"unknown type {lesson.type}"
    if lesson.importance not in (1, 2, 3):
        return "importance must be 1, 2 or 3"
    if not 1 <= lesson.line_start <= lesson.line_end <= lengths[lesson.file]:
        return f"lines {lesson.line_start}-{lesson.line_end} outside 1-{lengths[lesson.file]}"
    if lesson.confirmed and lesson.type != "HYPOTHESIS":
        return "only a HYPOTHESIS can be confirmed"
    return ""
