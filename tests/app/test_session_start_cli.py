"""`librarian hook session-start` end to end, in subprocesses, as Claude Code runs it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = "/home/dev/work/payments-api"  # a project of the demo library's sessions


def hook(library: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "--library", str(library), "hook", "session-start"],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        check=False,
    )


def payload(cwd: str = PROJECT, session_id: str = "sess-cli") -> str:
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": "/tmp/x.jsonl",
            "cwd": cwd,
            "hook_event_name": "SessionStart",
            "source": "startup",
            "model": "claude-sonnet-4-5",
        }
    )


@pytest.fixture
def library(demo_library_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the demo library (the session-wide one is read-only)."""
    target = tmp_path / "lib"
    shutil.copytree(demo_library_dir, target, ignore=shutil.ignore_patterns("models"))
    return target


def retrievals(library: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(library / "library.db") as conn:
        rows = conn.execute(
            "SELECT tool, query, project, session_id FROM retrievals ORDER BY seq"
        ).fetchall()
    conn.close()
    return rows


def test_valid_input_prints_session_start_json_and_logs_it(library: Path) -> None:
    before = retrievals(library)
    result = hook(library, payload(PROJECT + "/src/api"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    data = json.loads(result.stdout)
    output = data["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    text = output["additionalContext"]
    assert text.startswith(f"skill-librarian records for the project {PROJECT} (")
    assert "- Skill `" in text
    assert 0 < len(text) <= 4000
    assert all(line.isprintable() for line in text.split("\n"))
    after = retrievals(library)
    assert after[: len(before)] == before
    assert after[len(before) :] == [("session-start", PROJECT + "/src/api", PROJECT, "sess-cli")]
    recorded = json.loads((library / "head.json").read_text())
    with sqlite3.connect(library / "library.db") as conn:
        seq, digest = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC").fetchone()
    assert (recorded["events"], recorded["hash"]) == (seq, digest)  # the head moved with it


def test_the_budget_comes_from_config(library: Path) -> None:
    full = json.loads(hook(library, payload()).stdout)["hookSpecificOutput"]["additionalContext"]
    lines = full.split("\n")
    budget = len("\n".join(lines[:3])) + 3
    config = [sys.executable, "-m", "app", "--library", str(library), "config", "set"]
    subprocess.run(
        [*config, "session_start.max_chars", str(budget)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    cut = json.loads(hook(library, payload()).stdout)["hookSpecificOutput"]["additionalContext"]
    assert cut == "\n".join(lines[:3])


@pytest.mark.parametrize(
    "stdin",
    ["", "not json", "[]", "{}", '{"session_id": "x"}', payload(cwd="/somewhere/else")],
    ids=["empty", "not-json", "array", "no-cwd", "only-session", "unknown-cwd"],
)
def test_bad_or_irrelevant_input_prints_nothing(library: Path, stdin: str) -> None:
    before = retrievals(library)
    result = hook(library, stdin)
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == ""
    assert retrievals(library) == before


def test_a_missing_library_prints_nothing_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "does" / "not" / "exist"
    result = hook(missing, payload())
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (tmp_path / "does").exists()


def test_the_hook_path_loads_no_model_numpy_or_ui(library: Path) -> None:
    code = (
        "import sys; from app.cli.main import main;"
        f" main(['--library', {str(library)!r}, 'hook', 'session-start']);"
        " heavy = ('numpy', 'fastembed', 'onnxruntime', 'textual', 'rich');"
        " print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        input=payload(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert result.stderr.strip() == "[]"
