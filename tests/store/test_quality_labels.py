"""The project's labelled dev set (tests/quality) is well formed and passes the bar it sets:
every lesson is a specific, self-contained sentence that is not narration, subagent lessons lie
on subagent lines, and RUBRIC.md's compatibility table is the one the code uses. Checks
against the corpus files themselves are in tests/corpus/test_quality_corpus.py."""

from __future__ import annotations

import re

import pytest

from store.quality.labels import LABELS_DIR, Labels, Lesson, load_labels
from store.quality.measure import COMPATIBLE, content_words, narration_reason

#: Something a reader can look up: code, a path or file name, a flag, a version.
SPECIFIC = re.compile(r"`[^`]+`|\w[\w.-]*/[\w./-]*|\b\w+\.(?:ts|tsx|json|md|py|jsonl)\b|\d+\.\d+")
VAGUE_OPENINGS = ("it ", "this ", "that ", "these ", "the issue", "the problem", "the file")


@pytest.fixture(scope="module")
def labels() -> Labels:
    return load_labels()


def test_the_dev_set_is_there(labels: Labels) -> None:
    assert (LABELS_DIR / "RUBRIC.md").is_file()
    assert len(labels.files) >= 8
    assert len([x for x in labels.lessons if x.important]) >= 8
    # transcripts with nothing worth keeping are labels too (they test precision)
    assert sum(not labels.lessons_in(f.file) for f in labels.files) >= 5


@pytest.mark.parametrize("lesson", load_labels().lessons, ids=lambda lesson: lesson.id)
def test_each_lesson_meets_the_bar(lesson: Lesson) -> None:
    text = lesson.text
    assert narration_reason(text) == ""
    assert not text.lower().startswith(VAGUE_OPENINGS)
    assert text.endswith(".")
    assert len(content_words(text)) >= 8
    assert SPECIFIC.search(text)


def test_subagent_lessons_lie_on_subagent_lines(labels: Labels) -> None:
    files = {f.file: f for f in labels.files}
    for lesson in labels.lessons:
        spans = files[lesson.file].subagent_lines
        on_subagent_line = any(a <= lesson.line_start <= b for a, b in spans)
        assert on_subagent_line == lesson.sidechain, lesson.id


def test_subagent_files_name_their_session(labels: Labels) -> None:
    names = labels.names
    for labelled in labels.files:
        assert labelled.role in ("session", "subagent")
        assert labelled.note
        if labelled.role == "subagent":
            assert labelled.parent in names
            assert labelled.subagent_lines == ((1, labelled.lines),)


def test_the_rubric_states_the_compatibility_table_the_code_uses() -> None:
    rubric = (LABELS_DIR / "RUBRIC.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| ([A-Z_]+) \| ([^|]+) \|$", rubric, re.MULTILINE))
    stated = {node_type: set(re.findall(r"[A-Z_]{4,}", kinds)) for node_type, kinds in rows.items()}
    coded = {node_type: {k.split("+")[0] for k in kinds} for node_type, kinds in COMPATIBLE.items()}
    assert stated == coded
    assert "confirmed" in rows["DISCOVERY"]
