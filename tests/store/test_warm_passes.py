"""The warm tier's single passes (issue 11's speed budget): a session's tool calls are paired
once, the per-session memos are empty before and after each session (nothing is served from
an earlier read of the same file), the memos change no result, and the faster candidate
copy is `dataclasses.replace`."""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

import pytest

from store.ingest import actions as actions_module
from store.ingest import bar, context, memo, output, snippets, statements, warm
from store.ingest.candidates import Candidate, changed
from store.ingest.caseblind import CaseBlind
from store.ingest.transcript import parse_session
from store.models import ParsedSession
from tooling.synthetic.data import synthetic_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> ParsedSession:
    path = tmp_path_factory.mktemp("warm") / "session.jsonl"
    synthetic_session(path, 120_000)
    parsed = parse_session(path)
    assert isinstance(parsed, ParsedSession)
    return parsed


def test_the_tool_calls_are_paired_once_per_session(
    session: ParsedSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    build = actions_module.actions

    def counted(streams: Any) -> list[actions_module.Action]:
        calls.append(len(streams))
        return build(streams)

    monkeypatch.setattr(context, "tool_calls", counted)
    monkeypatch.setattr(actions_module, "actions", counted)  # for a reader that imports it anew
    result = warm.extract_warm(session)
    assert result.nodes
    assert not result.problems
    assert len(calls) == 1


def test_the_memos_are_empty_after_a_session_and_change_no_result(
    session: ParsedSession,
) -> None:
    first = warm.extract_warm(session)
    assert memo.held() == 0
    with memo.session():  # the memos filled by another reader of the same texts
        for m in session.messages:
            statements.clause(m.text)
            bar.is_narration(m.text)
            snippets.clean(m.text, 200)
        assert memo.held() > 0
        again = warm._extract(session)  # served from those memos
    assert memo.held() == 0
    assert again == first


def _failing_session() -> None:
    with memo.session():
        bar.is_narration("Let me check the logs.")
        raise RuntimeError("a strategy bug")


def test_a_memo_is_emptied_even_when_the_session_fails() -> None:
    with pytest.raises(RuntimeError):
        _failing_session()
    assert memo.held() == 0


def test_a_changed_candidate_is_what_replace_makes(session: ParsedSession) -> None:
    c = Candidate("keywords", "DISCOVERY", session.messages[1], 0, 3, 7, "ev", 0.45, "sum", 4, 5)
    for changes in ({}, {"routine": "r"}, {"informativeness": 0.5, "suppressed": "s"}):
        ours, theirs = changed(c, **changes), dataclasses.replace(c, **changes)
        assert ours is not c
        assert all(getattr(ours, f.name) == getattr(theirs, f.name) for f in dataclasses.fields(c))
    with pytest.raises(TypeError, match="no field 'colour'"):
        changed(c, colour="red")


TRICKY = (
    "I THINK the Pool Might be EXHAUSTED because of `MAX_CONN`.",
    "Let me check the Kelvin sign \u212a and the dotted \u0130 in 'İnstall'.",
    "Root cause: the timeout was never set, so the pool ran dry.",
    "Fixed: tests pass now. Switched to `httpx` instead of requests.",
    "The file shows it; the script returned 3 errors; we use the same config.",
    "ok so it turns out that the cache is stale",
    "",
)


def test_a_case_blind_pattern_answers_as_its_ignorecase_pattern(session: ParsedSession) -> None:
    blind = [
        v
        for module in (bar, warm, statements)
        for v in vars(module).values()
        if isinstance(v, CaseBlind)
    ]
    assert len(blind) >= 10
    texts = [*TRICKY, *(m.text for m in session.messages[:200])]
    for fast in blind:
        for text in texts:
            assert fast.search(text) == bool(fast.blind.search(text)), (fast.pattern, text)
            assert fast.match(text) == bool(fast.blind.match(text)), (fast.pattern, text)
    with pytest.raises(ValueError, match="lowercase"):
        CaseBlind(re.compile(r"\bError\b", re.IGNORECASE))


def _errorish_before(view: str) -> tuple[int, int] | None:
    """`output._errorish` as it was: IGNORECASE on the view itself (short outputs only)."""
    found = list(itertools.islice(output._ERRORISH_LINE.finditer(view), 6))
    if not found:
        return None
    strong = [m for m in found if output._STRONG.search(m.group())]
    return (strong[0] if strong else found[0]).span()


def test_error_ish_lines_are_found_as_before_on_ascii_and_other_output(
    session: ParsedSession,
) -> None:
    outputs = [
        "Compiling…\nWARNING: deprecated\nERROR: could not connect to db\nexit 1",
        "notice: nvm not found\nConfig Missing\nBuild FAILED for target `api`",
        "Notice: No config file found\nnothing else",
        "nothing to see here\nall good",
        "Ünïcode line\nFatal: permission denied (publickey)",
        *(m.text for m in session.messages if m.kind == "tool_result"),
    ]
    for text in outputs:
        found = output._errorish(text)
        assert (found.span() if found else None) == _errorish_before(text), text[:80]
