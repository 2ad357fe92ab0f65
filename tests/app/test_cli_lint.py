"""`librarian lint` as CI runs it: a subprocess in the repository, exit codes, the baseline
found by name, SARIF on stdout or in a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.store.test_ci_lint import INSTALLER, assert_valid_sarif, write_skill


def lint(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LIBRARIAN_HOME": str(cwd / ".no-library")}
    return subprocess.run(
        [sys.executable, "-E", "-P", "-m", "app", "lint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )


def test_lint_fails_on_high_and_passes_with_a_reasoned_baseline(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "installer", INSTALLER)
    failed = lint(tmp_path)
    assert failed.returncode == 1, failed.stderr
    assert "skills/installer/SKILL.md:9: high: pipe_to_shell" in failed.stdout
    assert "FAIL" in failed.stdout.splitlines()[-1]
    (tmp_path / ".librarian-baseline.toml").write_text(
        '[[suppress]]\nrule = "pipe_to_shell"\npath = "skills/installer/SKILL.md"\n'
        'reason = "vendor installer, pinned by checksum upstream"\n',
        encoding="utf-8",
    )
    passed = lint(tmp_path)
    assert passed.returncode == 0, passed.stdout
    assert "[suppressed: vendor installer, pinned by checksum upstream]" in passed.stdout
    assert not (tmp_path / ".no-library").exists()  # CI needs no library


def test_lint_sarif_to_a_file(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "installer", INSTALLER)
    done = lint(
        tmp_path, "skills", "--format", "sarif", "--output", "out.sarif", "--fail-on", "never"
    )
    assert done.returncode == 0, done.stderr
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert_valid_sarif(log)
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"pipe_to_shell"}
    assert "skills checked" in done.stderr


def test_lint_json_and_expired_entry(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "installer", INSTALLER)
    (tmp_path / "ci.toml").write_text(
        '[[suppress]]\nrule = "pipe_to_shell"\npath = "skills/*"\nreason = "temporary"\n'
        "expires = 2020-01-01\n",
        encoding="utf-8",
    )
    done = lint(tmp_path, "--format", "json", "--baseline", "ci.toml", "--fail-on", "never")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["failed"] is True
    assert any("expired" in p["message"] for p in data["baseline_problems"])


def test_lint_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("not = [toml", encoding="utf-8")
    done = lint(tmp_path, "--baseline", "bad.toml")
    assert done.returncode == 2
    assert done.stderr.startswith("librarian: error:")
    assert "not valid TOML" in done.stderr


def test_print_baseline_lists_open_issues_with_empty_reasons(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "installer", INSTALLER)
    done = lint(tmp_path, "--print-baseline")
    assert done.returncode == 0
    assert 'rule = "pipe_to_shell"' in done.stdout
    assert 'reason = ""' in done.stdout
