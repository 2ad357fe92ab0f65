"""`librarian ingest --llm` as a person runs it: the token estimate first, a question on a
terminal, `--yes` for scripts, a refusal without either, `--dry-run` to look only.

The LLM is the real `AnthropicClient` over `httpx2.MockTransport` (no retries), passed in
through `cmd_ingest`'s `make_client`; `main` builds its own from config and an API key."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli.common import CliError
from app.cli.main import build_parser, main
from app.cli.sessions import DECLINED, cmd_ingest
from store.embed import FastEmbedder
from store.ingest.cold import PROMPT_VERSION
from store.library import Library
from tests.store.test_cold import MODEL, FakeApi
from tests.store.test_cold_upgrade import careful, client
from tests.store.test_ingest import debugging_session

CONFIGURED = "claude-sonnet-5-5"  # llm.model's default


@pytest.fixture
def setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _embedder: FastEmbedder
) -> tuple[Path, Path]:
    """(library, projects): the session ingested by the warm tier alone."""
    monkeypatch.setattr("store.kernel.FastEmbedder", lambda *a, **k: _embedder)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    debugging_session(tmp_path / "projects")
    with Library(tmp_path / "lib", embedder=_embedder) as library:
        library.ingest([tmp_path / "projects"])
    return tmp_path / "lib", tmp_path / "projects"


def ingest(
    library: Path,
    *argv: str,
    api: FakeApi | None = None,
    read: Callable[[str], str] = input,
) -> int:
    args = build_parser().parse_args(["--library", str(library), "ingest", *argv])
    return cmd_ingest(args, read=read, make_client=lambda _library: client(api or FakeApi()))


def events(library: Path) -> int:
    with Library(library, read_only=True) as opened:
        return opened.last_seq()


def statuses(library: Path) -> dict[str, str]:
    with Library(library, read_only=True) as opened:
        return {n.node_id: n.status for n in opened.nodes()}


def test_dry_run_shows_the_estimate_and_sends_nothing(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    library, projects = setup
    seq = events(library)
    # No API key, no client: looking is free.
    assert main(["--library", str(library), "ingest", "--llm", "--dry-run", str(projects)]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert head.startswith(f"cold tier ({CONFIGURED}, prompt {PROMPT_VERSION}): 1 sessions")
    assert "= 1 calls, ~" in head
    assert "at most 4,000 output tokens" in head
    assert "(new)" in out
    assert "nothing has been sent yet" in out
    assert events(library) == seq

    argv = ["--library", str(library), "ingest", "--llm", "--dry-run", "--json", str(projects)]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["calls"], data["model"], data["prompt_version"]) == (1, CONFIGURED, "cold-2")
    assert data["input_tokens"] == data["sessions"][0]["input_tokens"] > 1500
    assert data["max_output_tokens"] == 4000


def test_without_a_terminal_or_yes_nothing_is_sent(
    setup: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    library, projects = setup
    seq, api = events(library), FakeApi(replies=[careful()])
    with pytest.raises(CliError, match="confirm with --yes"):
        ingest(library, "--llm", str(projects), api=api)  # pytest's stdin is no terminal
    assert api.requests == []  # not even a token count
    assert events(library) == seq

    # The same through `main`, with a key in the environment: refused before any request.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert main(["--library", str(library), "ingest", "--llm", str(projects)]) == 2
    assert "--yes" in capsys.readouterr().err
    assert events(library) == seq


def test_a_terminal_is_asked_after_the_estimate(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    library, projects = setup
    seq = events(library)
    asked: list[tuple[str, str]] = []

    def answer(reply: str) -> Callable[[str], str]:
        def read(question: str) -> str:
            asked.append((question, capsys.readouterr().out))  # what was shown by then
            return reply

        return read

    api = FakeApi(replies=[careful()])
    assert ingest(library, "--llm", str(projects), api=api, read=answer("n")) == DECLINED
    [(question, shown)] = asked
    assert question == f"send 1 calls to {MODEL}? [y/N] "
    assert shown.startswith(f"cold tier ({MODEL}, prompt {PROMPT_VERSION}): 1 sessions")
    assert "nothing ingested, nothing sent" in capsys.readouterr().err
    assert api.requests == []
    assert events(library) == seq

    assert ingest(library, "--llm", str(projects), api=api, read=answer("y")) == 0
    assert len(api.calls()) == 1
    report = capsys.readouterr().out
    assert f"cold tier ({MODEL}, prompt {PROMPT_VERSION}): 1 sessions read in 1 calls" in report
    assert "4 warm nodes superseded" in report
    assert list(statuses(library).values()).count("superseded") == 4

    # Nothing left to send: no question, and the estimate says why.
    asked.clear()
    assert ingest(library, "--llm", str(projects), api=api, read=answer("y")) == 0
    assert asked == []
    assert len(api.calls()) == 1
    out = capsys.readouterr().out
    assert "nothing to send; 1 sessions already read by this model and prompt" in out
    assert ingest(library, "--llm", "--again", "--yes", str(projects), api=api) == 0
    assert len(api.calls()) == 2


def test_yes_shows_the_estimate_then_sends(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    library, projects = setup
    api = FakeApi(replies=[careful()])
    assert ingest(library, "--llm", "--yes", "--json", str(projects), api=api) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"cold tier ({MODEL}, prompt {PROMPT_VERSION}): 1 sessions")
    report = json.loads(captured.out)  # stdout stays one JSON document
    assert report["cold"]["superseded"] == 4
    assert report["cold"]["calls"] == 1

    assert main(["--library", str(library), "nodes", "--status", "superseded"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 4
    assert all("(superseded by n_" in line for line in listed)


@pytest.mark.parametrize("flag", ["--again", "--yes", "--dry-run"])
def test_cold_tier_flags_need_llm(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    library, projects = setup
    assert main(["--library", str(library), "ingest", flag, str(projects)]) == 2
    assert f"{flag} goes with --llm" in capsys.readouterr().err


def test_make_client_is_not_needed_for_a_dry_run(setup: tuple[Path, Path]) -> None:
    library, projects = setup
    args = build_parser().parse_args(
        ["--library", str(library), "ingest", "--llm", "--dry-run", str(projects)]
    )

    def refuse(_library: Any) -> Any:
        raise AssertionError("a dry run builds no client")

    assert cmd_ingest(args, make_client=refuse) == 0
