"""`librarian forget` as a person runs it: a plan first (a searched text masked), a question
before anything goes, `--yes` for scripts; afterwards nothing the CLI prints quotes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.forget import DECLINED, cmd_forget
from app.cli.main import build_parser, main
from store.embed import FastEmbedder
from store.library import Library
from tests.store.test_forget import SECRET, story


@pytest.fixture
def library_dir(tmp_path: Path, _embedder: FastEmbedder) -> Path:
    story(tmp_path / "projects")
    with Library(tmp_path / "lib", embedder=_embedder) as library:
        library.ingest([tmp_path / "projects"])
    return tmp_path / "lib"


def forget(library: Path, *argv: str, reply: str = "") -> int:
    args = build_parser().parse_args(["--library", str(library), "forget", *argv])
    return cmd_forget(args, read=lambda _question: reply)


def test_forget_shows_the_plan_asks_and_then_erases(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(library_dir), "forget", "text", SECRET, "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert plan.startswith("forget text: ")
    assert "message" in plan
    assert "summarys" not in plan
    assert "in 1 session\n" in plan  # one session, in English
    assert "[match]" in plan
    assert SECRET not in plan  # the preview masks what is searched for

    assert main(["--library", str(library_dir), "forget", "text", SECRET]) == 2  # not a terminal
    assert "--yes" in capsys.readouterr().err
    assert forget(library_dir, "text", SECRET, reply="n") == DECLINED
    assert "nothing erased" in capsys.readouterr().err
    assert main(["--library", str(library_dir), "nodes"]) == 0
    assert SECRET in capsys.readouterr().out  # still there

    assert forget(library_dir, "text", SECRET, "--reason", "customer name", reply="y") == 0
    done = capsys.readouterr().out
    assert "erased" in done
    assert "database files scrubbed" in done
    for argv in (["nodes", "--status", "forgotten"], ["session", "s-one"], ["verify"]):
        assert main(["--library", str(library_dir), *argv]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out
    assert "forgotten" in out
    assert "erased by `librarian forget`" in out  # verify counts the tombstones


def test_forget_with_yes_and_json_never_prints_what_it_erased(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(library_dir), "forget", "session", "s-one", "--json"]) == 2
    capsys.readouterr()
    root = ["--library", str(library_dir)]
    assert main([*root, "forget", "session", "s-one", "--yes", "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["seq"] > 0
    assert report["plan"]["sessions"] == ["s-one"]
    assert all(item["preview"] == "" for item in report["plan"]["items"])
    assert SECRET not in out
    assert main([*root, "forget", "node", "n_nope"]) == 2
    assert "no node 'n_nope'" in capsys.readouterr().err
    assert main([*root, "forget", "scrub"]) == 0
