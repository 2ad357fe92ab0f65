"""Feedback on long work: on a terminal (a pseudo-terminal here) `scan`, `ingest`,
`consolidate`, `bench` and the demo build show a progress bar and say up front what a first
run does and roughly how long; piped, or with `--json`, the output is the report alone (pure
JSON with `--json`)."""

from __future__ import annotations

import argparse
import io
import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from app.cli import bench as bench_cli
from app.cli import launch
from app.cli.progress import Feedback, seconds
from tests.app.test_cli import run
from tests.store.conftest import write_skill
from tooling.demo.build import DEMO_SESSIONS

#: An escape sequence (colour, cursor movement): a terminal's, never in piped output.
ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(library: Path, *args: str) -> tuple[int, str]:
    """Run `librarian ARGS` with stdout and stderr on a pseudo-terminal; (status, output)."""
    master, slave = pty.openpty()
    env = {**os.environ, "LIBRARIAN_HOME": str(library), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed (Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    status = process.wait(timeout=300)
    return status, b"".join(chunks).decode("utf-8", errors="replace")


def plain(output: str) -> str:
    return ESCAPE.sub("", output).replace("\r", "\n")


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "release-notes", "Write customer-facing release notes from a changelog.")
    write_skill(root, "kubernetes-rollback", "Roll a broken Kubernetes deployment back.")
    return root


def test_a_first_scan_on_a_terminal_says_what_it_does_and_shows_a_bar(
    tmp_path: Path, skills_root: Path
) -> None:
    status, output = on_terminal(tmp_path / "lib", "scan", str(skills_root), "--no-embed")
    assert status == 0, output
    text = plain(output)
    assert "first scan: 2 skills found; each is read and linted" in text
    assert "scanning skills" in text
    assert "2/2" in text  # the bar's count
    assert "━" in text
    assert ESCAPE.search(output)  # drawn for a terminal
    assert "scanned 1 roots" in text  # the report follows
    again_status, again = on_terminal(tmp_path / "lib", "scan", str(skills_root), "--no-embed")
    assert again_status == 0
    assert "first scan" not in plain(again)  # said once: later scans only read what changed


def test_scan_piped_prints_the_report_alone(tmp_path: Path, skills_root: Path) -> None:
    result = run(tmp_path / "lib", "scan", str(skills_root), "--no-embed")
    assert result.returncode == 0, result.stderr
    assert "first scan" not in result.stdout + result.stderr
    assert "━" not in result.stdout + result.stderr
    assert not ESCAPE.search(result.stdout + result.stderr)
    assert result.stdout.startswith("scanned 1 roots")


def test_scan_with_json_on_a_terminal_stays_pure_json(tmp_path: Path, skills_root: Path) -> None:
    status, output = on_terminal(tmp_path / "lib", "scan", str(skills_root), "--no-embed", "--json")
    assert status == 0, output
    assert not ESCAPE.search(output)
    assert "first scan" not in output
    data = json.loads(output.replace("\r\n", "\n"))
    assert data["seen"] == 2


@pytest.mark.model
def test_a_first_ingest_on_a_terminal_shows_a_bar_and_json_stays_pure(tmp_path: Path) -> None:
    folder = tmp_path / "transcripts"
    shutil.copytree(DEMO_SESSIONS / "-home-dev-work-infra", folder / "-home-dev-work-infra")
    status, output = on_terminal(tmp_path / "lib", "ingest", str(folder))
    assert status == 0, output
    text = plain(output)
    assert "first ingest: 1 transcript found" in text
    assert "ingesting transcripts" in text
    assert "1/1" in text
    shutil.rmtree(tmp_path / "lib")
    status, output = on_terminal(tmp_path / "lib", "ingest", str(folder), "--json")
    assert status == 0, output
    assert not ESCAPE.search(output)
    assert json.loads(output.replace("\r\n", "\n"))["ingested"] == 1


def test_a_first_consolidation_on_a_terminal_says_so_and_piped_says_nothing(
    tmp_path: Path,
) -> None:
    status, output = on_terminal(tmp_path / "lib", "consolidate")
    assert status == 0, output
    assert "first consolidation: clusters 0 approved nodes into patterns" in plain(output)
    piped = run(tmp_path / "lib", "consolidate")
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == ""  # no stage messages when nobody watches
    assert piped.stdout.startswith("0 approved nodes -> 0 patterns")
    status, output = on_terminal(tmp_path / "lib", "consolidate", "--json")
    assert status == 0
    assert not ESCAPE.search(output)
    assert json.loads(output.replace("\r\n", "\n"))["patterns"] == 0


def terminal() -> tuple[Feedback, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    return Feedback(False, console=console), out


def test_feedback_renders_counts_and_stages_and_nothing_when_disabled() -> None:
    feedback, out = terminal()
    with feedback:
        feedback.tell("first run: about 5 s")
        feedback.count(0, 4, "reading")
        feedback.count(3, 4)
        feedback.stage("clustering")
    text = plain(out.getvalue())
    assert "first run: about 5 s" in text
    assert "reading" in text
    assert "3/4" in text
    assert "clustering" in text
    quiet = Feedback(False)
    with quiet:  # piped or --json: nothing is drawn anywhere
        quiet.tell("x")
        quiet.count(1, 2, "y")
        quiet.stage("z")
    assert quiet.enabled is False


def test_feedback_is_on_only_for_a_terminal_without_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert Feedback.for_args(argparse.Namespace(json=False)).enabled
    assert not Feedback.for_args(argparse.Namespace(json=True)).enabled
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert not Feedback.for_args(argparse.Namespace(json=False)).enabled


def test_durations_are_rough() -> None:
    assert seconds(0.2) == "~1 s"
    assert seconds(13.4) == "~13 s"
    assert seconds(150) == "~2 min"


def test_bench_shows_each_part_and_prints_pure_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feedback, out = terminal()
    monkeypatch.setattr(Feedback, "for_args", classmethod(lambda cls, args: feedback))
    parts = ["scan", "lint"]

    def fake_bench(quick: bool, only: set[str], progress: Any) -> dict[str, Any]:
        for done, part in enumerate(parts):
            progress(done, len(parts), part)
        progress(len(parts), len(parts), "")
        return {"within_budget": True}

    monkeypatch.setattr("tooling.bench.run.run_bench", fake_bench)
    args = argparse.Namespace(quick=True, only=parts, json=False)
    assert bench_cli.cmd_bench(args) == 0
    assert json.loads(capsys.readouterr().out) == {"within_budget": True}
    shown = plain(out.getvalue())
    assert "bench: builds synthetic libraries" in shown
    assert "2 part(s) at small sizes (--quick)" in shown
    assert "bench: lint" in shown


def test_run_bench_reports_each_phase(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tooling.bench.run as bench

    monkeypatch.setattr(bench, "_bench_ingest", lambda work: {"files": 0})
    monkeypatch.setattr(bench, "_settle", lambda seconds=0: None)
    monkeypatch.setattr(bench, "_check", lambda results: True)
    told: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, phase: str) -> None:
        told.append((done, total, phase))

    bench.run_bench(quick=True, only={"ingest"}, workdir=tmp_path, progress=progress)
    assert told == [(0, 1, "ingest"), (1, 1, "")]


def test_demo_says_where_it_lives_and_how_to_point_the_cli_at_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feedback, out = terminal()
    monkeypatch.setattr(Feedback, "for_args", classmethod(lambda cls, args: feedback))
    stages: list[str] = []

    def fake_build(target: Path, fresh: bool, progress: Any, team: bool = False) -> None:
        assert not team
        for done, stage in enumerate(("scanning", "ingesting")):
            stages.append(stage)
            progress(done, 2, stage)
        progress(2, 2, "")

    monkeypatch.setattr("tooling.demo.build.build_demo", fake_build)
    target = tmp_path / "my demo"
    args = argparse.Namespace(
        library=str(target), fresh=False, no_open=True, json=False, team=False
    )
    assert launch.cmd_demo(args) == 0
    printed = capsys.readouterr().out
    assert f"demo library at {target}" in printed
    assert f"librarian --library '{target}' audit" in printed
    assert f"export LIBRARIAN_HOME='{target}'" in printed
    shown = plain(out.getvalue())
    assert f"building the demo library at {target}" in shown
    assert "~25 s" in shown
    assert "ingesting" in shown
