"""The project starts itself only as its own code, and its hooks never block nor wedge.

Every self-spawn is tried from a hostile working directory: a user's repository with its own
`app/`, `store/` and `widgets/` packages (each writes a marker file when imported), and with
`PYTHONPATH=.` in the environment, as some shells have. Hooks are fed a FIFO, a stdin that
never closes, and bursts of turns.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from store import hooks
from store.process import own_module
from tests.conftest import REPO
from tests.store.test_ingest import debugging_session

LIBRARIAN = Path(sys.executable).with_name("librarian")
PACKAGES = ("app", "store", "tooling", "widgets")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A repository whose own `app`, `store` and `widgets` leave a marker when run."""
    repo = tmp_path / "user-repo"
    for name in PACKAGES:
        package = repo / name
        package.mkdir(parents=True)
        code = f"open({str(repo / ('RAN-' + name))!r}, 'w').write('pwned')\n"
        (package / "__init__.py").write_text(code)
        (package / "__main__.py").write_text(code)
    return repo


def ran(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.glob("RAN-*"))


def env_for(home: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LIBRARIAN_HOME")}
    return {**keep, "HOME": str(home), **extra}


def wait_for_sessions(library: Path, count: int, seconds: float = 60) -> int:
    import sqlite3

    deadline = time.monotonic() + seconds
    found = 0
    while time.monotonic() < deadline:
        db = library / "library.db"
        if db.exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    found = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
            except sqlite3.Error:
                found = 0
            if found >= count:
                return found
        time.sleep(0.3)
    return found


def wait_for_worker(spool: Path, seconds: float = 60) -> None:
    """Until no worker holds the spool and nothing is queued."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.3)
        if not hooks.worker_running(spool) and not hooks.has_queue(spool):
            time.sleep(0.3)  # a worker that is just being started takes the lock
            if not hooks.worker_running(spool) and not hooks.has_queue(spool):
                return
    raise AssertionError("the spool did not drain")


def stop_payload(transcript: Path) -> str:
    return json.dumps({"session_id": "s", "transcript_path": str(transcript)})


# -- the project starts itself only as its own code -----------------------------------------


def _spawns(path: Path) -> Iterator[int]:
    """Lines of `path` that start Python on their own: `sys.executable` anywhere, or a
    list or tuple holding "-m" (or "-c") right before one of the project's packages."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        value = getattr(node, "value", None)
        if isinstance(node, ast.Attribute) and node.attr == "executable" and is_sys(value):
            yield node.lineno
        if isinstance(node, ast.List | ast.Tuple):
            values = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            for flag, module in itertools.pairwise(values):
                ours = isinstance(module, str) and module.split(".")[0] in PACKAGES
                if flag in ("-m", "-c") and ours:
                    yield node.lineno


def is_sys(node: object) -> bool:
    return isinstance(node, ast.Name) and node.id == "sys"


def test_no_self_invocation_outside_the_isolated_helper() -> None:
    """`-m` with the cwd (or PYTHONPATH) first on sys.path runs a repository's own `app`:
    every self-spawn goes through `store.process`, which isolates it."""
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path != REPO / "store" / "process.py"
        and not path.is_relative_to(REPO / "tooling" / "demo" / "skills")
        for line in _spawns(path)
    ]
    assert offenders == []
    assert own_module("app")[1:] == ["-E", "-P", "-m", "app"]


def test_own_module_runs_this_installation_from_a_hostile_repo(hostile: Path) -> None:
    done = subprocess.run(
        [*own_module("app"), "--help"],
        cwd=hostile,
        env=env_for(hostile.parent / "home", PYTHONPATH="."),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Skill Librarian" in done.stdout
    assert ran(hostile) == []


def test_installed_hook_command_ingests_from_a_hostile_repo(hostile: Path, tmp_path: Path) -> None:
    """The Stop hook exactly as `hooks install` writes it, run by a shell in the user's
    repository with `PYTHONPATH=.`: the transcript is ingested and none of the repo's code
    runs (the hook, nor the worker it starts)."""
    home, library = tmp_path / "home", tmp_path / "lib"
    env = env_for(home)
    install = [*own_module("app"), "--library", str(library), "hooks", "install", "--user"]
    subprocess.run(install, env=env, check=True, capture_output=True, timeout=60)
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert shlex.split(command)[1:5] == ["-E", "-P", "-m", "app"]
    transcript = debugging_session(tmp_path / "projects").path
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=hostile,
        env={**env, "PYTHONPATH": "."},
        input=stop_payload(transcript),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    assert wait_for_sessions(library, 1) == 1
    wait_for_worker(library / "spool")
    assert ran(hostile) == []


def test_console_script_hook_worker_ignores_the_cwd(hostile: Path, tmp_path: Path) -> None:
    """`librarian hook stop` from the repo: the worker it spawns is this installation's."""
    library = tmp_path / "lib"
    transcript = debugging_session(tmp_path / "projects").path
    done = subprocess.run(
        [str(LIBRARIAN), "--library", str(library), "hook", "stop"],
        cwd=hostile,
        env=env_for(tmp_path / "home"),
        input=stop_payload(transcript),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0
    assert wait_for_sessions(library, 1) == 1
    wait_for_worker(library / "spool")
    assert ran(hostile) == []


@pytest.mark.parametrize("shadowed", ["store", "widgets"])
def test_librarian_refuses_packages_from_two_installations(
    hostile: Path, tmp_path: Path, shadowed: str
) -> None:
    """Another `store` (or `widgets`) ahead of ours on the path: refused before it runs."""
    other = tmp_path / "other"
    other.mkdir()
    (hostile / shadowed).rename(other / shadowed)
    done = subprocess.run(
        [str(LIBRARIAN), "skills"],
        cwd=tmp_path,
        env=env_for(tmp_path / "home", PYTHONPATH=str(other)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "different installations" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert list(other.glob("RAN-*")) == []


# -- hooks never block and never wedge ---------------------------------------------------------


#: All of the project a Stop hook's process may import: queueing a transcript and starting a
#: worker needs nothing else (the budget is 60 ms of CPU for the whole process).
HOOK_MODULES = {"app", "app.entry", "app.hook_main", "store", "store.hooks", "store.paths"}
HOOK_MODULES |= {"store.process"}


def test_the_stop_hook_process_imports_almost_nothing(tmp_path: Path) -> None:
    """What `librarian hook stop` loads, measured in its own process: a few modules of the
    project and the standard library, no third-party package (nor `sqlite3`, the CLI, or the
    library), so 20 hooks at once stay cheap."""
    code = (
        "import sys; before = set(sys.modules); from app.entry import main;"
        f" sys.argv = ['librarian', '--library', {str(tmp_path / 'lib')!r}, 'hook', 'stop'];"
        " code = main(); import json;"
        " print(json.dumps([code, sorted(set(sys.modules) - before)]))"
    )
    done = subprocess.run(
        [sys.executable, "-E", "-P", "-c", code],
        input=stop_payload(tmp_path / "missing.jsonl"),
        capture_output=True,
        text=True,
        env=env_for(tmp_path / "home"),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == 0
    ours_and_others = {m for m in modules if m.split(".")[0] not in sys.stdlib_module_names}
    assert ours_and_others <= HOOK_MODULES, sorted(ours_and_others - HOOK_MODULES)
    heavy_stdlib = {"sqlite3", "asyncio", "argparse", "tomllib", "hashlib", "datetime"}
    heavy_stdlib |= {"typing", "difflib", "shlex"}  # ~10 ms of CPU the hook does not need
    assert not heavy_stdlib & set(modules), sorted(heavy_stdlib & set(modules))


def test_a_fifo_transcript_is_set_aside_and_the_queue_drains(tmp_path: Path) -> None:
    """A FIFO would block the worker forever while it holds the lock: it is not opened, it
    is set aside with the reason, and the transcript queued after it is ingested."""
    library, spool = tmp_path / "lib", tmp_path / "lib" / "spool"
    fifo = tmp_path / "projects" / "trap.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    transcript = debugging_session(tmp_path / "projects").path
    hooks.enqueue(spool, stop_payload(fifo), "stop")
    hooks.enqueue(spool, stop_payload(transcript), "stop")
    done = subprocess.run(
        [*own_module("app"), "--library", str(library), "hook", "drain"],
        env=env_for(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert wait_for_sessions(library, 1, seconds=5) == 1
    failed = hooks.failed_entries(spool)
    assert [f["transcript_path"] for f in failed] == [str(fifo)]
    assert "not a regular file (FIFO)" in failed[0]["reason"]
    assert not hooks.has_queue(spool)


def test_a_claim_whose_worker_died_is_taken_at_once_without_its_culprit(tmp_path: Path) -> None:
    """A work file left by a dead worker is claimed by the next lock holder right away; the
    entry it was ingesting when it died is set aside instead of killing the next one."""
    spool = tmp_path / "spool"
    for name in ("/killer.jsonl", "/fine.jsonl"):
        hooks.enqueue(spool, json.dumps({"transcript_path": name}), "stop")
    work, _ = hooks.claim(spool)
    assert work is not None
    hooks.mark_current(work, "/killer.jsonl")  # ... and the worker is killed here
    again, entries = hooks.claim(spool)
    assert again == work
    assert [e["transcript_path"] for e in entries] == ["/fine.jsonl"]
    failed = hooks.failed_entries(spool)
    assert [f["transcript_path"] for f in failed] == ["/killer.jsonl"]
    assert "stopped while ingesting" in failed[0]["reason"]


@pytest.mark.parametrize("action", ["stop", "session-start", "user-prompt"])
def test_a_hook_whose_stdin_never_closes_returns(tmp_path: Path, action: str) -> None:
    child = subprocess.Popen(
        [str(LIBRARIAN), "--library", str(tmp_path / "lib"), "hook", action],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(tmp_path / "home"),
    )
    assert child.stdin is not None
    child.stdin.write(b'{"transcript_path": "/x.jsonl", ')  # and never more, never closed
    child.stdin.flush()
    try:
        assert child.wait(timeout=20) == 0
    finally:
        child.kill()
        child.stdin.close()
        child.wait()


def test_a_hook_starts_no_worker_while_one_holds_the_spool(tmp_path: Path) -> None:
    """Hooks that find the lock held only queue; the lock holder drains what they queued."""
    library, spool = tmp_path / "lib", tmp_path / "lib" / "spool"
    spool.mkdir(parents=True)
    transcript = debugging_session(tmp_path / "projects").path
    run_hook = [str(LIBRARIAN), "--library", str(library), "hook", "stop"]
    with hooks.worker_lock(spool) as owner:
        assert owner
        for _ in range(5):
            subprocess.run(
                run_hook,
                input=stop_payload(transcript),
                text=True,
                env=env_for(tmp_path / "home"),
                timeout=30,
                check=True,
            )
        assert len(hooks.read_entries(spool / hooks.QUEUE)) == 5
        assert not (spool / "worker.log").exists()  # no worker was started
    drained = subprocess.run(
        [*own_module("app"), "--library", str(library), "hook", "drain"],
        env=env_for(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "1 sessions, 1 ingested" in drained.stdout
    assert not hooks.has_queue(spool)


def test_a_burst_of_hooks_starts_few_workers_and_loses_nothing(tmp_path: Path) -> None:
    """20 hooks at once for 4 transcripts: all ingested, and far fewer workers than hooks
    ever load the library."""
    library, spool = tmp_path / "lib", tmp_path / "lib" / "spool"
    transcripts = [debugging_session(tmp_path / f"projects-{i}", f"s-{i}").path for i in range(4)]
    children = [
        subprocess.Popen(
            [str(LIBRARIAN), "--library", str(library), "hook", "stop"],
            stdin=subprocess.PIPE,
            env=env_for(tmp_path / "home"),
        )
        for _ in range(20)
    ]
    for i, child in enumerate(children):
        assert child.stdin is not None
        child.stdin.write(stop_payload(transcripts[i % 4]).encode())
        child.stdin.close()
    assert [child.wait(timeout=30) for child in children] == [0] * 20
    assert wait_for_sessions(library, 4) == 4
    wait_for_worker(spool)
    log = (spool / "worker.log").read_text().splitlines()
    loads = [line for line in log if line.startswith("drained: ") and "ingested" in line]
    assert 1 <= len(loads) <= 4
    # Hooks that find a worker on its way start none: without the pending mark, most of
    # the 20 started a worker that found the lock held and left.
    idle = [line for line in log if line.startswith("drained: nothing")]
    assert len(idle) <= 2, log
