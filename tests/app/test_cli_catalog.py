"""`librarian budget` and `librarian overlap` as a person runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.store.conftest import write_skill


def run(
    home: Path, library: Path, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLAUDE_CONFIG_DIR")}
    env |= {"HOME": str(home), "LIBRARIAN_HOME": str(library)}
    return subprocess.run(
        [sys.executable, "-E", "-P", "-m", "app", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def test_budget_reads_claude_codes_settings_and_lists_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    personal = home / ".claude" / "skills"
    for i in range(6):
        write_skill(
            personal, f"skill-{i}", f"Handles case number {i} of the deployment runbook. " * 8
        )
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"SLASH_COMMAND_TOOL_CHAR_BUDGET": "1500"}}), encoding="utf-8"
    )
    project = tmp_path / "project"
    project.mkdir()
    done = run(home, tmp_path / "lib", "budget", str(project))
    assert done.returncode == 0, done.stderr
    assert "budget 1,500 characters" in done.stdout
    assert "SLASH_COMMAND_TOOL_CHAR_BUDGET: env.SLASH_COMMAND_TOOL_CHAR_BUDGET in" in done.stdout
    assert "NAME ONLY" in done.stdout
    assert "[not in the library]" in done.stdout  # never scanned: read from disk, not recorded
    data = json.loads(run(home, tmp_path / "lib", "budget", str(project), "--json").stdout)
    assert data["settings"]["char_budget"] == 1500
    assert len(data["entries"]) == 6
    assert data["advice"][0]["kind"] == "over_budget"
    bad = run(home, tmp_path / "lib", "budget", str(tmp_path / "missing"))
    assert bad.returncode == 2
    assert "is not a folder" in bad.stderr


def test_overlap_reports_a_duplicate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "skills"
    text = "Write customer-facing release notes from a changelog and merged pull requests."
    write_skill(root, "release-notes", text)
    write_skill(root, "notes-writer", text)
    library = tmp_path / "lib"
    assert run(home, library, "scan", str(root)).returncode == 0
    done = run(home, library, "overlap")
    assert done.returncode == 0, done.stderr
    assert "notes-writer <-> release-notes: duplicate, retire one" in done.stdout
    data = json.loads(run(home, library, "overlap", "release-notes", "--json").stdout)
    assert [(p["a"], p["b"], p["suggestion"]) for p in data] == [
        ("notes-writer", "release-notes", "retire_one")
    ]
