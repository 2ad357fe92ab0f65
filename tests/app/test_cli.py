"""The `librarian` command end to end, in subprocesses, as a person would run it."""

from __future__ import annotations

import json
import os
import shutil
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


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert result.stderr.startswith("librarian: error: ")
    assert "Traceback" not in result.stderr + result.stdout
    assert len(result.stderr.strip().splitlines()) == 1
    return result.stderr


def copy_library(library: Path, target: Path) -> Path:
    shutil.copytree(library, target)
    return target


def test_verify_prints_the_head_to_compare_with_a_kept_copy(scanned: tuple[Path, Path]) -> None:
    library, _ = scanned
    head = json.loads((library / "head.json").read_text())
    text = run(library, "verify").stdout
    assert f"chain head: {head['events']} events, last hash {head['hash']}" in text
    data = json.loads(run(library, "verify", "--json").stdout)
    assert data["head"] == {"events": head["events"], "hash": head["hash"]}
    assert data["recorded_head"]["hash"] == head["hash"]


@pytest.mark.parametrize("how", ["deleted", "emptied"])
def test_a_deleted_or_emptied_database_fails_verify(
    scanned: tuple[Path, Path], tmp_path: Path, how: str
) -> None:
    library = copy_library(scanned[0], tmp_path / "lib")
    for name in ("library.db-wal", "library.db-shm"):
        (library / name).unlink(missing_ok=True)
    if how == "deleted":
        (library / "library.db").unlink()
    else:
        (library / "library.db").write_bytes(b"")
    result = run(library, "verify")
    assert result.returncode == 1
    assert "FAIL head: events were removed or the database was replaced" in result.stdout
    assert "library is intact" not in result.stdout
    assert (library / "library.db").exists() == (how == "emptied")  # verify creates nothing


@pytest.mark.parametrize("damage", ["truncated", "random bytes"])
def test_a_damaged_database_is_one_line_everywhere_and_fails_verify(
    scanned: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    library = copy_library(scanned[0], tmp_path / "lib")
    db = library / "library.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3] if damage == "truncated" else os.urandom(len(data)))
    verified = run(library, "verify", "--json")
    assert verified.returncode == 1
    assert "Traceback" not in verified.stderr
    report = json.loads(verified.stdout)
    assert report["ok"] is False
    assert any(not c["ok"] and "database" in c["detail"] for c in report["checks"])
    for args in (("skills",), ("show", "release-notes"), ("scan", "--no-embed"), ("app",)):
        one_line_error(run(library, *args))


def test_commands_that_read_write_nothing(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    from tests.store.conftest import snapshot

    library = copy_library(scanned[0], tmp_path / "lib")
    (library / "config.toml").unlink()  # a reader writes no default config
    shutil.rmtree(library / "spool")  # and creates no folder
    before = snapshot(library)
    for args in (("skills",), ("show", "release-notes"), ("verify",), ("sessions",)):
        assert run(library, *args).returncode == 0
    assert snapshot(library) == before


def test_a_fresh_library_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    library = tmp_path / "new"
    assert run(library, "skills").returncode == 0
    assert run(library, "config", "get", "suggest.limit").stdout.strip() == "10"
    verified = run(library, "verify")
    assert verified.returncode == 0
    assert "library is intact" in verified.stdout
    assert not library.exists()


def test_a_library_this_user_cannot_write(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    from tests.store.conftest import chmod_binds

    if not chmod_binds(tmp_path):
        pytest.skip("this user writes through chmod (root)")
    library = copy_library(scanned[0], tmp_path / "lib")
    paths = [library, *library.rglob("*")]
    for path in reversed(paths):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        assert run(library, "verify").returncode == 0
        assert "release-notes" in run(library, "skills").stdout
        assert run(library, "show", "release-notes").returncode == 0
        assert "read-only" in one_line_error(run(library, "scan", "--no-embed"))
    finally:
        for path in paths:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_config_set_keeps_comments(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    assert run(library, "config", "set", "suggest.limit", "5").returncode == 0
    text = (library / "config.toml").read_text()
    assert "limit = 5" in text
    assert "# How many skills `librarian suggest` returns." in text


def test_hook_stop_always_exits_zero_and_queues(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    for garbage in ("", "not json", "[" * 50_000, '{"transcript_path": 5}'):
        result = run(library, "hook", "stop", stdin=garbage)
        assert result.returncode == 0
        assert result.stdout == ""
    from tests.store.test_ingest import debugging_session

    transcript = debugging_session(tmp_path / "projects").path
    payload = json.dumps(
        {"session_id": "s-one", "transcript_path": str(transcript), "hook_event_name": "Stop"}
    )
    assert run(library, "hook", "stop", stdin=payload).returncode == 0
    drained = run(library, "hook", "drain")  # waits for the detached worker's lock, or drains
    assert drained.returncode == 0
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        sessions = json.loads(run(library, "sessions", "--json").stdout or "[]")
        if sessions:
            break
        time.sleep(0.5)
    assert [s["session_id"] for s in sessions] == ["s-one"]


def test_review_from_the_command_line(tmp_path: Path) -> None:
    from tests.store.test_ingest import debugging_session

    library = tmp_path / "lib"
    debugging_session(tmp_path / "projects")
    assert run(library, "ingest", str(tmp_path / "projects")).returncode == 0
    nodes = json.loads(run(library, "nodes", "--status", "pending", "--json").stdout)
    first, second = nodes[0]["node_id"], nodes[1]["node_id"]
    assert run(library, "review", "approve", first).returncode == 0
    rejected = run(library, "review", "reject", second, "--reason", "noise", "--json")
    assert json.loads(rejected.stdout)[0]["status"] == "rejected"
    audit = json.loads(run(library, "audit", "--json").stdout)
    assert [a["action"] for a in audit] == ["rejected", "approved"]
    assert audit[0]["reason"] == "noise"
    bad = run(library, "review", "approve", "n_missing")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "librarian: error: no node 'n_missing'"
    assert run(library, "nodes", "--type", "bogus").returncode == 2
    every = json.loads(run(library, "nodes", "--order", "best", "--json").stdout)
    scores = [n["informativeness"] * n["confidence"] for n in every]
    assert scores == sorted(scores, reverse=True)
    assert run(library, "nodes", "--order", "bogus").returncode == 2
    assert "DAG" not in run(library, "session", "s-one").stdout
    assert "DEAD_END" in run(library, "session", "s-one").stdout


def test_hooks_install_and_uninstall(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}')
    env = {**os.environ, "HOME": str(home), "LIBRARIAN_HOME": str(tmp_path / "lib")}
    env.pop("CLAUDE_CONFIG_DIR", None)

    def hooks(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", "hooks", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    dry = hooks("install", "--dry-run")
    assert dry.returncode == 0
    assert "hook stop" in dry.stdout
    assert json.loads(settings.read_text()) == {"theme": "dark"}
    assert "installed" in hooks("install").stdout
    installed = json.loads(settings.read_text())
    assert installed["theme"] == "dark"
    assert set(installed["hooks"]) == {"Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"}
    assert "already up to date" in hooks("install").stdout
    assert list(settings.parent.glob("settings.json.bak-*"))
    assert "uninstalled" in hooks("uninstall").stdout
    assert json.loads(settings.read_text()) == {"theme": "dark"}
