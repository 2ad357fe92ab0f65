"""`librarian lineage` through the real command parser, over a tmp library: versions, status
history, provenance, events, `--diff`, `--json`, hostile text and unknown skills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.store.conftest import write_skill

HOSTILE = "[bold red]boom[/] \x1b[2J"


@pytest.fixture
def library_dir(tmp_path: Path, _embedder: FastEmbedder) -> Path:
    root = tmp_path / "skills"
    folder = tmp_path / "lib"
    write_skill(root, "deploy", "Deploy the API.", body="Step one.\nStep two.\n")
    write_skill(root, "deploy-v2", "Deploy the API, safer.")
    with Library(folder, embedder=_embedder, clock=stepping_clock()) as library:
        library.scan([root])
        write_skill(root, "deploy", "Deploy the API.", body="Step one.\nStep 2, checked.\n")
        library.scan([root])
        library.change_status("deploy", "skill.deprecated", HOSTILE, alert="drifting")
        library.relate("deploy-v2", "supersedes", "deploy")
        for number in range(30):
            library.record_outcome("deploy", number % 2 == 0, detail=f"run {number}")
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_lineage_prints_versions_history_provenance_and_events(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--library", str(library_dir), "lineage", "deploy")
    assert code == 0
    assert out.startswith("deploy  [deprecated]  v2")
    assert "superseded by: deploy-v2" in out
    versions = out.split("Versions (newest first)\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in versions] == ["v2", "v1"]
    assert "stable → deprecated" in versions[0]
    history = out.split("Status history (newest first)\n")[1].split("\n\n")[0]
    assert "deprecated  stable → deprecated" in history
    assert "ALERT drifting" in history
    assert "[bold red]boom[/] \\x1b[2J" in history  # shown literally, escape neutralised
    assert "\x1b" not in out
    assert "Provenance: installed from " in out
    assert "Events (20 of 33, newest first)" in out
    events = out.split("newest first)\n")[-1].splitlines()
    assert len(events) == 20
    assert "run 29" in events[0]


def test_lineage_pages_events_and_prints_json(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "--library",
        str(library_dir),
        "lineage",
        "deploy",
        "--json",
        "--events",
        "5",
        "--offset",
        "30",
    )
    assert code == 0
    data = json.loads(out)
    assert data["name"] == "deploy"
    assert data["event_total"] == 33
    types = [e["type"] for e in data["events"]]
    assert types == ["skill.deprecated", "skill.changed", "skill.installed"]
    assert data["events_offset"] == 30
    assert [v["version_no"] for v in data["versions"]] == [2, 1]
    assert data["history"][0]["alert"] == "drifting"
    assert data["provenance"]["origin"] == "installed"
    assert data["superseded_by"] == ["deploy-v2"]


def test_lineage_diff(library_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "--library", str(library_dir), "lineage", "deploy", "--diff", "1", "2"
    )
    assert code == 0
    assert out.splitlines()[:2] == ["--- deploy v1", "+++ deploy v2"]
    assert "-Step two." in out
    assert "+Step 2, checked." in out
    code, out, _ = run(
        capsys, "--library", str(library_dir), "lineage", "deploy", "--diff", "1", "2", "--json"
    )
    assert json.loads(out)["diff"].startswith("--- deploy v1")


def test_unknown_skill_or_version_is_one_line_and_exit_2(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--library", str(library_dir), "lineage", "ghost")
    assert (code, out) == (2, "")
    assert err == "librarian: error: no skill named 'ghost'\n"
    code, _, err = run(
        capsys, "--library", str(library_dir), "lineage", "deploy", "--diff", "1", "9"
    )
    assert code == 2
    assert err == "librarian: error: skill 'deploy' has no version 9\n"
