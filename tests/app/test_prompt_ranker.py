"""The UserPromptSubmit hook end to end, as Claude Code runs it: the hook process (isolated
entry point) against a real resident ranker with the real model, its answer, its log, and
the ranker leaving when asked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.library import Library
from store.process import own_module
from store.skills.prompt_context import ranker_paths
from tests.store.conftest import write_skill

TOKEN = "gh" + "p_" + "Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7I"
PROMPT = "Our Kubernetes release failed its health checks; roll the deployment back"

pytestmark = pytest.mark.model


@pytest.fixture
def ranked(tmp_path: Path, _embedder: FastEmbedder) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path / "skills"
    write_skill(
        root,
        "kubernetes-rollback",
        f"Roll back a broken Kubernetes deployment to its last good revision (token {TOKEN}).",
    )
    write_skill(root, "release-notes", "Write customer-facing release notes from a changelog.")
    library_dir = tmp_path / "lib"
    with Library(library_dir, embedder=_embedder) as library:
        library.scan([root])
    # the ranker process loads the model the test session already assembled
    (library_dir / "models").rmdir() if (library_dir / "models").is_dir() else None
    (library_dir / "models").symlink_to(_embedder._models_dir, target_is_directory=True)
    run = Path(tempfile.mkdtemp(prefix="lr-", dir="/tmp"))  # short: a socket path has a limit
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LIBRARIAN_HOME")}
    env = keep | {"XDG_RUNTIME_DIR": str(run)}
    ranker = subprocess.Popen(
        [*own_module("app"), "--library", str(library_dir), "hook", "prompt-server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "ranker.log").open("wb"),
    )
    try:
        sock = ranker_paths(library_dir, env)[0]  # type: ignore[index]
        deadline = time.monotonic() + 120
        while not sock.exists() and ranker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sock.exists(), (tmp_path / "ranker.log").read_text(errors="replace")[-2000:]
        yield library_dir, env
    finally:
        subprocess.run(
            [*own_module("app"), "--library", str(library_dir), "hook", "prompt-stop"],
            env=env,
            timeout=30,
            check=False,
            capture_output=True,
        )
        try:
            ranker.wait(timeout=30)
        finally:
            ranker.kill()
            shutil.rmtree(run, ignore_errors=True)


def hook(library_dir: Path, env: dict[str, str], prompt: str) -> subprocess.CompletedProcess[str]:
    data = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
        "cwd": "/w",
        "session_id": "s1",
    }
    return subprocess.run(
        [
            sys.executable,
            "-E",
            "-P",
            "-m",
            "app",
            "--library",
            str(library_dir),
            "hook",
            "user-prompt",
        ],
        input=json.dumps(data),
        text=True,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_hook_relays_the_rankers_picks_masked_and_logged(
    ranked: tuple[Path, dict[str, str]],
) -> None:
    library_dir, env = ranked
    done = hook(library_dir, env, PROMPT)
    assert done.returncode == 0
    assert done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "kubernetes-rollback" in context
    assert "release-notes" not in context  # below the floor for this prompt
    assert TOKEN not in done.stdout
    quiet = hook(library_dir, env, "please write a haiku about autumn leaves")
    assert (quiet.returncode, quiet.stdout) == (0, "")
    deadline = time.monotonic() + 10
    logged = []
    while not logged and time.monotonic() < deadline:  # the ranker logs after replying
        with Library(library_dir, read_only=True) as library:
            logged = [r for r in library.retrievals() if r.tool == "user-prompt"]
        time.sleep(0.1)
    assert logged[0].hits[0][:2] == ("skill", "kubernetes-rollback")
