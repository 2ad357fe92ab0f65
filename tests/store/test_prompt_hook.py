"""The UserPromptSubmit hook (issue 15, item 5): its input, its floor, its text, masking,
the lexical answer without the ranker, and that it never fails the prompt."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest

from store.library import Library
from store.models import Suggestion
from store.skills import prompt_context
from store.skills.prompt_context import (
    Pick,
    Request,
    Settings,
    hook_output,
    parse_request,
    ranker_paths,
    render,
    worth_ranking,
)
from store.skills.prompt_hook import run_hook
from store.skills.prompt_lexical import connect, lexical_output, lexical_picks
from store.skills.prompt_rank import choose
from store.verify import verify
from tests.store.conftest import HashEmbedder, write_skill

TOKEN = "gh" + "p_" + "Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7I"


def hook_input(prompt: object, **extra: object) -> str:
    return json.dumps(
        {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": "/w", **extra}
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (hook_input("deploy it"), Request("deploy it", "/w", "")),
        (hook_input("x", session_id="s"), Request("x", "/w", "s")),
        ("", None),
        ("{not json", None),
        ("[1, 2]", None),
        (hook_input(5), None),
        (json.dumps({"hook_event_name": "Stop", "prompt": "x"}), None),
        ("[" * 100_000, None),
    ],
)
def test_parse_request(raw: str, expected: Request | None) -> None:
    assert parse_request(raw) == expected


@pytest.mark.parametrize(
    ("prompt", "worth"),
    [("thanks", False), ("ok continue", False), ("/deploy prod", False), ("", False),
     ("roll back the payments deploy", True)],
)  # fmt: skip
def test_worth_ranking(prompt: str, worth: bool) -> None:
    assert worth_ranking(prompt) is worth


def test_settings_from_config_are_bounded(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[prompt_hook]\nfloor = 0.5\nskills = 500\nwait_ms = "x"\nserver = false\n',
        encoding="utf-8",
    )
    settings = Settings.from_config(config)
    assert (settings.floor, settings.skills, settings.wait_ms, settings.server) == (
        0.5,
        10,
        1000,
        False,
    )
    config.write_text("not [toml", encoding="utf-8")
    assert Settings.from_config(config) == Settings()


def test_render_is_factual_inert_and_bounded() -> None:
    picks = [
        Pick("deploy", "Ships <b>the</b> app.\nUse when `ready`.", 0.61, ("ship", "app")),
        Pick("other", "x" * 500, 0.5),
    ]
    text = render(picks, 400)
    assert text.startswith("skill-librarian: installed skills whose descriptions match")
    assert (
        "- Skill `deploy`: Ships ‹b›the‹/b› app. Use when 'ready'."
        " (relevance 0.61; matched ship, app)" in text
    )
    assert "other" not in text  # it would not fit in 400 characters
    assert render([], 400) == ""
    data = json.loads(hook_output(text))
    assert data["hookSpecificOutput"] == {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": text,
    }
    assert hook_output("") == ""


def test_choose_keeps_what_clears_the_floor_and_masks_secrets() -> None:
    hits = [
        Suggestion(3, "deploy", "stable", f"Deploys with token {TOKEN}.", 0.9, 1, 1, 1),
        Suggestion(4, "weak", "stable", "Barely related.", 0.8, 1, 1, 1),
    ]
    cos = {3 * 16: 0.55, 4 * 16: 0.2, 4 * 16 + 1: 0.39}

    picks = choose(
        "deploy the payments service",
        Settings(),
        embed=lambda texts: np.ones((len(texts), 4), dtype=np.float32),
        rank=lambda prompt, vector, limit: hits,
        cosines=lambda vector, labels: {label: cos[label] for label in labels if label in cos},
    )
    assert [p.name for p in picks] == ["deploy"]
    assert TOKEN not in picks[0].description
    assert "[REDACTED" in picks[0].description


# --------------------------------------------------------------------------- the lexical answer


@pytest.fixture
def library(tmp_path: Path) -> Library:
    root = tmp_path / "skills"
    write_skill(
        root,
        "terraform-modules",
        "Build reusable Terraform modules for AWS VPC networks and subnets.",
    )
    write_skill(
        root,
        "retired-terraform",
        "Build reusable Terraform modules for AWS VPC networks and subnets, old.",
    )
    write_skill(root, "release-notes", f"Write release notes from a changelog; token {TOKEN}.")
    write_skill(
        root, "postgres-vacuum", "Tune autovacuum on busy PostgreSQL tables when bloat grows."
    )
    lib = Library(tmp_path / "lib", embedder=HashEmbedder())
    lib.config.set("embedding.model", f'"{HashEmbedder.model_name}"')
    lib.scan([root])
    lib.change_status("retired-terraform", "skill.retired", "replaced")
    return lib


def test_lexical_picks_cover_the_prompt(library: Library) -> None:
    conn = connect(library.paths.db)
    try:
        picks = lexical_picks(
            conn, "write a terraform module for an aws vpc with subnets", Settings()
        )
        assert [p.name for p in picks] == ["terraform-modules"]  # never the retired one
        assert picks[0].evidence == "lexical"
        assert set(picks[0].matched) >= {"terraform", "aws", "vpc"}
        assert lexical_picks(conn, "thanks, that looks good", Settings()) == []
    finally:
        conn.close()
        library.close()


def test_lexical_output_masks_and_logs(library: Library) -> None:
    root = library.paths.root
    library.close()
    request = Request("write release notes from the changelog for this release", "/w", "s9")
    out = lexical_output(root, request, Settings())
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "release-notes" in context
    assert TOKEN not in out
    with Library(root, embedder=HashEmbedder()) as reopened:
        (logged,) = [r for r in reopened.retrievals() if r.tool == "user-prompt"]
        assert logged.query.startswith("write release notes")
        assert logged.hits[0][:2] == ("skill", "release-notes")
        assert verify(reopened).ok


def test_run_hook_never_fails_the_prompt(tmp_path: Path) -> None:
    assert run_hook(tmp_path, hook_input("deploy the payments service")) == ""  # no library
    (tmp_path / "library.db").write_bytes(b"not a database")
    assert run_hook(tmp_path, hook_input("deploy the payments service")) == ""
    assert run_hook(tmp_path, "garbage") == ""

    def broken(root: Path, request: Request, settings: Settings) -> str:
        raise RuntimeError("boom")

    assert run_hook(tmp_path, hook_input("deploy the payments service"), broken) == ""


def test_without_the_ranker_the_hook_answers_from_the_index(
    library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = library.paths.root
    library.close()
    (root / "config.toml").write_text("[prompt_hook]\nserver = false\n", encoding="utf-8")
    started: list[Path] = []
    monkeypatch.setattr(prompt_context, "start_ranker", lambda r, log, m: started.append(r))
    out = run_hook(root, hook_input("build a terraform module for an aws vpc with subnets"))
    assert "terraform-modules" in out
    assert started == []  # the ranker is off: never started


def test_the_ranker_lives_in_a_private_folder(tmp_path: Path) -> None:
    short = Path(tempfile.mkdtemp(prefix="lr-", dir="/tmp"))
    env = {"XDG_RUNTIME_DIR": str(short)}
    try:
        _check_private(tmp_path, short, env)
    finally:
        os.chmod(short / "skill-librarian", 0o700)
        shutil.rmtree(short)
    long_env = {"XDG_RUNTIME_DIR": str(tmp_path / ("x" * 90))}
    sock, _ = ranker_paths(tmp_path / "lib", long_env)  # type: ignore[misc]
    assert len(str(sock)) <= 100  # too long for a socket: the /tmp folder instead


def _check_private(tmp_path: Path, short: Path, env: dict[str, str]) -> None:
    sock, _lock = ranker_paths(tmp_path / "lib", env)  # type: ignore[misc]
    folder = sock.parent
    assert folder == short / "skill-librarian"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert sock != ranker_paths(tmp_path / "other", env)[0]  # type: ignore[index]
    os.chmod(folder, 0o777)  # someone else could plant a socket: no ranker
    assert ranker_paths(tmp_path / "lib", env) is None


def test_a_ranker_is_started_at_most_once_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawned: list[list[str]] = []
    monkeypatch.setattr(
        prompt_context.hooks, "spawn_worker", lambda argv, log: spawned.append(argv)
    )
    marker = tmp_path / "x.started"
    prompt_context.start_ranker(tmp_path / "lib", tmp_path / "log", marker)
    prompt_context.start_ranker(tmp_path / "lib", tmp_path / "log", marker)
    assert len(spawned) == 1
    assert spawned[0][-2:] == ["hook", "prompt-server"]
    assert spawned[0][1:3] == ["-E", "-P"]  # isolated: a repository's own `app` never runs
    old = marker.stat().st_mtime - 120
    os.utime(marker, (old, old))
    prompt_context.start_ranker(tmp_path / "lib", tmp_path / "log", marker)
    assert len(spawned) == 2
