"""Replaying judges' verdicts on a new kit of the same sessions (`store.quality.replay`) and
`librarian judge-replay`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main
from store.quality.replay import judged, replay


def _record(node: str, file: str, lines: tuple[int, int], type_: str, summary: str = "s") -> dict:
    return {"id": node, "file": file, "lines": list(lines), "type": type_, "summary": summary}


OLD = [
    _record("n1", "a.jsonl", (10, 12), "DEAD_END"),  # both judges approve
    _record("n2", "a.jsonl", (20, 21), "DISCOVERY"),  # one does
    _record("n3", "sub/b.jsonl", (5, 5), "DISCOVERY"),  # none does
    _record("n4", "a.jsonl", (40, 41), "SOLUTION"),  # both approve, dropped by the new rules
]
JUDGE_A = [{"id": "n1", "verdict": "approve"}, {"id": "n2", "verdict": "approve"},
           {"id": "n3", "verdict": "reject"}, {"id": "n4", "verdict": "approve"}]  # fmt: skip
JUDGE_B = [
    {"id": "n1", "verdict": "approve"},
    {"id": "n2", "verdict": "reject"},
    {"id": "n4", "verdict": "approve"},
]  # fmt: skip  (n3 unscored: a rejection)
NEW = [
    _record("m1", "/x/a.jsonl", (11, 14), "DEAD_END"),  # overlaps n1: kept
    _record("m2", "a.jsonl", (20, 20), "HYPOTHESIS"),  # n2's place, another type: not n2
    _record("m3", "b.jsonl", (1, 5), "DISCOVERY"),  # n3 kept (the same file by name)
]


def test_verdicts_fall_on_the_new_nodes_by_file_lines_and_type() -> None:
    report = replay(judged(OLD, [JUDGE_A, JUDGE_B]), NEW)
    assert report.pending == 3
    assert (report.approved, report.split, report.rejected) == ((1, 2), (0, 1), (1, 1))
    assert [r["id"] for r in report.unjudged] == ["m2"]
    assert report.share == 0.5  # one approved, one rejected kept
    assert replay(judged(OLD, [JUDGE_A]), []).share is None


def test_judge_replay_prints_the_figures_and_the_new_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {}
    for name, rows in (("old", OLD), ("a", JUDGE_A), ("b", JUDGE_B), ("new", NEW)):
        files[name] = tmp_path / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["judge-replay", str(files["old"]), str(files["new"]), "--verdicts", str(files["a"]),
            "--verdicts", str(files["b"])]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["approved_kept"] == [1, 2]
    assert data["share"] == 0.5
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "approved by every judge: 1 of 2 kept" in out
    assert "new  HYPOTHESIS  a.jsonl:[20, 20]" in out


def test_judge_replay_names_a_bad_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "n1"}\nnot json\n', encoding="utf-8")
    assert main(["judge-replay", str(bad), str(bad), "--verdicts", str(bad)]) != 0
    assert "bad.jsonl:2: not JSON" in capsys.readouterr().err
