"""The issue-11 measure on a tiny hand-made dev set: matching (file, overlapping lines,
compatible type), precision, coverage, narration, the per-file breakdown, label checks and
the bench part's skip. No corpus, no library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.models import NODE_TYPES
from store.quality.labels import LabelError, Labels, load_labels
from store.quality.measure import (
    COMPATIBLE,
    TARGETS,
    Candidate,
    compatible,
    content_words,
    measure,
    narration_reason,
)
from tooling.bench.phases import _bench_quality
from tooling.bench.run import _check

SHA = "0" * 64
TRANSCRIPTS = [
    {"file": "proj/a.jsonl", "sha256": SHA, "lines": 20, "role": "session", "note": "four"},
    {"file": "proj/b.jsonl", "sha256": SHA, "lines": 5, "role": "session", "note": "none"},
]
LESSONS = [
    {"id": "a-yaml", "file": "proj/a.jsonl", "lines": [3, 5], "type": "DEAD_END",
     "importance": 2, "lesson": "`pytest -x` fails to import yaml because PyYAML is missing."},
    {"id": "a-pin", "file": "proj/a.jsonl", "lines": [6, 8], "type": "SOLUTION",
     "importance": 3, "lesson": "Adding PyYAML 6.0.3 to requirements-dev.txt fixed the import."},
    {"id": "a-locale", "file": "proj/a.jsonl", "lines": [10, 12], "type": "HYPOTHESIS",
     "importance": 2, "confirmed": True,
     "lesson": "The render cache key in cache.py ignores the locale, so French pages leak."},
    {"id": "a-port", "file": "proj/a.jsonl", "lines": [15, 15], "type": "DISCOVERY",
     "importance": 1, "lesson": "The dev server in serve.py listens on port 8081, not 8080."},
]  # fmt: skip


def write_labels(folder: Path, transcripts: list[dict], lessons: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("transcripts.jsonl", transcripts), ("lessons.jsonl", lessons)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return folder


@pytest.fixture
def labels(tmp_path: Path) -> Labels:
    return load_labels(write_labels(tmp_path / "labels", TRANSCRIPTS, LESSONS))


def node(file: str, lines: tuple[int, int], type_: str, summary: str, **kw: str) -> Candidate:
    return Candidate(file, lines[0], lines[1], type_, summary, **kw)


A, B = "proj/a.jsonl", "proj/b.jsonl"
CANDIDATES = [
    # touches the dead end's last line: a match
    node(A, (5, 6), "DEAD_END", "Dead end: `pytest -x` failed with ModuleNotFoundError yaml"),
    # right type, but one line after the solution's range: no match
    node(A, (9, 9), "SOLUTION", "Solution: requirements-dev.txt now pins PyYAML 6.0.3"),
    # a discovery may state a hypothesis the session confirmed
    node(A, (11, 11), "DISCOVERY", "Discovery: cache.py builds the key without the locale"),
    # a hypothesis never stands for a discovery
    node(A, (15, 15), "HYPOTHESIS", "Hypothesis: serve.py may listen on port 8081"),
    # a transcript with no lesson: precision's denominator, and narration
    node(B, (1, 2), "INVESTIGATION", "Investigation: Let me check the logs."),
    # not pending: counted by status only
    node(A, (3, 3), "DEAD_END", "Dead end: pytest failed again on yaml", status="merged"),
    # a transcript nobody labelled: left out of precision, reported
    node("proj/c.jsonl", (4, 4), "SOLUTION", "Solution: Task succeeded."),
]


def test_precision_coverage_and_narration_on_a_tiny_set(labels: Labels) -> None:
    report = measure(CANDIDATES, labels)
    assert (report.pending, report.matched) == (6, 2)
    assert report.precision == 0.4  # 2 of the 5 pending nodes of labelled transcripts
    assert (report.important, report.covered) == (3, 2)
    assert report.coverage == 0.6667
    assert [lesson.id for lesson in report.missed] == ["a-pin"]
    assert report.narration == 2  # "Let me check the logs." and "Task succeeded."
    assert report.statuses == {"pending": 6, "merged": 1}
    assert [(c.line_start, ids) for c, ids in report.matches] == [
        (5, ("a-yaml",)),
        (11, ("a-locale",)),
    ]
    assert [(c.file, c.line_start) for c in report.unmatched] == [
        ("proj/a.jsonl", 9),
        ("proj/a.jsonl", 15),
        ("proj/b.jsonl", 1),
    ]
    assert report.warnings == ("1 pending nodes come from transcripts that are not labelled",)
    assert report.meets_targets() == {"precision": False, "coverage": False, "narration": False}


def test_the_per_file_breakdown_lists_every_labelled_transcript(labels: Labels) -> None:
    files = {f.file: f for f in measure(CANDIDATES, labels).files}
    assert list(files) == ["proj/a.jsonl", "proj/b.jsonl"]
    assert vars(files[A]) == {
        "file": A, "pending": 4, "matched": 2, "narration": 0,
        "lessons": 4, "important": 3, "covered": 2,
    }  # fmt: skip
    assert vars(files[B]) == {
        "file": B, "pending": 1, "matched": 0, "narration": 1,
        "lessons": 0, "important": 0, "covered": 0,
    }  # fmt: skip


def test_the_json_report_is_plain_data(labels: Labels) -> None:
    data = measure(CANDIDATES, labels).to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["targets"] == TARGETS
    assert data["matches"][0] == {
        "file": "proj/a.jsonl",
        "lines": [5, 6],
        "type": "DEAD_END",
        "summary": CANDIDATES[0].summary,
        "lessons": ["a-yaml"],
        "narration": "",
    }
    assert data["missed"][0]["id"] == "a-pin"
    assert data["narrated"][0]["why"] == "opens with 'let me'"


def test_a_queue_that_keeps_only_lessons_meets_the_targets(labels: Labels) -> None:
    good = [
        node(A, (4, 4), "DEAD_END", "Dead end: `pytest -x` cannot import yaml"),
        node(A, (7, 7), "SOLUTION", "Solution: requirements-dev.txt now pins PyYAML 6.0.3"),
        node(A, (12, 12), "DISCOVERY", "Discovery: cache.py keys renders by path only"),
    ]
    report = measure(good, labels)
    assert (report.precision, report.coverage, report.narration) == (1.0, 1.0, 0)
    assert all(report.meets_targets().values())


def test_an_empty_queue_has_no_precision(labels: Labels) -> None:
    report = measure([], labels)
    assert report.precision is None
    assert report.coverage == 0.0
    assert report.meets_targets()["precision"] is False


def test_the_compatibility_table_covers_every_node_type(labels: Labels) -> None:
    assert set(COMPATIBLE) == set(NODE_TYPES)
    by_id = {lesson.id: lesson for lesson in labels.lessons}
    assert compatible("DISCOVERY", by_id["a-locale"])  # confirmed hypothesis
    assert compatible("HYPOTHESIS", by_id["a-locale"])
    assert not compatible("HYPOTHESIS", by_id["a-port"])  # a guess is not a finding
    assert not compatible("PIVOT", by_id["a-yaml"])
    assert not compatible("UNKNOWN", by_id["a-yaml"])


@pytest.mark.parametrize(
    ("summary", "why"),
    [
        ("Investigation: Let me check the file structure.", "opens with 'let me'"),
        ("Discovery: Ah, I see!", "opens with 'ah'"),
        ("Context: I’ll create a basic CLAUDE.md file for the project.", 'opens with "i\'ll"'),
        ("Investigation: Now let me verify the files were created.", "opens with 'now let'"),
        ("Pivot: Perfect! The build is green with Node 20.", "opens with 'perfect'"),
        ("Solution: `ls -la` succeeded.", "3 content words"),
        ("Solution: Task succeeded.", "2 content words"),
        ("Dead end: `npm run build` fails with TypeError: generate is not a function", ""),
        ("Discovery: Ahead-of-time builds need `NEXT_PUBLIC_` variables at build time", ""),
        ("Discovery: Now the cache key in cache.py includes the locale", ""),
    ],
)
def test_narration(summary: str, why: str) -> None:
    assert narration_reason(summary) == why


def test_content_words_drop_punctuation_and_fillers() -> None:
    assert content_words("It is the `ls -la` run, and it succeeded.") == [
        "ls",
        "-la",
        "run",
        "succeeded",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"lines": [19, 21]}, "lines 19-21 outside 1-20"),
        ({"type": "EPIPHANY"}, "unknown type EPIPHANY"),
        ({"file": "proj/z.jsonl"}, "proj/z.jsonl is not in transcripts.jsonl"),
        ({"importance": 4}, "importance must be 1, 2 or 3"),
        ({"confirmed": True}, "only a HYPOTHESIS can be confirmed"),
    ],
)
def test_a_bad_lesson_is_named(tmp_path: Path, change: dict, message: str) -> None:
    lessons = [{**LESSONS[0], **change}, *LESSONS[1:]]
    with pytest.raises(LabelError, match=message):
        load_labels(write_labels(tmp_path, TRANSCRIPTS, lessons))


def test_broken_label_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="two lessons share an id"):
        load_labels(write_labels(tmp_path / "dup", TRANSCRIPTS, [LESSONS[0], LESSONS[0]]))
    with pytest.raises(LabelError, match="listed twice"):
        load_labels(write_labels(tmp_path / "twice", TRANSCRIPTS * 2, []))
    folder = write_labels(tmp_path / "bad", TRANSCRIPTS, LESSONS)
    (folder / "lessons.jsonl").write_text('{"id": "x"}\n', "utf-8")
    with pytest.raises(LabelError, match=r"lessons.jsonl:1: KeyError"):
        load_labels(folder)
    with pytest.raises(LabelError, match="no labels"):
        load_labels(tmp_path / "missing")


def test_the_bench_part_skips_without_a_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIBRARIAN_CORPUS", str(tmp_path / "nowhere"))
    result = _bench_quality(tmp_path)
    assert result == {"skipped": f"no transcripts at {tmp_path / 'nowhere' / 'transcripts'} "
                      "(set LIBRARIAN_CORPUS)"}  # fmt: skip
    assert _check({"quality": result}) == {}


def test_bench_budgets_treat_precision_and_coverage_as_floors() -> None:
    verdict = _check({"quality": {"precision": 0.61, "coverage": 0.69, "narration": 0}})
    assert verdict == {
        "quality.precision": True,
        "quality.coverage": False,
        "quality.narration": True,
    }


def test_the_tune_set_is_read_only_from_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tooling.bench.phases import _tune_set

    monkeypatch.delenv("LIBRARIAN_QUALITY_TUNE", raising=False)
    assert _tune_set() is None
    monkeypatch.setenv("LIBRARIAN_QUALITY_TUNE", str(tmp_path))
    assert _tune_set() == tmp_path.resolve()
    inside = Path(__file__).resolve().parents[1] / "quality"
    monkeypatch.setenv("LIBRARIAN_QUALITY_TUNE", str(inside))
    assert _tune_set() is None  # no session data inside the repository
    monkeypatch.setenv("LIBRARIAN_QUALITY_TUNE", str(tmp_path / "missing"))
    assert _tune_set() is None
