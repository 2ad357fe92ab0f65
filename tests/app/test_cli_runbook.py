"""`librarian retire` and `librarian runs` end to end on a copy of the demo library: paused
runs resume where they stopped, interactive answers drive steps 5 and 7."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.main import build_parser
from app.cli.runbook import PAUSED, cmd_retire, cmd_runs
from tests.app.test_cli import run


@pytest.fixture
def demo_copy(demo_library_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(demo_library_dir, target)
    return target


def test_retire_pauses_where_it_needs_input_and_resumes(demo_copy: Path) -> None:
    first = run(demo_copy, "retire", "release-notes", "--yes", "--reason", "tone is wrong")
    assert first.returncode == PAUSED, first.stderr
    assert "Step 1/7 · Quarantine" in first.stdout
    assert "paused at step 5/7 (waiting for a repair" in first.stderr
    assert "resume with: librarian retire release-notes --successor NAME, or" in first.stderr
    assert "librarian retire release-notes --no-replacement" in first.stderr
    listed = json.loads(run(demo_copy, "runs", "--json").stdout)
    assert [(r["skill_name"], r["step"], r["next_step"]) for r in listed] == [
        ("release-notes", 4, 5)
    ]
    shown = run(demo_copy, "show", "release-notes", "--json")
    assert json.loads(shown.stdout)["summary"]["status"] == "retired"

    replaced = run(
        demo_copy, "retire", "release-notes", "--yes", "--successor", "changelog-writing"
    )
    assert replaced.returncode == PAUSED  # no failure on record: the regression case is asked
    assert f"resuming {listed[0]['run_id']} at step 5/7" in replaced.stdout
    assert "changelog-writing succeeds release-notes" in replaced.stdout
    assert "paused at step 7/7 (needs the regression case" in replaced.stderr
    assert "resume with: librarian retire release-notes --regression TEXT" in replaced.stderr
    resumed = run(demo_copy, "retire", "release-notes", "--yes", "--regression", "tone check")
    assert resumed.returncode == 0, resumed.stderr
    assert "✓ 7 Record the incident" in resumed.stdout
    done = json.loads(run(demo_copy, "runs", "show", listed[0]["run_id"], "--json").stdout)
    assert done["status"] == "done"
    assert run(demo_copy, "runs").stdout.startswith("no open runs")
    assert run(demo_copy, "verify").returncode == 0


def test_retire_refuses_bad_input_clearly(demo_copy: Path) -> None:
    ghost = run(demo_copy, "retire", "ghost-skill", "--yes", "--reason", "x")
    assert ghost.returncode == 2
    assert "no skill named 'ghost-skill'" in ghost.stderr
    no_reason = run(demo_copy, "retire", "release-notes", "--yes")
    assert no_reason.returncode == 2
    assert "needs a reason" in no_reason.stderr
    piped = run(demo_copy, "retire", "release-notes", stdin="y\n")
    assert piped.returncode == 2
    assert "pass --yes" in piped.stderr
    unknown = run(demo_copy, "runs", "show", "run-nope")
    assert "no runbook run 'run-nope'" in unknown.stderr


def test_abandon_puts_back_what_the_run_changed_unless_kept(demo_copy: Path) -> None:
    """Issue 14: abandoning after the quarantine left the skill retired, on the denylist."""
    run(demo_copy, "retire", "release-notes", "--yes", "--reason", "tone", "--steps", "1")
    [listed] = json.loads(run(demo_copy, "runs", "--json").stdout)
    abandoned = run(
        demo_copy, "runs", "abandon", listed["run_id"], "--reason", "false alarm", stdin=""
    )
    assert abandoned.returncode == 0, abandoned.stderr
    assert "abandoned, step 1/7" in abandoned.stdout
    assert (
        "release-notes goes back to stable (the run made it retired); it leaves the denylist"
        in abandoned.stdout
    )
    assert "the recorded step stays in the run's history" in abandoned.stdout
    shown = json.loads(run(demo_copy, "show", "release-notes", "--json").stdout)
    assert shown["summary"]["status"] == "stable"

    run(demo_copy, "retire", "release-notes", "--yes", "--reason", "tone", "--steps", "1")
    [again] = json.loads(run(demo_copy, "runs", "--json").stdout)
    kept = run(
        demo_copy,
        "runs",
        "abandon",
        again["run_id"],
        "--reason",
        "keep",
        "--keep-statuses",
        "--json",
    )
    assert json.loads(kept.stdout)["left_behind"][0] == (
        "release-notes stays retired (it was stable); it stays on the denylist"
    )
    shown = json.loads(run(demo_copy, "show", "release-notes", "--json").stdout)
    assert shown["summary"]["status"] == "retired"
    assert run(demo_copy, "verify").returncode == 0


def answers(*lines: str) -> Iterator[str]:
    yield from lines


def test_interactive_retire_asks_before_each_step(
    demo_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def args(*argv: str) -> argparse.Namespace:
        return build_parser().parse_args(["--library", str(demo_copy), "retire", *argv])

    replies = answers("caused a bad release note", "y", "y", "n")
    code = cmd_retire(args("release-notes"), read=lambda _q: next(replies))
    assert code == PAUSED
    out = capsys.readouterr()
    assert "done: retired (was stable)" in out.out
    assert "Step 3/7 · Demote dependents" in out.out
    assert "paused at step 3/7 (stopped before it)" in out.err

    replies = answers("y", "y", "none", "y", "y", "undo must keep the previous note", "y")
    code = cmd_retire(args("release-notes"), read=lambda _q: next(replies))
    assert code == 0
    out = capsys.readouterr().out
    assert "retired without repair or successor" in out
    assert "nothing to re-promote" in out
    assert "regression case: undo must keep the previous note" in out


def test_interactive_abandon_shows_both_ways_and_asks(
    demo_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def args(*argv: str) -> argparse.Namespace:
        return build_parser().parse_args(["--library", str(demo_copy), *argv])

    replies = answers("tone", "y")
    assert (
        cmd_retire(args("retire", "release-notes", "--steps", "1"), read=lambda _q: next(replies))
        == 0
    )
    [listed] = json.loads(run(demo_copy, "runs", "--json").stdout)
    capsys.readouterr()

    replies = answers("changed my mind", "c")
    code = cmd_runs(args("runs", "abandon", listed["run_id"]), read=lambda _q: next(replies))
    assert code == PAUSED
    out = capsys.readouterr()
    assert "release-notes goes back to stable (the run made it retired)" in out.out
    assert "release-notes stays retired (it was stable); it stays on the denylist" in out.out
    assert "nothing changed: the run stays open" in out.err

    replies = answers("changed my mind", "k")
    assert cmd_runs(args("runs", "abandon", listed["run_id"]), read=lambda _q: next(replies)) == 0
    assert "abandoned, step 1/7" in capsys.readouterr().out
    shown = json.loads(run(demo_copy, "show", "release-notes", "--json").stdout)
    assert shown["summary"]["status"] == "retired"
