"""Tests for store.ingest.transcript: layouts, record types, bad input, properties, speed.

Fixtures are small JSONL files written here, modelled on FORMATS §2 (no corpus copies).
"""

from __future__ import annotations

import json
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.ingest.transcript import (
    MAX_LINE_BYTES,
    MAX_TEXT_CHARS,
    default_project_dirs,
    find_session_files,
    parse_lines,
    parse_session,
    subagent_files,
)
from store.models import ParsedSession, ParseFailure, TranscriptMessage

SID = "11111111-2222-4333-8444-555555555555"
CWD = "/home/dev/shop"


# -- record builders -------------------------------------------------------------------------


def env(kind: str, n: int, **extra: Any) -> dict[str, Any]:
    """An enveloped record of type `kind` (uuid and timestamp derived from `n`)."""
    record = {
        "parentUuid": f"u{n - 1}" if n > 1 else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SID,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        "uuid": f"u{n}",
        "timestamp": f"2026-01-02T10:{n // 60:02d}:{n % 60:02d}.000Z",
    }
    record.update(extra)
    return record


def prompt(n: int, text: str, **extra: Any) -> dict[str, Any]:
    return env("user", n, message={"role": "user", "content": text}, **extra)


def assistant(n: int, mid: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message = {"id": mid, "type": "message", "role": "assistant", "content": list(blocks)}
    return env("assistant", n, message=message, requestId=f"req-{mid}", **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tid: str, name: str, **inputs: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inputs}


def results(n: int, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return env("user", n, message={"role": "user", "content": list(blocks)}, **extra)


def result(tid: str, content: Any, is_error: Any = None) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return block


def agent_progress(n: int, message: Any, agent: Any = "a5f0c2e", **data: Any) -> dict[str, Any]:
    """A `progress` record in the main file carrying a subagent's message (`data.message`)."""
    payload = {"type": "agent_progress", "prompt": "Find why", "agentId": agent, **data}
    payload["message"] = message
    return env("progress", n, data=payload, toolUseID=f"agent_msg_{n}", parentToolUseID="task1")


def write(path: Path, *lines: dict[str, Any] | bytes | str) -> Path:
    """Write JSONL: dicts as JSON lines, bytes verbatim, str with a newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b""
    for line in lines:
        if isinstance(line, dict):
            data += json.dumps(line).encode() + b"\n"
        elif isinstance(line, bytes):
            data += line
        else:
            data += line.encode() + b"\n"
    path.write_bytes(data)
    return path


def parsed(path: Path) -> ParsedSession:
    result = parse_session(path)
    assert isinstance(result, ParsedSession), result
    return result


def failure(path: Path) -> ParseFailure:
    result = parse_session(path)
    assert isinstance(result, ParseFailure), result
    return result


def kinds(session: ParsedSession) -> list[tuple[str, str]]:
    return [(m.role, m.kind) for m in session.messages]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A Claude Code project folder whose name says nothing true about the project."""
    return tmp_path / "projects" / "-home-someone-else-misleading"


def minimal(path: Path, *extra: dict[str, Any] | bytes | str) -> Path:
    return write(path, prompt(1, "hello"), assistant(2, "m1", text("hi")), *extra)


# -- record types and layouts ----------------------------------------------------------------


def test_string_content_prompt(project: Path) -> None:
    session = parsed(write(project / f"{SID}.jsonl", prompt(1, "Add a cart page")))
    (message,) = session.messages
    assert (message.role, message.kind, message.text) == ("user", "prompt", "Add a cart page")
    assert (message.index, message.file, message.line_start, message.line_end) == (
        0,
        f"{SID}.jsonl",
        1,
        1,
    )
    assert (message.uuid, message.timestamp) == ("u1", "2026-01-02T10:00:01.000Z")
    assert session.turns == 1
    assert session.session_id == SID
    assert session.files == (str(project / f"{SID}.jsonl"),)


def test_list_of_text_blocks_is_a_prompt(project: Path) -> None:
    record = results(1, text("first"), {"type": "image", "source": {}}, text("second"))
    session = parsed(write(project / "s.jsonl", record))
    assert session.messages[0].kind == "prompt"
    assert session.messages[0].text == "first\n[image]\nsecond"


def test_tool_use_and_results(project: Path) -> None:
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "fix the tests"),
            assistant(2, "m1", tool_use("t1", "Bash", command="pytest -q")),
            results(3, result("t1", "Exit code 1\nFAILED test_cart", is_error=True)),
            assistant(4, "m2", text("Let me read it."), tool_use("t2", "Read", file_path="a.py")),
            results(5, result("t2", [text("line one"), {"type": "image"}, text("line two")])),
            results(6, result("t3", "fine", is_error=False)),
        )
    )
    assert kinds(session) == [
        ("user", "prompt"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "text"),
        ("user", "tool_result"),
        ("user", "tool_result"),
    ]
    call = session.messages[1].tool_uses[0]
    assert (call.id, call.name, call.input_text, call.skill) == (
        "t1",
        "Bash",
        '{"command":"pytest -q"}',
        "",
    )
    failed = session.messages[2].tool_results[0]
    assert (failed.tool_use_id, failed.is_error) == ("t1", True)
    assert failed.text == session.messages[2].text == "Exit code 1\nFAILED test_cart"
    assert session.messages[4].tool_results[0].text == "line one\n[image]\nline two"
    assert not session.messages[5].tool_results[0].is_error
    assert (session.turns, session.tool_calls, session.errors) == (1, 2, 1)
    assert session.skipped == {}


def test_assistant_lines_sharing_message_id_are_merged(project: Path) -> None:
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "go"),
            assistant(
                2, "msg_A", {"type": "thinking", "thinking": "secret plan", "signature": "x"}
            ),
            assistant(3, "msg_A", text("First I will look.")),
            assistant(4, "msg_A", tool_use("t1", "Grep", pattern="cart")),
            results(5, result("t1", "cart.py")),  # a result may arrive between the lines
            assistant(6, "msg_A", tool_use("t2", "Read", file_path="cart.py")),
            assistant(7, "msg_B", text("Done.")),
        )
    )
    assert kinds(session) == [
        ("user", "prompt"),
        ("assistant", "text"),
        ("user", "tool_result"),
        ("assistant", "text"),
    ]
    merged = session.messages[1]
    assert (merged.line_start, merged.line_end, merged.uuid) == (2, 6, "u2")
    assert merged.text == "First I will look."
    assert [t.id for t in merged.tool_uses] == ["t1", "t2"]
    assert [m.index for m in session.messages] == [0, 1, 2, 3]
    assert session.tool_calls == 2


def test_repeated_line_is_not_merged_twice(project: Path) -> None:
    line = assistant(2, "m1", text("once"))
    session = parsed(write(project / "s.jsonl", prompt(1, "go"), line, line))
    assert session.messages[1].text == "once"
    assert session.messages[1].line_end == 3


def test_thinking_is_not_text(project: Path) -> None:
    thinking = {"type": "thinking", "thinking": "hidden reasoning", "signature": "sig"}
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "go"),
            assistant(2, "m1", thinking, text("visible")),
            assistant(3, "m2", thinking),  # a message with nothing readable
        )
    )
    assert [m.text for m in session.messages] == ["go", "visible"]
    assert all("hidden" not in m.text for m in session.messages)
    assert session.skipped == {"empty_message": 1}


def test_skills_from_skill_calls_and_base_directory(project: Path) -> None:
    body = "Base directory for this skill: /home/dev/.claude/skills/pdf-tools\n\n# PDF tools"
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "make a pdf"),
            assistant(2, "m1", tool_use("t1", "Skill", skill="pdf-tools")),
            results(3, result("t1", "Launching skill: pdf-tools")),
            prompt(4, body, isMeta=True),
            assistant(5, "m2", tool_use("t2", "Skill", skill="elixir:hex-docs-search")),
            assistant(6, "m3", tool_use("t3", "Skill", command="/review")),
            prompt(7, "Base directory for this skill: C:\\skills\\hex-docs-search\\", isMeta=True),
            prompt(8, "Base directory for this skill: /x/typed-by-user"),  # not meta
        )
    )
    assert [m.kind for m in session.messages][3] == "meta"
    assert session.messages[3].is_meta
    assert [t.skill for m in session.messages for t in m.tool_uses] == [
        "pdf-tools",
        "elixir:hex-docs-search",
        "review",
    ]
    # The namespaced call and its base directory are one skill, recorded once (bare).
    assert session.skills_used == ("pdf-tools", "hex-docs-search", "review")
    assert session.turns == 2  # meta messages are not turns


def test_namespaced_skill_kept_when_alone(project: Path) -> None:
    session = parsed(
        write(project / "s.jsonl", assistant(1, "m", tool_use("t", "Skill", skill="a:b")))
    )
    assert session.skills_used == ("a:b",)


def test_compaction(project: Path) -> None:
    boundary = env(
        "system",
        3,
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 150000},
        parentUuid=None,
        logicalParentUuid="u2",
    )
    summary = prompt(
        4, "This session is being continued from a previous conversation…", isCompactSummary=True
    )
    session = parsed(
        write(project / "s.jsonl", *minimal_records(), boundary, summary, prompt(5, "next"))
    )
    assert kinds(session)[2:] == [("system", "system"), ("user", "compact"), ("user", "prompt")]
    assert session.messages[2].text == "Conversation compacted"
    assert session.compactions == 1
    assert session.turns == 2


def minimal_records() -> list[dict[str, Any]]:
    return [prompt(1, "hello"), assistant(2, "m1", text("hi"))]


def test_system_records_without_content_use_subtype(project: Path) -> None:
    timing = env("system", 3, subtype="turn_duration", durationMs=1200)
    session = parsed(write(project / "s.jsonl", *minimal_records(), timing))
    assert session.messages[-1].text == "turn_duration"
    assert session.compactions == 0


def test_summary_record(project: Path) -> None:
    summary = {"type": "summary", "summary": "Cart page built", "leafUuid": "u2"}
    session = parsed(write(project / "s.jsonl", summary, *minimal_records()))
    first = session.messages[0]
    assert (first.role, first.kind, first.text, first.uuid) == (
        "summary",
        "system",
        "Cart page built",
        "",
    )
    assert session.compactions == 0


def test_inline_sidechain(project: Path) -> None:
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "plan it"),
            assistant(2, "m1", tool_use("task1", "Task", description="d", prompt="Look around")),
            prompt(3, "Look around", isSidechain=True, parentUuid=None),
            assistant(4, "m2", text("Found it."), isSidechain=True, agentId="aac57f5"),
            results(5, result("task1", "Found it.")),
        )
    )
    side = [(m.is_sidechain, m.agent_id) for m in session.messages]
    assert side == [(False, ""), (False, ""), (True, ""), (True, "aac57f5"), (False, "")]
    assert session.turns == 1  # the Task prompt is not the user's


def test_subagent_files_new_and_legacy_layout(project: Path) -> None:
    main = minimal(project / f"{SID}.jsonl")
    sub = project / SID / "subagents" / "agent-b77.jsonl"
    write(
        sub,
        prompt(1, "Investigate", isSidechain=True, agentId="b77"),
        assistant(2, "s1", text("Nothing."), isSidechain=True, agentId="b77"),
    )
    legacy = write(project / "agent-a11.jsonl", prompt(1, "Old style", isSidechain=True))
    write(project / "agent-other.jsonl", prompt(1, "x", sessionId="someone-else"))
    write(project / "other-session.jsonl", prompt(1, "x", sessionId="someone-else"))

    assert subagent_files(main, SID) == [legacy, sub]
    assert find_session_files(project.parent) == [
        main,
        project / "agent-other.jsonl",  # orphan: its parent session file is absent
        project / "other-session.jsonl",
    ]
    session = parsed(main)
    assert session.files == (str(main), str(legacy), str(sub))
    assert [(m.file, m.line_start, m.agent_id) for m in session.messages] == [
        (f"{SID}.jsonl", 1, ""),
        (f"{SID}.jsonl", 2, ""),
        ("agent-a11.jsonl", 1, "a11"),
        (f"{SID}/subagents/agent-b77.jsonl", 1, "b77"),
        (f"{SID}/subagents/agent-b77.jsonl", 2, "b77"),
    ]
    assert [m.index for m in session.messages] == list(range(5))
    assert all(m.is_sidechain for m in session.messages[2:])
    assert session.turns == 1


def test_orphan_legacy_agent_file(project: Path) -> None:
    orphan = write(
        project / "agent-3f2.jsonl",
        prompt(1, "Run the suite", isSidechain=True),
        assistant(2, "m1", text("ok"), isSidechain=True),
    )
    write(project / "agent-3f3.jsonl", prompt(1, "Sibling", isSidechain=True))
    assert find_session_files(project) == [orphan, project / "agent-3f3.jsonl"]
    session = parsed(orphan)
    assert session.session_id == "agent-3f2"  # its records carry the absent parent's id
    assert session.files == (str(orphan),)  # it adopts no sibling
    assert len(session.messages) == 2


def test_project_branch_version_from_records(project: Path) -> None:
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "a", cwd="/srv/app", gitBranch="main", version="2.1.38"),
            prompt(2, "b", cwd="/srv/app", gitBranch="", version="2.1.38"),
            prompt(3, "c", cwd="/srv/app/sub", isSidechain=True),
            prompt(4, "d", cwd="/srv/app/sub", isSidechain=True),
            prompt(5, "e", cwd="/srv/app/sub", isSidechain=True),
            prompt(6, "f", cwd="/srv/app", gitBranch="feature/cart", version="2.1.39"),
            prompt(7, "g", cwd="/srv/app", gitBranch=""),
        )
    )
    assert "misleading" in str(project)
    assert session.project == "/srv/app"  # sidechains wander into subfolders
    assert session.branch == "feature/cart"
    assert session.client_version == "2.1.39"
    assert (session.started_at, session.ended_at) == (
        "2026-01-02T10:00:01.000Z",
        "2026-01-02T10:00:07.000Z",
    )


def test_session_id_from_records_when_the_name_differs(project: Path) -> None:
    session = parsed(minimal(project / "renamed.jsonl"))
    assert session.session_id == SID
    no_ids = {"type": "user", "message": {"role": "user", "content": "hi"}}
    assert parsed(write(project / "bare.jsonl", no_ids)).session_id == "bare"


def test_timestamps_compare_as_times(project: Path) -> None:
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, "a", timestamp="2026-01-02T10:00:00.500Z"),
            prompt(2, "b", timestamp="2026-01-02T10:00:00Z"),
            prompt(3, "c", timestamp="2026-01-02T11:00:00+02:00"),
            prompt(4, "d", timestamp="not a time"),
        )
    )
    assert (session.started_at, session.ended_at) == (
        "2026-01-02T11:00:00+02:00",
        "2026-01-02T10:00:00.500Z",
    )


# -- subagents inside progress records -------------------------------------------------------

AGENT = "a5f0c2e"
CART = f"{CWD}/src/cart.ts"


def subagent_thread(agent: str = AGENT) -> list[dict[str, Any]]:
    """A subagent's records: the Task prompt, a failing test run, the fix, the passing run."""
    on = {"isSidechain": True, "agentId": agent, "parentUuid": None}
    failing = "FAIL src/cart.test.ts\n  TypeError: discount is not a function\nExit code 1"
    return [
        prompt(101, "Find why the cart tests fail and fix it", **on),
        assistant(102, "sm1", text("Running the cart tests first."), **on),
        assistant(103, "sm1", tool_use("sb1", "Bash", command="npm test -- cart"), **on),
        results(104, result("sb1", failing, is_error=True), **on),
        assistant(
            105,
            "sm2",
            tool_use(
                "se1",
                "Edit",
                file_path=CART,
                old_string="import discount from './discount'",
                new_string="import { discount } from './discount'",
            ),
            **on,
        ),
        results(106, result("se1", f"The file {CART} has been updated."), **on),
        assistant(107, "sm3", tool_use("sb2", "Bash", command="npm test -- cart"), **on),
        results(108, result("sb2", "PASS src/cart.test.ts\nTests: 12 passed"), **on),
        assistant(
            109,
            "sm4",
            text("`src/cart.ts` imported `discount` as a default export; a named import fixed it."),
            **on,
        ),
    ]


def progress_session(path: Path, thread: list[Any], *extra: dict[str, Any]) -> Path:
    """A main file whose only copy of the subagent is its `agent_progress` records (lines 3
    to 2 + len(thread)), with hook and bash progress noise after them."""
    last = 3 + len(thread)
    return write(
        path,
        prompt(1, "The cart tests fail, please fix them"),
        assistant(2, "m1", tool_use("task1", "Task", description="Fix", prompt="Find why")),
        *(agent_progress(3 + i, record) for i, record in enumerate(thread)),
        env("progress", last, data={"type": "hook_progress", "hookEvent": "PostToolUse"}),
        env("progress", last + 1, data={"type": "bash_progress", "output": "PASS"}),
        results(last + 2, result("task1", "Fixed: a named import of discount in cart.ts")),
        assistant(last + 3, "m2", text("Done: the subagent fixed the import.")),
        *extra,
    )


def test_subagent_only_in_progress_records(project: Path) -> None:
    main = progress_session(project / f"{SID}.jsonl", subagent_thread())
    session = parsed(main)
    got = [(m.line_start, m.line_end, m.role, m.kind, m.agent_id) for m in session.messages]
    assert got == [
        (1, 1, "user", "prompt", ""),
        (2, 2, "assistant", "tool_use", ""),
        (3, 3, "user", "prompt", AGENT),
        (4, 5, "assistant", "text", AGENT),  # two lines sharing message.id: one message
        (6, 6, "user", "tool_result", AGENT),
        (7, 7, "assistant", "tool_use", AGENT),
        (8, 8, "user", "tool_result", AGENT),
        (9, 9, "assistant", "tool_use", AGENT),
        (10, 10, "user", "tool_result", AGENT),
        (11, 11, "assistant", "text", AGENT),
        (14, 14, "user", "tool_result", ""),
        (15, 15, "assistant", "text", ""),
    ]
    assert {m.file for m in session.messages} == {f"{SID}.jsonl"}  # real lines of the main file
    assert [m.index for m in session.messages] == list(range(12))
    assert [m.is_sidechain for m in session.messages] == [False] * 2 + [True] * 8 + [False] * 2
    assert session.messages[2].uuid == "u101"  # the subagent message's uuid, not the record's
    assert session.messages[3].tool_uses[0].input_text == '{"command":"npm test -- cart"}'
    assert session.messages[4].tool_results[0].is_error
    assert (session.turns, session.tool_calls, session.errors) == (1, 4, 1)
    assert session.skipped == {
        "ignored:progress:hook_progress": 1,
        "ignored:progress:bash_progress": 1,
    }
    assert session.files == (str(main),)


def test_progress_subagent_yields_a_dead_end_and_its_solution(project: Path) -> None:
    from store.ingest.warm import extract_warm

    session = parsed(progress_session(project / f"{SID}.jsonl", subagent_thread()))
    found = extract_warm(session)
    kept = {n.type: n for n in found.nodes if n.strategy == "episode"}
    dead_end, solution = kept["DEAD_END"], kept["SOLUTION"]
    # The thread states no cause for the failure (the precision bar keeps the dead end out
    # of the queue); what fixed it is a lesson.
    assert dead_end.suppressed == "a failure with no stated cause: its error alone is not a lesson"
    assert not solution.suppressed
    # the failing call and its result, then the edit and the run that passed: real lines
    assert (dead_end.file, dead_end.line_start, dead_end.line_end) == (f"{SID}.jsonl", 4, 6)
    assert "discount is not a function" in dead_end.evidence
    assert (solution.file, solution.line_start, solution.line_end) == (f"{SID}.jsonl", 7, 10)
    assert "import { discount }" in solution.summary
    assert (dead_end.key, solution.key, "resolved") in {
        (e.source, e.target, e.type) for e in found.edges
    }


def test_streamed_copies_of_a_progress_message_count_once(project: Path) -> None:
    thread = subagent_thread()
    again = [agent_progress(30, thread[3]), agent_progress(31, thread[3])]  # the failing run
    session = parsed(progress_session(project / f"{SID}.jsonl", thread, *again))
    assert len(session.messages) == 12
    assert session.errors == 1
    assert session.skipped["agent_progress:repeated"] == 2


@pytest.mark.parametrize("layout", ["subagents", "legacy"])
def test_subagent_file_wins_over_progress_copies(project: Path, layout: str) -> None:
    main = progress_session(project / f"{SID}.jsonl", subagent_thread())
    sub = project / SID / "subagents" / f"agent-{AGENT}.jsonl"
    sub = sub if layout == "subagents" else project / f"agent-{AGENT}.jsonl"
    write(sub, *subagent_thread())
    session = parsed(main)
    label = sub.relative_to(project).as_posix()
    mine = [m for m in session.messages if m.agent_id == AGENT]
    assert {m.file for m in mine} == {label}
    assert [(m.line_start, m.line_end) for m in mine] == [
        (1, 1),
        (2, 3),
        *((n, n) for n in range(4, 10)),
    ]
    assert len(session.messages) == 12  # the main file's four and the file's eight
    assert len({m.uuid for m in session.messages}) == 12
    assert (session.tool_calls, session.errors) == (4, 1)
    assert session.skipped["agent_progress:in_subagent_file"] == 9
    assert session.files == (str(main), str(sub))


def test_partial_overlap_keeps_what_only_progress_has(project: Path) -> None:
    thread = subagent_thread()
    main = progress_session(project / f"{SID}.jsonl", thread)
    write(project / SID / "subagents" / f"agent-{AGENT}.jsonl", *thread[:4])  # cut short
    session = parsed(main)
    mine = [(m.file, m.line_start, m.uuid) for m in session.messages if m.agent_id == AGENT]
    sub = f"{SID}/subagents/agent-{AGENT}.jsonl"
    assert mine == [
        (f"{SID}.jsonl", 7, "u105"),  # main-file messages first (file order), then the file
        (f"{SID}.jsonl", 8, "u106"),
        (f"{SID}.jsonl", 9, "u107"),
        (f"{SID}.jsonl", 10, "u108"),
        (f"{SID}.jsonl", 11, "u109"),
        (sub, 1, "u101"),
        (sub, 2, "u102"),
        (sub, 4, "u104"),
    ]
    assert session.skipped["agent_progress:in_subagent_file"] == 4
    assert session.tool_calls == 4


def bare(record: dict[str, Any]) -> dict[str, Any]:
    """The message of a record without its envelope: `{role, content, id…}`, no uuid."""
    return dict(record["message"])


def test_bare_messages_in_progress_records(project: Path) -> None:
    thread = [bare(record) for record in subagent_thread()]
    repeat = agent_progress(30, thread[3])
    main = progress_session(project / f"{SID}.jsonl", thread, repeat)
    session = parsed(main)
    mine = [m for m in session.messages if m.agent_id == AGENT]
    assert [(m.line_start, m.line_end, m.kind) for m in mine][:3] == [
        (3, 3, "prompt"),
        (4, 5, "text"),
        (6, 6, "tool_result"),
    ]
    assert len(mine) == 8
    assert all(
        m.uuid == "" and m.timestamp == f"2026-01-02T10:00:{m.line_start:02d}.000Z" for m in mine
    )
    assert session.skipped["agent_progress:repeated"] == 1
    # With the subagent's own file present, copies without a uuid cannot be matched: the
    # file is the subagent's record.
    write(project / SID / "subagents" / f"agent-{AGENT}.jsonl", *subagent_thread())
    session = parsed(main)
    assert {m.file for m in session.messages if m.agent_id == AGENT} == {
        f"{SID}/subagents/agent-{AGENT}.jsonl"
    }
    assert session.skipped["agent_progress:in_subagent_file"] == 10


def test_progress_without_an_agent_id_is_the_task_calls_thread(project: Path) -> None:
    thread = subagent_thread()
    for record in thread:
        del record["agentId"]
    lines = [agent_progress(3 + i, r, agent=None) for i, r in enumerate(thread[:3])]
    session = parsed(
        write(project / "s.jsonl", prompt(1, "go"), assistant(2, "m1", text("ok")), *lines)
    )
    assert {m.agent_id for m in session.messages[2:]} == {"task1"}
    assert session.skipped == {}


def test_hostile_progress_records(project: Path) -> None:
    good = subagent_thread()
    giant = "g" * (3 * 1024 * 1024)
    deep: Any = "bottom"
    for _ in range(150):
        deep = {"k": [deep]}
    lines: list[dict[str, Any] | bytes | str] = [
        env("progress", 3, data="oops"),
        env("progress", 4, data={"type": 7}),
        env("progress", 5, data={"type": "x" * 10_000}),
        env("progress", 6, data={"type": "agent_progress"}),  # only a prompt: nothing to read
        agent_progress(7, None),
        agent_progress(8, "Reading the cart module…"),
        agent_progress(9, [1, 2]),
        agent_progress(10, 42),
        agent_progress(11, {}),
        agent_progress(12, {"type": "system", "subtype": "x", "content": "y"}),
        agent_progress(13, {"type": "progress", "data": {"type": "agent_progress"}}),
        agent_progress(14, {"type": "user", "message": None, "uuid": "h1"}),
        agent_progress(15, {"type": "assistant", "message": {"content": 7}, "uuid": "h2"}),
        agent_progress(16, {"role": "assistant", "content": {"nested": True}}),
        agent_progress(17, bare(good[1]), agent=["not", "a", "string"]),  # kept: the Task id
        agent_progress(18, assistant(120, "big", text(giant), tool_use("d1", "Bash", x=deep))),
        b'{"type":"progress","data":{"type":"agent_progress","message":'
        + b"[" * 200_000
        + b"]" * 200_000
        + b"}}\n",
        agent_progress(20, {**good[0], "uuid": {"not": "a string"}, "isMeta": "yes"}),
        agent_progress(21, {"type": "user", "message": {"role": "user", "content": "x" * 4}}),
    ]
    session = parsed(
        write(project / "s.jsonl", prompt(1, "go"), assistant(2, "m1", text("ok")), *lines)
    )
    assert session.skipped == {
        "ignored:progress": 2,
        f"ignored:progress:{'x' * 40}": 1,
        "agent_progress:no_message": 3,
        "agent_progress:other_message": 2,
        "bad_field": 8,
        "too_deep": 1,
    }
    kept = [(m.line_start, m.agent_id, m.role) for m in session.messages[2:]]
    assert kept == [
        (17, "task1", "assistant"),
        (18, AGENT, "assistant"),
        (20, AGENT, "user"),
        (21, AGENT, "user"),
    ]
    big = session.messages[3]
    assert big.text.startswith("g" * 100)
    assert len(big.text) < MAX_TEXT_CHARS + 100
    assert len(big.tool_uses[0].input_text) < MAX_TEXT_CHARS + 100
    assert session.messages[4].uuid == ""  # not a string: no uuid, identified by content
    assert not session.messages[4].is_meta


def test_unknown_and_ignored_types(project: Path) -> None:
    session = parsed(
        minimal(
            project / "s.jsonl",
            env("progress", 3, data={"type": "hook_progress"}),
            {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
            {"type": "queue-operation", "operation": "enqueue"},
            {"type": "hologram", "x": 1},
            {"type": None},
            {"no": "type"},
            {"type": ["user"]},
        )
    )
    assert session.skipped == {
        "ignored:progress:hook_progress": 1,
        "ignored:file-history-snapshot": 1,
        "ignored:queue-operation": 1,
        "unknown_type": 4,
        "unknown_type:hologram": 1,
    }


def test_long_text_is_cut_with_a_marker(project: Path) -> None:
    big = "x" * (MAX_TEXT_CHARS * 3)
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, big),
            assistant(2, "m1", tool_use("t1", "Write", content=big)),
            results(3, result("t1", [text(big), text(big)])),
        )
    )
    first = session.messages[0].text
    assert first.startswith("x" * MAX_TEXT_CHARS)
    assert first.endswith(f"[… {MAX_TEXT_CHARS * 2} characters cut]")
    assert len(session.messages[1].tool_uses[0].input_text) < MAX_TEXT_CHARS + 100
    assert len(session.messages[2].tool_results[0].text) < MAX_TEXT_CHARS + 100
    assert len(session.messages[2].text) < MAX_TEXT_CHARS + 100


def test_loglines_export(tmp_path: Path) -> None:
    loglines = [
        {"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "hi"}},
        {"type": "assistant", "message": {"content": [text("hello")]}},
        {"type": "user", "message": {"content": "summary…"}, "isCompactSummary": True},
        42,
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"loglines": loglines}))
    session = parsed(path)
    assert kinds(session) == [("user", "prompt"), ("assistant", "text"), ("user", "compact")]
    assert [m.line_start for m in session.messages] == [1, 2, 3]
    assert session.skipped == {"not_an_object": 1}
    assert session.compactions == 1
    (tmp_path / "other.json").write_text('{"something": "else"}')
    assert failure(tmp_path / "other.json").code == "unsupported"


def test_parse_lines_numbers_and_reasons() -> None:
    lines = [
        b'{"type":"user","message":{"content":"a"}}\n',
        b"\n",
        b'"just a string"\n',
        b"{broken\n",
        b'{"type":"progress"}\n',
        b'{"type":"progress","data":{"type":"agent_progress"}}\n',
        b'{"type":"assistant","message":{"content":[]}}',
    ]
    records, skipped = parse_lines(lines, "f.jsonl", start_line=10)
    assert [(r["type"], r["_line"], r["_file"]) for r in records] == [
        ("user", 10, "f.jsonl"),
        ("progress", 15, "f.jsonl"),  # a subagent's message: read by the session
        ("assistant", 16, "f.jsonl"),
    ]
    assert skipped == {"not_an_object": 1, "invalid_json": 1, "ignored:progress": 1}


# -- discovery -------------------------------------------------------------------------------


def test_default_project_dirs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".config" / "claude" / "projects").mkdir(parents=True)
    assert default_project_dirs(home, {}) == [
        home / ".claude" / "projects",
        home / ".config" / "claude" / "projects",
    ]
    other = tmp_path / "cfg-a"
    (other / "projects").mkdir(parents=True)
    env_value = f"{other}, ~/.claude ,{tmp_path / 'missing'}"
    assert default_project_dirs(home, {"CLAUDE_CONFIG_DIR": env_value}) == [
        other / "projects",
        home / ".claude" / "projects",
    ]
    assert default_project_dirs(tmp_path / "nobody", {}) == []


def test_find_session_files_single_file_and_symlink_loop(project: Path) -> None:
    main = minimal(project / "s.jsonl")
    (project / "s" / "tool-results").mkdir(parents=True)
    (project / "s" / "tool-results" / "big.txt").write_text("spilled output")
    (project / "loop").symlink_to(project, target_is_directory=True)
    (project / "notes.txt").write_text("not a session")
    assert find_session_files(main) == [main]
    assert find_session_files(project.parent) == [main]
    assert find_session_files(project / "missing") == []


# -- bad input -------------------------------------------------------------------------------


def test_binary_file(project: Path) -> None:
    path = project / "s.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)
    assert failure(path).code == "binary"


def test_empty_file(project: Path) -> None:
    assert failure(write(project / "s.jsonl")).code == "empty"


def test_no_messages_names_the_reasons(project: Path) -> None:
    path = write(
        project / "s.jsonl",
        {"type": "summary", "summary": "title only", "leafUuid": "x"},
        "42",
        "{oops",
        env("progress", 1),
    )
    found = failure(path)
    assert found.code == "no_messages"
    assert "(3 lines skipped: " in found.reason
    assert "ignored:progress 1" in found.reason
    assert "invalid_json 1" in found.reason


def test_truncated_last_line(project: Path) -> None:
    path = minimal(project / "s.jsonl", b'{"type":"user","message":{"content":"half')
    session = parsed(path)
    assert session.skipped == {"truncated_last_line": 1}
    assert len(session.messages) == 2


def test_complete_last_line_without_newline_is_kept(project: Path) -> None:
    path = minimal(project / "s.jsonl", json.dumps(prompt(3, "tail")).encode())
    assert parsed(path).messages[-1].text == "tail"


def test_lines_that_are_not_objects(project: Path) -> None:
    path = minimal(project / "s.jsonl", '"a string"', "7", "3.5", "[1, 2]", "null", "true")
    assert parsed(path).skipped == {"not_an_object": 6}


def test_bad_fields(project: Path) -> None:
    session = parsed(
        minimal(
            project / "s.jsonl",
            env("user", 3, message=None),
            env("user", 4, message={"role": "user", "content": 7}),
            env("user", 5, message="error"),
            env("assistant", 6, message={"id": "m9", "content": None}),
            results(7, result("t1", "ran", is_error="yes")),
            results(8, "stray string", text("kept")),
            prompt(9, "odd flags", isMeta="no", isSidechain=1),
        )
    )
    assert session.skipped == {"bad_field": 7}
    assert [m.text for m in session.messages[2:]] == ["ran", "kept", "odd flags"]
    assert session.messages[2].tool_results[0].is_error is False
    assert session.errors == 0
    assert session.messages[4].kind == "prompt"
    assert not session.messages[4].is_sidechain


def test_invalid_utf8_line(project: Path) -> None:
    path = minimal(project / "s.jsonl", b'{"type":"user","message":{"content":"caf\xe9"}}\n')
    assert parsed(path).skipped == {"invalid_utf8": 1}


def test_bom_and_crlf(project: Path) -> None:
    path = write(
        project / "s.jsonl", b"\xef\xbb\xbf" + json.dumps(prompt(1, "hi")).encode() + b"\r\n"
    )
    session = parsed(path)
    assert session.messages[0].text == "hi"
    assert session.skipped == {}


def test_lone_surrogates_are_replaced(project: Path) -> None:
    line = b'{"type":"user","message":{"content":"bad \\ud800 pair"}}\n'
    session = parsed(write(project / "s.jsonl", line))
    assert session.messages[0].text == "bad \ufffd pair"
    session.messages[0].text.encode("utf-8")


def test_thirty_megabyte_line_is_skipped_in_bounded_memory(project: Path) -> None:
    path = project / "s.jsonl"
    minimal(path)
    with path.open("ab") as handle:
        handle.write(b'{"type":"user","message":{"content":"')
        chunk = b"y" * (1 << 20)
        for _ in range(30):
            handle.write(chunk)
        handle.write(b'"}}\n')
        handle.write(json.dumps(prompt(4, "after")).encode() + b"\n")
    tracemalloc.start()
    started = time.perf_counter()
    try:
        session = parsed(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2.0
    assert session.skipped == {"line_too_long": 1}
    assert session.messages[-1].text == "after"
    assert session.messages[-1].line_start == 4
    assert peak < MAX_LINE_BYTES + 4 * (1 << 20)  # one bounded line, never the 30 MB


def test_deeply_nested_json(project: Path) -> None:
    deep = b"[" * 300_000 + b"]" * 300_000
    nested = b'{"type":"user","message":{"content":' + deep + b"}}"
    session = parsed(minimal(project / "s.jsonl", deep + b"\n", nested + b"\n"))
    assert session.skipped == {"too_deep": 2}


def test_hostile_text_is_kept_verbatim(project: Path) -> None:
    hostile = "[bold red]x[/] \x1b[31mred\x1b[0m \x1b]8;;http://evil\x07link\u202eevil [link=x]"
    session = parsed(
        write(
            project / "s.jsonl",
            prompt(1, hostile),
            assistant(2, "m1", text(hostile), tool_use("t1", "Bash", command=hostile)),
            results(3, result("t1", hostile, is_error=True)),
        )
    )
    assert session.messages[0].text == hostile
    assert session.messages[1].text == hostile
    assert json.loads(session.messages[1].tool_uses[0].input_text) == {"command": hostile}
    assert session.messages[2].tool_results[0].text == hostile


def test_file_deleted_between_discovery_and_parse(project: Path) -> None:
    (path,) = find_session_files(minimal(project / "s.jsonl"))
    path.unlink()
    assert failure(path).code == "unreadable"


def test_unreadable_subagent_file_does_not_fail_the_session(project: Path) -> None:
    main = minimal(project / "s.jsonl")
    bad = project / "s" / "subagents" / "agent-x.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x01\x02")
    session = parsed(main)
    assert session.skipped == {"subagent_binary": 1}
    assert session.files == (str(main),)


def test_half_written_last_line_waits_for_the_next_parse(project: Path) -> None:
    path = minimal(project / "s.jsonl")
    line = json.dumps(prompt(3, "appended")).encode() + b"\n"
    with path.open("ab") as handle:
        handle.write(line[:25])
    session = parsed(path)
    assert session.skipped == {"truncated_last_line": 1}
    with path.open("ab") as handle:
        handle.write(line[25:])
    session = parsed(path)
    assert session.skipped == {}
    assert session.messages[-1].text == "appended"


def test_file_growing_while_being_read(project: Path) -> None:
    path = minimal(project / "s.jsonl")
    stop = threading.Event()

    def writer() -> None:
        with path.open("ab", buffering=0) as handle:
            for n in range(3, 3000):
                if stop.is_set():
                    return
                line = json.dumps(prompt(n, "z" * 5000)).encode() + b"\n"
                half = len(line) // 2
                handle.write(line[:half])  # a reader may see only this half
                time.sleep(0.0002)
                handle.write(line[half:])

    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[dict[str, int]] = []
    try:
        while thread.is_alive() and len(seen) < 60:
            seen.append(parsed(path).skipped)
    finally:
        stop.set()
        thread.join()
    assert all(set(skipped) <= {"truncated_last_line"} for skipped in seen), seen
    assert parsed(path).skipped == {}


# -- properties and speed --------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
BLOCK = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "x"])},
    optional={
        "text": JSON,
        "id": JSON,
        "name": st.sampled_from(["Skill", "Bash"]) | JSON,
        "input": JSON,
        "content": JSON | st.lists(st.fixed_dictionaries({"type": JSON, "text": JSON})),
        "is_error": JSON,
        "tool_use_id": JSON,
    },
)
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary", "progress"]) | JSON},
    optional={
        "message": st.fixed_dictionaries(
            {}, optional={"id": JSON, "content": JSON | st.text() | st.lists(BLOCK | JSON)}
        )
        | JSON,
        "timestamp": JSON | st.just("2026-01-01T00:00:00Z"),
        "isSidechain": JSON,
        "isMeta": JSON,
        "isCompactSummary": JSON,
        "cwd": JSON,
        "sessionId": JSON,
        "subtype": JSON,
        "summary": JSON,
        "content": JSON,
        "uuid": JSON,
    },
)


BARE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]) | JSON},
    optional={"content": JSON | st.text() | st.lists(BLOCK | JSON), "id": JSON},
)
PROGRESS = st.fixed_dictionaries(
    {"type": st.just("progress")},
    optional={
        "data": st.fixed_dictionaries(
            {"type": st.sampled_from(["agent_progress", "hook_progress"]) | JSON},
            optional={"agentId": JSON, "message": RECORD | BARE | JSON},
        )
        | JSON,
        "parentToolUseID": JSON,
        "uuid": JSON,
        "timestamp": JSON,
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=20))
def test_arbitrary_bytes_lines_never_raise(lines: list[bytes]) -> None:
    records, skipped = parse_lines(lines, "f.jsonl")
    assert all(isinstance(count, int) for count in skipped.values())
    assert all(isinstance(record, dict) for record in records)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECORD, max_size=12), st.binary(max_size=200))
def test_arbitrary_records_never_raise(
    tmp_path: Path, records: list[dict[str, Any]], tail: bytes
) -> None:
    path = tmp_path / "p.jsonl"
    body = b"".join(json.dumps(r).encode() + b"\n" for r in records) + tail
    path.write_bytes(body)
    outcome = parse_session(path)
    assert isinstance(outcome, ParsedSession | ParseFailure)
    if isinstance(outcome, ParsedSession):
        for message in outcome.messages:
            assert isinstance(message, TranscriptMessage)
            message.text.encode("utf-8")


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(RECORD | PROGRESS, max_size=12), st.lists(RECORD, max_size=6))
def test_arbitrary_progress_records_never_raise(
    tmp_path: Path, records: list[dict[str, Any]], sub_records: list[dict[str, Any]]
) -> None:
    main = write(tmp_path / "p.jsonl", prompt(1, "go"), *records)
    write(tmp_path / "p" / "subagents" / "agent-x.jsonl", *sub_records)
    outcome = parse_session(main)
    assert isinstance(outcome, ParsedSession)
    assert [m.index for m in outcome.messages] == list(range(len(outcome.messages)))
    for message in outcome.messages:
        assert message.line_start <= message.line_end
        message.text.encode("utf-8")
    assert all(isinstance(count, int) and count > 0 for count in outcome.skipped.values())


def generated_session(path: Path, target_bytes: int) -> int:
    """A realistic 2.x-style session: progress noise, split assistant lines, tool results."""
    lines: list[bytes] = []
    size = n = 0
    words = "the cart total is wrong because the discount is applied twice".split()
    while size < target_bytes:
        n += 1
        filler = " ".join(words[(n + i) % len(words)] for i in range(120))
        record = [
            env("progress", n, data={"type": "hook_progress", "command": "x" * 300}),
            assistant(n, f"m{n // 4}", {"type": "thinking", "thinking": filler, "signature": "s"}),
            assistant(n, f"m{n // 4}", text(filler)),
            assistant(n, f"m{n // 4}", tool_use(f"t{n}", "Edit", old_string=filler)),
            results(n, result(f"t{n - 1}", filler * 3, is_error=n % 5 == 0)),
            prompt(n, filler[:200]),
            agent_progress(n, assistant(n, f"s{n // 4}", text(filler))),
        ][n % 7]
        line = json.dumps(record).encode() + b"\n"
        lines.append(line)
        size += len(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return size


def test_five_megabyte_session_parses_fast(project: Path) -> None:
    path = project / "big.jsonl"
    size = generated_session(path, 5 * 1024 * 1024)
    started = time.perf_counter()
    session = parsed(path)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, f"{size / elapsed / 1e6:.1f} MB/s"
    assert session.tool_calls > 100
    assert session.errors > 10


def test_text_limit_is_sane() -> None:
    assert 1_000 <= MAX_TEXT_CHARS <= 100_000
    assert MAX_LINE_BYTES >= 1 << 20
