"""Warm tier: keyword scores, error→resolution pairing, conclusions, corroboration, edges,
verbatim evidence, clean summaries, failure isolation and speed. No parser, no Textual."""

from __future__ import annotations

import json
import re
import time
from typing import NoReturn

import pytest

from store.ingest import warm
from store.ingest.warm import KEYWORDS, WarmResult, extract_warm
from store.models import (
    EDGE_TYPES,
    NODE_TYPES,
    ExtractedNode,
    ParsedSession,
    ToolResult,
    ToolUse,
    TranscriptMessage,
)

ANTHROPIC = "sk" + "-ant-api03-" + "Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7Io" * 2
JWT = "ey" + "JhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMxMjMiLCJyb2xlIjoiYWRtaW4ifQ." + "Rk7Lz2Qm9Wx4Tn8V"


class Transcript:
    """Builds a session message by message; every message spans two lines of its file."""

    def __init__(self) -> None:
        self.messages: list[TranscriptMessage] = []
        self.lines: dict[str, int] = {}
        self.calls = 0

    def add(self, text: str = "", *, file: str = "main.jsonl", **fields: object) -> None:
        start = self.lines.get(file, 0) + 1
        self.lines[file] = start + 1
        fields = {"role": "assistant", "kind": "text", **fields}
        message = TranscriptMessage(
            index=len(self.messages), file=file, line_start=start, line_end=start + 1,
            uuid=f"u{len(self.messages)}", text=text, timestamp="2026-01-01T00:00:00Z",
            **fields,  # type: ignore[arg-type]
        )  # fmt: skip
        self.messages.append(message)

    def say(self, text: str, file: str = "main.jsonl") -> None:
        self.add(text, file=file)

    def filler(self, count: int) -> None:
        for _ in range(count):
            self.say("Okay.")

    def run(
        self,
        name: str,
        output: str,
        *,
        error: bool = False,
        file: str = "main.jsonl",
        **inputs: str,
    ) -> None:
        """A tool call and its result: two messages."""
        self.calls += 1
        tool_id = f"toolu_{self.calls}"
        call = ToolUse(tool_id, name, json.dumps(inputs, separators=(",", ":")))
        self.add("", kind="tool_use", tool_uses=(call,), file=file)
        result = ToolResult(tool_id, output, error)
        self.add(output, role="user", kind="tool_result", tool_results=(result,), file=file)

    def session(self) -> ParsedSession:
        return ParsedSession(
            session_id="s1", project="/work/app", branch="main", client_version="2.1.39",
            started_at="", ended_at="", messages=tuple(self.messages), turns=1,
            tool_calls=self.calls, errors=0, skills_used=(), skipped={}, files=("main.jsonl",),
        )  # fmt: skip

    def extract(self) -> WarmResult:
        return extract_warm(self.session())


def of_type(result: WarmResult, name: str) -> list[ExtractedNode]:
    return [n for n in result.nodes if n.type == name]


def only(result: WarmResult, name: str) -> ExtractedNode:
    (node,) = of_type(result, name)
    return node


def edges(result: WarmResult) -> set[tuple[str, str, str]]:
    """(source type, edge, target type) of every edge."""
    types = {n.key: n.type for n in result.nodes}
    return {(types[e.source], e.type, types[e.target]) for e in result.edges}


def message_of(session: ParsedSession, node: ExtractedNode) -> TranscriptMessage:
    (message,) = [
        m for m in session.messages if (m.file, m.line_start) == (node.file, node.line_start)
    ]
    return message


# --------------------------------------------------------------------------- keywords


@pytest.mark.parametrize(
    ("text", "name", "confidence"),
    [
        ("Maybe the cache is stale.", "HYPOTHESIS", 0.45),
        ("Maybe. Maybe! Maybe?", "HYPOTHESIS", 0.45),  # distinct phrases, not occurrences
        ("I think it might be the cache.", "HYPOTHESIS", 0.55),
        ("Let me check the config and look into the grep output.", "INVESTIGATION", 0.65),
        ("I think it might be the cache, or maybe the locale; I suspect it.", "HYPOTHESIS", 0.70),
        ("I think it might be it, or maybe: my guess, I suspect, probably.", "HYPOTHESIS", 0.70),
        ("That DIDN’T\n   work either.", "DEAD_END", 0.45),  # case, spacing, curly apostrophe
        ("Let's try a different approach instead.", "PIVOT", 0.65),
        ("Fixed: the tests pass now.", "SOLUTION", 0.55),
    ],
)  # fmt: skip
def test_keyword_confidence_is_035_plus_01_per_distinct_phrase(
    text: str, name: str, confidence: float
) -> None:
    t = Transcript()
    t.say(text)
    node = only(t.extract(), name)
    assert (node.confidence, node.strategy) == (confidence, "keywords")
    assert node.key == f"warm:keywords:main.jsonl:1-2:{name}"


def test_negated_and_partial_words_do_not_count() -> None:
    t = Transcript()
    t.say("This is not fixed yet and there is no solution; the prefix is unresolvedness.")
    assert of_type(t.extract(), "SOLUTION") == []


def test_keyword_phrases_belong_to_one_type_each() -> None:
    phrases = [phrase for group in KEYWORDS.values() for phrase in group]
    assert len(phrases) == len(set(phrases))
    assert set(KEYWORDS) == set(NODE_TYPES)


def test_evidence_is_the_triggering_sentence() -> None:
    t = Transcript()
    t.say("I ran the suite twice. Maybe the fixture leaks state between tests. Next step.")
    node = only(t.extract(), "HYPOTHESIS")
    assert node.evidence == "Maybe the fixture leaks state between tests."
    assert node.summary == "Hypothesis: Maybe the fixture leaks state between tests."


def test_a_sentence_ending_in_a_colon_takes_what_follows() -> None:
    t = Transcript()
    t.say("Checked the logs.\nThe root cause is:\n- the cache key ignores the locale\n- other")
    node = only(t.extract(), "DISCOVERY")
    assert node.evidence == "The root cause is:\n- the cache key ignores the locale"
    assert node.summary == "Discovery: The root cause is: - the cache key ignores the locale."


# --------------------------------------------------------------------------- errors


def test_error_then_the_same_command_succeeding_is_a_dead_end_and_a_solution() -> None:
    t = Transcript()
    failure = (
        "Exit code 1\n\x1b[31mTraceback (most recent call last):\n"
        '  File "/app/tests/api/test_client.py", line 1, in <module>\n'
        "    from api import Client\nImportError: cannot import name 'Client'\x1b[0m\n"
    )
    t.run("Bash", failure, error=True, command="pytest tests/api")
    t.run(
        "Bash", "collected 3 items\n\n===== 3 passed in 0.12s =====\n", command="pytest tests/api"
    )
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    assert (dead.confidence, fix.confidence) == (0.60, 0.60)
    assert (dead.line_start, fix.line_start) == (3, 7)
    assert (
        dead.summary
        == "Dead end: `pytest tests/api` failed with ImportError: cannot import name 'Client'."
    )
    assert dead.evidence.startswith("ImportError: cannot import name 'Client'")
    assert fix.summary == "Solution: `pytest tests/api` succeeded: ===== 3 passed in 0.12s =====."
    assert [(e.source, e.target, e.type) for e in result.edges] == [(dead.key, fix.key, "resolved")]
    assert dead.key == "warm:error_resolution:main.jsonl:3-4:DEAD_END"  # fmt: skip


def test_a_different_command_succeeding_is_not_a_resolution() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "Exit code 2\nmake: *** No rule to make target 'dist'.",
        error=True,
        command="make dist",
    )
    t.run("Bash", "README.md\nsrc\n", command="ls")
    t.run("Read", "1\tprint('hi')", file_path="/app/main.py")
    assert t.extract().nodes == ()


def test_editing_the_same_file_resolves_an_edit_error() -> None:
    t = Transcript()
    error = (
        "<tool_use_error>File has not been read yet. Read it first before writing to it."
        "</tool_use_error>"
    )
    t.run("Edit", error, error=True, file_path="/app/page.tsx", old_string="a", new_string="b")
    t.run("Read", "1\texport default function Page() {}", file_path="/app/page.tsx")
    t.run("Edit", "The file /app/page.tsx has been updated.", file_path="/app/page.tsx")
    result = t.extract()
    dead = only(result, "DEAD_END")
    assert dead.evidence == "File has not been read yet. Read it first before writing to it."
    assert dead.summary == (
        "Dead end: Edit of `/app/page.tsx` failed with File has not been read yet. "
        "Read it first before writing to it."
    )
    assert only(result, "SOLUTION").line_start == 11
    assert edges(result) == {("DEAD_END", "resolved", "SOLUTION")}


@pytest.mark.parametrize(("distance", "paired"), [(1, True), (8, True), (9, False)])
def test_resolution_must_come_within_eight_messages(distance: int, paired: bool) -> None:
    t = Transcript()
    t.run(
        "Bash",
        "Exit code 1\nModuleNotFoundError: No module named 'httpx'",
        error=True,
        command="python app.py",
    )
    t.filler(distance - 1)
    t.say("The import works now.")
    result = t.extract()
    assert bool(of_type(result, "DEAD_END")) is paired
    assert (("DEAD_END", "resolved", "SOLUTION") in edges(result)) is paired
    # The assistant's own words are a keyword SOLUTION either way; paired, two strategies agree.
    assert only(result, "SOLUTION").confidence == (0.65 if paired else 0.45)


def test_pairing_never_crosses_into_a_subagent() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: build failed", error=True, command="npm run build")
    t.say("Fixed, the build works now.", file="main/subagents/agent-a1.jsonl")
    result = t.extract()
    assert of_type(result, "DEAD_END") == []
    assert result.edges == ()


# --------------------------------------------------------------------------- conclusions


def test_explicit_conclusion_is_a_discovery_at_065() -> None:
    t = Transcript()
    t.say("The problem was that the cache key ignores the locale.")
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("DISCOVERY", 0.65, "conclusion")
    assert node.evidence == "The problem was that the cache key ignores the locale."


def test_conclusion_that_states_a_fix_is_a_solution() -> None:
    t = Transcript()
    t.say("The issue was a stale lock file; deleting it resolves the hang.")
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("SOLUTION", 0.65, "conclusion")


# --------------------------------------------------------------------------- corroboration


def test_corroboration_adds_005_to_the_higher_confidence() -> None:
    t = Transcript()
    t.say("The fix was to pin httpx below 0.28.")  # conclusion 0.65, keyword "the fix" 0.45
    (node,) = t.extract().nodes
    assert (node.type, node.confidence, node.strategy) == ("SOLUTION", 0.70, "conclusion")
    assert node.key == "warm:conclusion:main.jsonl:1-2:SOLUTION"


def test_corroboration_is_capped_at_075() -> None:
    t = Transcript()
    # Five DISCOVERY phrases (0.70) and an explicit conclusion (0.65): one node, 0.75.
    t.say("It turns out I found the root cause: interesting, the culprit is the cache.")
    (node,) = of_type(t.extract(), "DISCOVERY")
    assert node.confidence == 0.75


def test_one_strategy_twice_is_not_corroboration() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: one", error=True, command="cargo build")
    t.run("Bash", "Exit code 1\nerror: two", error=True, command="cargo build")
    t.run("Bash", "Finished dev profile", command="cargo build")
    result = t.extract()
    assert only(result, "SOLUTION").confidence == 0.60
    assert len(of_type(result, "DEAD_END")) == 2
    assert edges(result) == {("DEAD_END", "resolved", "SOLUTION")}
    assert len(result.edges) == 2


# --------------------------------------------------------------------------- edges


def test_hypothesis_informs_the_next_investigation() -> None:
    t = Transcript()
    t.say("Maybe the cache is stale.")
    t.say("Okay.")
    t.say("Let me check the cache settings.")
    t.say("Let me look at the logs too.")
    result = t.extract()
    (edge,) = result.edges
    assert edge.type == "informed"
    assert edge.source == only(result, "HYPOTHESIS").key
    assert edge.target == of_type(result, "INVESTIGATION")[0].key


def test_dead_end_triggers_the_next_pivot() -> None:
    t = Transcript()
    t.say("That didn't work.")
    t.say("Let's try a different approach.")
    assert edges(t.extract()) == {("DEAD_END", "triggered_pivot", "PIVOT")}


def test_edges_run_forward_within_a_message() -> None:
    t = Transcript()
    t.say("That didn't work, so let's try pinning the version.")
    t.say("Let me check the lock file. Maybe it is outdated.")
    assert edges(t.extract()) == {("DEAD_END", "triggered_pivot", "PIVOT")}


def test_edges_stay_within_a_stream_and_a_window() -> None:
    t = Transcript()
    t.say("Maybe the cache is stale.")
    t.say("Let me check the cache.", file="main/subagents/agent-a1.jsonl")
    t.filler(8)
    t.say("Let me check the cache settings.")  # nine messages on in the main stream
    assert t.extract().edges == ()


def test_edge_types_are_known() -> None:
    result = rich_transcript().extract()
    assert {e.type for e in result.edges} <= set(EDGE_TYPES)
    keys = {n.key for n in result.nodes}
    assert all(e.source in keys and e.target in keys for e in result.edges)


# --------------------------------------------------------------------------- what is read


def test_prompts_compactions_and_skill_bodies_are_not_reasoning() -> None:
    t = Transcript()
    t.add("Maybe fix the tests so they pass?", role="user", kind="prompt")
    summary = "This session is being continued. The fix was to pin httpx; tests pass now."
    t.add(summary, role="user", kind="compact")
    body = (
        "Base directory for this skill: /home/dev/.claude/skills/pdf-tools\n\n# PDF tools\n\n"
        "Maybe check the docs first. If it doesn't work, try a different approach."
    )
    t.add(body, role="user", kind="meta", is_meta=True)
    t.say("I think the fix is done.", file="main/subagents/agent-acompact-1f2e.jsonl")
    result = t.extract()
    node = only(result, "CONTEXT_LOAD")
    assert [n.type for n in result.nodes] == ["CONTEXT_LOAD"]
    assert node.evidence == "Base directory for this skill: /home/dev/.claude/skills/pdf-tools"
    assert node.summary == "Context: loaded skill `pdf-tools`."
    assert node.line_start == 5


def test_launching_a_skill_is_a_context_load() -> None:
    t = Transcript()
    t.run("Skill", "Launching skill: elixir:hex-docs-search", skill="elixir:hex-docs-search")
    node = only(t.extract(), "CONTEXT_LOAD")
    assert node.summary == "Context: launched skill `elixir:hex-docs-search`."


def test_tool_output_is_not_mined_for_keywords() -> None:
    t = Transcript()
    t.run("Read", "# Notes\nMaybe the fix works now; let me check.", file_path="/app/NOTES.md")
    assert t.extract().nodes == ()


# --------------------------------------------------------------------------- output quality


def rich_transcript() -> Transcript:
    t = Transcript()
    t.say("Let me read CLAUDE.md first, then check the failing test.")
    t.run("Bash", "x" * 5_000 + "\nAssertionError: expected 3\n" + "y" * 5_000, error=True,
          command="pytest -x tests/test_api.py")  # fmt: skip
    t.say("I think the fixture might be stale. Let me look at conftest.py.")
    t.run(
        "Bash",
        "<system-reminder>Remember the todo list.</system-reminder>\n<tool_use_error>"
        "\x1b[1;31mError: spawn ENOENT\x1b[0m</tool_use_error>",
        error=True,
        command="npm test",
    )
    t.say("That didn't work; <command-name>/clear</command-name> let's try yarn instead.")
    t.run("Bash", "Done in 2.1s ✓", command="npm test -- --watch=false")
    t.run("Bash", "1 passed in 0.03s", command="pytest -x tests/test_api.py")
    t.say(f"I found that the key {ANTHROPIC} was revoked, so the client fails.")
    curl = f'curl -fsS -H "Authorization: Bearer {JWT}" https://api.example.org'
    t.run("Bash", "curl: (22) 401 Unauthorized", error=True, command=curl)
    t.say("The fix was to rotate the token; the request works now. " * 20)
    t.say("It turns out the root cause is the proxy. Alternatively we could bypass it.")
    return t


def test_evidence_is_verbatim_and_summaries_are_clean() -> None:
    t = rich_transcript()
    session = t.session()
    result = extract_warm(session)
    assert len(result.nodes) >= 10
    assert result.problems == ()
    for node in result.nodes:
        message = message_of(session, node)
        sources = [message.text, *(r.text for r in message.tool_results)]
        assert node.evidence
        assert any(node.evidence in text for text in sources), node
        assert len(node.evidence) <= 400
        assert 0 < len(node.summary) <= 200
        for junk in ("<tool_use_error>", "<system-reminder>", "<command-name>", "\x1b", "[31m"):
            assert junk not in node.summary, node.summary
        assert "Remember the todo list" not in node.summary
        assert ANTHROPIC[4:20] not in node.summary
        assert JWT[:20] not in node.summary
        assert node.summary.endswith((".", "!", "?", "…"))
        assert node.tier == "warm"
        assert node.type in NODE_TYPES


def test_secrets_stay_verbatim_in_evidence_but_not_in_summaries() -> None:
    result = rich_transcript().extract()
    revoked = [n for n in result.nodes if ANTHROPIC in n.evidence]
    assert revoked
    assert all("[REDACTED" in n.summary for n in revoked)
    curl = [n for n in result.nodes if "401 Unauthorized" in n.evidence]
    assert curl
    assert "Bearer [REDACTED" in curl[0].summary


def test_giant_error_output_gives_its_first_meaningful_line() -> None:
    result = rich_transcript().extract()
    dead = next(n for n in of_type(result, "DEAD_END") if "AssertionError" in n.evidence)
    assert dead.evidence == "AssertionError: expected 3"
    assert "xxxxx" not in dead.summary


def test_same_input_same_nodes_keys_and_order() -> None:
    first, second = rich_transcript().extract(), rich_transcript().extract()
    assert first == second
    pattern = re.compile(r"warm:(keywords|error_resolution|conclusion):[^:]+:\d+-\d+:[A-Z_]+")
    assert all(pattern.fullmatch(n.key) for n in first.nodes)
    assert len({n.key for n in first.nodes}) == len(first.nodes)
    for n in first.nodes:
        assert n.key == f"warm:{n.strategy}:{n.file}:{n.line_start}-{n.line_end}:{n.type}"


# --------------------------------------------------------------------------- failures


def test_a_failing_strategy_is_reported_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(context: object) -> NoReturn:
        raise RuntimeError("boom")

    strategies = dict(warm._STRATEGIES)
    strategies["keywords"] = boom
    monkeypatch.setattr(warm, "_STRATEGIES", tuple(strategies.items()))
    result = rich_transcript().extract()
    assert result.problems == ("strategy keywords failed: RuntimeError: boom",)
    assert {n.strategy for n in result.nodes} == {"error_resolution", "conclusion"}
    assert ("DEAD_END", "resolved", "SOLUTION") in edges(result)


def test_an_empty_session_has_no_nodes() -> None:
    result = Transcript().extract()
    assert result == WarmResult((), (), ())


# --------------------------------------------------------------------------- speed

#: Assistant turns as real sessions have them: short, a third or so with a signal phrase.
TURNS = [
    "Let me check how the config loader resolves paths.",
    "Now I'll update the handler to accept an empty body.",
    "I think the fixture might be leaking state between tests.",
    "Adding a regression test for the empty case.",
    "Running the full suite.",
    "That didn't work, same error. Let's try a different approach.",
    "Reformatting the changed files.",
    "It turns out the root cause is a stale cache; the fix is to clear it on startup.",
    "The tests pass now.",
    "Done. Moving on to the docs.",
]


def synthetic_session(size: int, *, dense: bool = False) -> ParsedSession:
    """About `size` characters: reasoning, tool calls, file-sized outputs, some errors.
    `dense`: three sentences a turn and short outputs (about 50 times a real session's nodes)."""
    t = Transcript()
    log = "".join(f"  step {n:03d}: value={n * 7} status=ok\n" for n in range(70))
    total = i = 0
    while total < size:
        turn = " ".join(TURNS[(i + k) % 10] for k in (0, 2, 7)) if dense else TURNS[i % 10]
        error = i % 6 == 0
        output = log[:400] if dense else log
        output = "Exit code 1\nTypeError: x is undefined\n" + output[:300] if error else output
        t.say(turn)
        t.run("Bash", output, error=error, command=f"npm test -- case{i % 7}")
        total += len(turn) + len(output)
        i += 1
    return t.session()


def timed(session: ParsedSession) -> tuple[WarmResult, float]:
    extract_warm(session)  # first run pays for lazy imports and caches
    start = time.perf_counter()
    result = extract_warm(session)
    return result, time.perf_counter() - start


def test_one_megabyte_session_is_fast() -> None:
    session = synthetic_session(1_000_000)
    result, elapsed = timed(session)
    print(f"warm, 1 MB: {len(result.nodes)} nodes in {elapsed * 1000:.1f} ms")
    assert result.problems == ()
    assert 100 < len(result.nodes) < 2_000
    assert elapsed < 0.5  # loose CI bound; the budget is 50 ms


def test_signal_dense_megabyte_stays_linear() -> None:
    session = synthetic_session(1_000_000, dense=True)
    result, elapsed = timed(session)
    print(f"warm, 1 MB dense: {len(result.nodes)} nodes in {elapsed * 1000:.1f} ms")
    assert len(result.nodes) > 2_000
    assert elapsed < 1.0  # a quadratic scan would take seconds here
