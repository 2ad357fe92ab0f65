"""Parse every real transcript in the corpus (SOURCES.md) and check it against the files.

Per-file numbers were worked out by reading the files; tool calls and errors are also
recounted here with a plain `json` scan, independent of the parser.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from store.ingest.transcript import find_session_files, parse_session
from store.models import ParsedSession

pytestmark = pytest.mark.corpus

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("LIBRARIAN_CORPUS", REPO.parent / "shared" / "corpus"))
TRANSCRIPTS = CORPUS / "transcripts"
if not TRANSCRIPTS.is_dir():
    pytest.skip(f"no transcripts corpus at {TRANSCRIPTS}", allow_module_level=True)

KIMUSON = "d-kimuson-claude-code-viewer"
DAAAIN = "daaain-claude-code-log"
SIMONW = "simonw-claude-code-transcripts"
FE5E = f"{KIMUSON}/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
C037 = f"{KIMUSON}/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"

#: file -> (messages, turns, tool calls, errors, skipped)
EXPECTED: dict[str, tuple[int, int, int, int, dict[str, int]]] = {
    f"{KIMUSON}/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": (21, 1, 12, 1, {}),
    C037: (49, 1, 21, 3, {}),  # with the two legacy agent-test-hash files
    FE5E: (346, 2, 167, 23, {}),
    f"{DAAAIN}/edge_cases.jsonl": (
        12,
        6,
        3,
        1,
        {
            # line 10 `message` has `contenst` (no content); line 11 `message: "error"`;
            # line 18 `content: ["wow error"]` (a string, not a block)
            "bad_field": 3,
            # line 13 a JSON string, 15 an int, 16 a list
            "not_an_object": 3,
            # line 14 `{"silly": "this"}`: no type
            "unknown_type": 1,
        },
    ),
    f"{DAAAIN}/representative_messages.jsonl": (12, 4, 2, 0, {}),
    f"{DAAAIN}/session_b.jsonl": (3, 2, 0, 0, {}),
    f"{DAAAIN}/todowrite_examples.jsonl": (12, 2, 3, 0, {}),
    f"{SIMONW}/sample_session.jsonl": (8, 2, 2, 0, {}),
}
#: Sessions that genuinely have no messages (and why). None in this corpus.
EXPECTED_FAILURES: dict[str, str] = {}


def rel(path: Path) -> str:
    return path.resolve().relative_to(TRANSCRIPTS.resolve()).as_posix()


def raw_records(path: Path) -> list[dict[str, Any]]:
    """The object lines of a JSONL file, independently of the parser."""
    records = []
    for line in path.read_bytes().splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def blocks(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    found = []
    for record in records:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == kind]
    return found


def parsed(name: str) -> ParsedSession:
    session = parse_session(TRANSCRIPTS / name)
    assert isinstance(session, ParsedSession), session
    return session


def test_discovery_finds_every_main_session() -> None:
    found = [rel(path) for path in find_session_files(TRANSCRIPTS)]
    assert found == sorted(EXPECTED) + sorted(EXPECTED_FAILURES)
    assert not any("agent-test-hash" in name for name in found)  # attached to 5c0375b4


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_session_numbers(name: str) -> None:
    messages, turns, tool_calls, errors, skipped = EXPECTED[name]
    session = parsed(name)
    assert (len(session.messages), session.turns, session.tool_calls, session.errors) == (
        messages,
        turns,
        tool_calls,
        errors,
    )
    assert session.skipped == skipped
    assert session.skills_used == ()  # no Skill calls or skill bodies in this corpus
    assert [m.index for m in session.messages] == list(range(messages))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_tool_counts_match_an_independent_scan(name: str) -> None:
    session = parsed(name)
    paths = [Path(f) for f in session.files]
    records = [r for path in paths for r in raw_records(path)]
    assert session.tool_calls == len(blocks(records, "tool_use"))
    errors = [b for b in blocks(records, "tool_result") if b.get("is_error") is True]
    assert session.errors == len(errors)


def test_no_failures_except_expected() -> None:
    failures = {}
    for path in find_session_files(TRANSCRIPTS):
        outcome = parse_session(path)
        if not isinstance(outcome, ParsedSession):
            failures[rel(path)] = outcome.code
    assert failures == EXPECTED_FAILURES


def test_fe5e1c67_errors_and_sidechains() -> None:
    session = parsed(FE5E)
    path = TRANSCRIPTS / FE5E
    sidechain_lines = {
        number
        for number, line in enumerate(path.read_bytes().splitlines(), start=1)
        if json.loads(line).get("isSidechain") is True
    }
    assert len(sidechain_lines) == 405  # SOURCES.md
    covered = {
        line
        for m in session.messages
        if m.is_sidechain
        for line in range(m.line_start, m.line_end + 1)
    }
    assert covered == sidechain_lines
    assert len([r for m in session.messages for r in m.tool_results if r.is_error]) == 23
    assert session.project == "/path/to/Demo"  # the sidechains mostly ran in todo-app/
    assert (session.client_version, session.branch) == ("1.0.98", "")
    assert session.turns == 2
    assert session.messages[0].role == "summary"


def test_legacy_agent_files_attach_to_their_session() -> None:
    session = parsed(C037)
    assert [Path(f).name for f in session.files] == [
        Path(C037).name,
        "agent-test-hash-123.jsonl",
        "agent-test-hash-456.jsonl",
    ]
    agents = [m for m in session.messages if m.file.startswith("agent-")]
    assert [(m.file, m.line_start, m.role, m.agent_id) for m in agents] == [
        ("agent-test-hash-123.jsonl", 1, "user", "test-hash-123"),
        ("agent-test-hash-123.jsonl", 2, "assistant", "test-hash-123"),
        ("agent-test-hash-456.jsonl", 1, "user", "test-hash-456"),
        ("agent-test-hash-456.jsonl", 2, "assistant", "test-hash-456"),
    ]
    assert all(m.is_sidechain for m in agents)
    assert session.messages[-1] is agents[-1]  # subagent files come after the main file
    assert session.turns == 1  # the agents' prompts are not the user's
    assert session.ended_at == "2025-09-07T09:54:26.499Z"


def test_loglines_export_is_supported() -> None:
    """The single-JSON `{"loglines": [...]}` export is parsed; `line_*` are record indexes."""
    session = parsed(f"{SIMONW}/sample_session.json")
    assert (len(session.messages), session.turns, session.tool_calls, session.errors) == (
        33,
        5,
        12,
        1,
    )
    assert session.compactions == 1  # an `isCompactSummary` record
    assert session.skipped == {}
    jsonl = parsed(f"{SIMONW}/sample_session.jsonl")
    assert jsonl.messages[0].role == "summary"
    assert (jsonl.session_id, jsonl.project, jsonl.branch) == (
        "test-session-id",
        "/project",
        "main",
    )


def test_edge_cases_keeps_the_good_lines() -> None:
    session = parsed(f"{DAAAIN}/edge_cases.jsonl")
    lines = [m.line_start for m in session.messages]
    assert lines == [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17, 19]
    assert "café" in session.messages[9].text
    assert session.messages[-1].role == "summary"
    assert session.started_at == "2025-06-14T10:02:00Z"  # line 17 is the earliest
