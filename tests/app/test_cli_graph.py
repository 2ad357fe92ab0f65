"""`librarian graph [SKILL]`: a skill's dependencies and dependents as a tree, or the graph's
problems; exit code 0 either way. Run in-process through `app.cli.main.main` over a real
library (scanned without the model)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.main import main
from store.library import Library
from tests.store.conftest import write_skill


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "base", "Base.")
    write_skill(root, "left", "Left.", extra="metadata:\n  requires: [base]\n")
    write_skill(root, "top", "Top.", extra="metadata:\n  extends: [left]\n  requires: [ghost]\n")
    write_skill(root, "ping", "Ping.", extra="metadata:\n  requires: [pong]\n")
    write_skill(root, "pong", "Pong.", extra="metadata:\n  requires: [ping]\n")
    with Library(tmp_path / "lib") as library:
        library.scan([root], embed=False)
        library.relate("pong", "complements", "base")
    return tmp_path / "lib"


Run = Callable[..., tuple[int, str]]


@pytest.fixture
def run(library_dir: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    def call(*args: str) -> tuple[int, str]:
        code = main(["--library", str(library_dir), "graph", *args])
        return code, capsys.readouterr().out

    return call


def test_without_a_skill_it_lists_the_problems(run: Run) -> None:
    code, out = run()
    assert code == 0
    assert out.splitlines()[0] == (
        "1 cycles, 1 dangling references, 0 self-relations, 0 stable skills on proposed ones"
    )
    assert "cycle: ping -> pong -> ping" in out
    assert "dangling: top requires ghost (no such skill; extracted)" in out
    code, out = run("--json")
    data = json.loads(out)
    assert data["cycles"] == [["ping", "pong"]]
    assert data["dangling"][0]["target"] == "ghost"


def test_a_skill_as_a_tree(run: Run) -> None:
    code, out = run("base")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "base (stable)"
    assert "  nothing" in lines[1:3]
    assert "blast radius: 2 skills (1 direct) · 0 sessions · 0 patterns · 0 drafts" in out
    assert "  left (stable) requires base  [depth 1]" in lines
    assert "    top (stable) extends left  [depth 2]" in lines
    assert "  pong (stable) complements base" in lines
    code, out = run("top")
    assert "ghost (missing) [extracted]  <- dangling: no such skill" in out
    assert "dangling: top requires ghost" in out
    code, out = run("pong", "--json")
    data = json.loads(out)
    assert [(d["name"], d["relation"], d["manual"]) for d in data["dependencies"]] == [
        ("ping", "requires", False),
        ("base", "complements", True),
    ]
    assert data["problems"]["cycles"] == [["ping", "pong"]]


def test_an_unknown_skill_is_an_error(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(library_dir), "graph", "nope"]) != 0
    assert "no skill named 'nope'" in capsys.readouterr().err
