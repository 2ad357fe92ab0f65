"""The README's two-developer walkthrough, pasted into bash as it is written (paths moved
into a folder of this run), and the CLI's one-line errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from store.team import server
from tests.conftest import REPO


def walkthrough() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Two developers on one machine", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_readme_walkthrough_runs_as_written() -> None:
    base = Path(tempfile.mkdtemp(prefix="librarian-walkthrough-"))
    base.chmod(0o755)  # the hub server's user must be able to enter its folder
    script = walkthrough().replace("/tmp/", f"{base}/")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    try:
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        out = result.stdout
        pushed = re.search(r"pushed ([\d,]+) changes? in \d+ batch(es)? ", out)
        assert pushed is not None
        nodes, drafts = (int(n) for n in re.findall(r"(\d+) pending team items?", out))
        assert nodes > 0
        assert nodes + drafts == int(
            pushed.group(1).replace(",", "")
        )  # every approved node, every draft
        assert re.search(r"pulled [\d,]+ events? from ", out)
        assert "waiting for you to review: 0" in out
        assert f"your items in the hub: {nodes} approved, {drafts} staged" in out
        assert out.count("all checks passed") == 1  # team verify
        assert "stopped" in out
    finally:
        server.stop(base / "team-hub", immediate=True)
        shutil.rmtree(base, ignore_errors=True)


def run(*args: str, library: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-E", "-P", "-m", "app", "--library", str(library), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_team_commands_fail_in_one_line(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    off = run("team", "push", library=library)
    assert off.returncode == 2
    assert off.stderr.count("\n") == 1
    assert "team mode is off" in off.stderr
    status = run("team", "status", "--json", library=library)
    assert status.returncode == 0
    assert json.loads(status.stdout)["configured"] is False
    run(
        "config",
        "set",
        "team.hub",
        "postgresql://alice:hunter2@127.0.0.1:1/librarian",
        library=library,
    )
    leaked = run("team", "pull", library=library)
    assert leaked.returncode == 2
    assert "holds a password" in leaked.stderr
    assert "hunter2" not in leaked.stderr
    run("config", "set", "team.hub", "postgresql://alice@127.0.0.1:1/librarian", library=library)
    down = run("team", "push", library=library)
    assert down.returncode == 2
    assert down.stderr.count("\n") == 1
    assert "unreachable" in down.stderr
