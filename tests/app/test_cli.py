"""The `librarian` command end to end, in subprocesses, as a person would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.store.conftest import write_skill


def run(library: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LIBRARIAN_HOME": str(library)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cli")
    root = base / "skills"
    write_skill(
        root,
        "kubernetes-rollback",
        "Roll a broken Kubernetes deployment back.",
        extra="metadata:\n  requires: kubectl-basics\n",
    )
    write_skill(root, "release-notes", "Write customer-facing release notes from a changelog.")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n")
    library = base / "lib"
    result = run(library, "scan", str(root), "--json")
    assert result.returncode == 0, result.stderr
    return library, root


def test_scan_reports_in_json(scanned: tuple[Path, Path]) -> None:
    library, root = scanned
    report = json.loads(run(library, "scan", str(root), "--json").stdout)
    assert report["unchanged"] == 2
    assert report["skipped"][0]["code"] == "no_description"
    assert report["dangling"][0]["target"] == "kubectl-basics"


def test_scan_remembers_its_roots(scanned: tuple[Path, Path]) -> None:
    library, root = scanned
    value = json.loads(run(library, "config", "get", "skills.extra_roots").stdout)
    assert value == [str(root.resolve())]
    plain = run(library, "scan")
    assert plain.returncode == 0
    assert "3 skills found" in plain.stdout  # the broken one is found, then skipped
    assert "2 unchanged" in plain.stdout


def test_skills_and_show(scanned: tuple[Path, Path]) -> None:
    library, _ = scanned
    rows = json.loads(run(library, "skills", "--json").stdout)
    assert [r["name"] for r in rows] == ["kubernetes-rollback", "release-notes"]
    shown = run(library, "show", "kubernetes-rollback")
    assert "requires -> kubectl-basics (dangling)" in shown.stdout
    detail = json.loads(run(library, "show", "release-notes", "--json").stdout)
    assert detail["summary"]["status"] == "stable"


def test_suggest_single_batch_and_stdin(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    library, _ = scanned
    one = json.loads(run(library, "suggest", "undo the bad deploy", "--json").stdout)
    assert one["suggestions"][0]["name"] == "kubernetes-rollback"
    batch = tmp_path / "contexts.txt"
    batch.write_text("undo the bad deploy\n\nwrite the release announcement\n")
    many = json.loads(run(library, "suggest", "--batch", str(batch), "--json").stdout)
    assert [m["suggestions"][0]["name"] for m in many] == ["kubernetes-rollback", "release-notes"]
    piped = run(library, "suggest", "--limit", "1", stdin="undo the bad deploy\n")
    assert "kubernetes-rollback" in piped.stdout


def test_errors_are_one_line_without_traceback(scanned: tuple[Path, Path]) -> None:
    library, _ = scanned
    for args in (("show", "nope"), ("scan", "/definitely/not/here"), ("config", "get", "x.y")):
        result = run(library, *args)
        assert result.returncode == 2
        assert result.stderr.startswith("librarian: error: ")
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_verify_exit_codes(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    library, _ = scanned
    assert run(library, "verify").returncode == 0
    damaged = tmp_path / "damaged"
    import shutil
    import sqlite3

    shutil.copytree(library, damaged)
    conn = sqlite3.connect(damaged / "library.db")
    conn.execute("UPDATE skills SET status='retired'")
    conn.commit()
    conn.close()
    result = run(damaged, "verify", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["ok"] is False
    assert run(damaged, "rebuild").returncode == 0
    assert run(damaged, "verify").returncode == 0


def test_config_set_keeps_comments(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    assert run(library, "config", "set", "suggest.limit", "5").returncode == 0
    text = (library / "config.toml").read_text()
    assert "limit = 5" in text
    assert "# How many skills `librarian suggest` returns." in text
