"""The `librarian` command end to end, in subprocesses, as a person would run it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
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


#: Root without the capabilities that let it write through file modes (so that chmod binds).
AS_ROOT_BOUND_BY_MODES = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner")


def test_a_library_this_user_cannot_write(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    from tests.store.conftest import chmod_binds

    prefix: tuple[str, ...] = ()
    if not chmod_binds(tmp_path):
        if shutil.which("setpriv") is None:
            pytest.skip("this user writes through chmod (root) and there is no setpriv")
        prefix = AS_ROOT_BOUND_BY_MODES
    library = copy_library(scanned[0], tmp_path / "lib")
    paths = [library, *library.rglob("*")]
    for path in reversed(paths):
        path.chmod(0o555 if path.is_dir() else 0o444)

    def run_as(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LIBRARIAN_HOME": str(library)}
        argv = [*prefix, sys.executable, "-m", "app", *args]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)

    try:
        verified = run_as("verify")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "release-notes" in run_as("skills").stdout
        assert run_as("show", "release-notes").returncode == 0
        assert "read-only" in one_line_error(run_as("scan", "--no-embed"))
    finally:
        for path in paths:
            path.chmod(0o755 if path.is_dir() else 0o644)


#: Runs "$@" with the folder $1 mounted read-only, in a mount namespace of its own.
READ_ONLY_MOUNT = (
    'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"'
)


def read_only_mount(folder: Path) -> list[str] | None:
    """argv prefix that runs a command with `folder` on a read-only file system (where even
    root cannot write: chmod does not bind root), or None where namespaces are not allowed."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    prefix = [unshare, "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    argv = [*prefix, "/bin/sh", "-c", READ_ONLY_MOUNT, "sh", str(folder)]
    probe = subprocess.run(
        [*argv, "/bin/sh", "-c", '! touch "$0/probe" 2>/dev/null', str(folder)],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return argv if probe.returncode == 0 else None


def test_a_library_on_a_read_only_file_system(scanned: tuple[Path, Path], tmp_path: Path) -> None:
    """A WAL database on a read-only mount cannot get its shared-memory file (SQLite says
    SQLITE_CANTOPEN, not SQLITE_READONLY): the commands that read, and the app, still open
    it; a command that writes says the library is read-only."""
    library = copy_library(scanned[0], tmp_path / "lib")
    conn = sqlite3.connect(library / "library.db")  # the last one out removes -wal and -shm
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for name in ("library.db-wal", "library.db-shm"):
        assert not (library / name).exists()
    mounted = read_only_mount(library)
    if mounted is None:
        pytest.skip("no mount namespace here (unshare)")
    env = {**os.environ, "LIBRARIAN_HOME": str(library)}

    def run_ro(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [*mounted, sys.executable, *args]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)

    verified = run_ro("-m", "app", "verify")
    assert verified.returncode == 0, verified.stderr
    assert "library is intact" in verified.stdout
    assert "release-notes" in run_ro("-m", "app", "skills").stdout
    assert run_ro("-m", "app", "show", "release-notes").returncode == 0
    assert "read-only" in one_line_error(run_ro("-m", "app", "scan", "--no-embed"))
    opened = run_ro(
        "-c",
        "from app.factory import open_for_app; import sys;"
        f" lib = open_for_app(__import__('pathlib').Path({str(library)!r}));"
        " print(lib.read_only, [s.name for s in lib.list_skills()])",
    )
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.strip() == "True ['kubernetes-rollback', 'release-notes']"


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


def test_ingest_refuses_a_named_fifo_with_its_reason(tmp_path: Path) -> None:
    """A FIFO named on the command line would block the read forever: refused in one line
    (it used to be passed over without a word, as if there were nothing to ingest)."""
    fifo = tmp_path / "trap.jsonl"
    os.mkfifo(fifo)
    result = run(tmp_path / "lib", "ingest", str(fifo))
    assert result.returncode == 2
    assert one_line_error(result).strip() == f"librarian: error: {fifo}: not a regular file (FIFO)"


def test_ingest_of_a_folder_reports_a_fifo_inside_it_and_reads_the_rest(tmp_path: Path) -> None:
    """A FIFO among a folder's transcripts is reported with its reason, never opened for a
    blocking read, and the other transcripts are ingested (it used to vanish without a
    word)."""
    folder = tmp_path / "projects" / "proj"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "trap.jsonl")
    (folder / "real.jsonl").write_text(
        json.dumps(
            {
                "type": "user",
                "sessionId": "s-real",
                "uuid": "u1",
                "cwd": "/home/dev/proj",
                "timestamp": "2026-11-01T10:00:00Z",
                "message": {"role": "user", "content": "hello"},
            }
        )
        + "\n"
    )
    result = run(tmp_path / "lib", "ingest", str(folder))
    assert result.returncode == 0, result.stderr
    assert "1 ingested" in result.stdout
    assert f"{folder / 'trap.jsonl'}: not_regular: not a regular file (FIFO)" in result.stdout
