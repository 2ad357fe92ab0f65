"""Cold tier: windows, token counting, validation, and the real SDK over a mock transport.

The `AnthropicClient` tests drive the real `anthropic.Anthropic` client through
`httpx2.MockTransport` (no network): the handler answers `/v1/messages` and
`/v1/messages/count_tokens` with Messages API JSON. The SDK's own retries are off; the
client's retry loop sleeps through an injected `sleep`, so nothing here really waits.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from store.config import Config
from store.ingest.cold import (
    PROMPT,
    TOOL_NAME,
    AnthropicClient,
    ColdTierUnavailable,
    LlmFatalError,
    LlmWindowError,
    Window,
    client_from_config,
    cold_settings,
    estimate_tokens,
    extract_cold,
    locate,
    make_windows,
    render_message,
    window_budget,
)
from store.models import ParsedSession, ToolResult, ToolUse, TranscriptMessage

REPO = Path(__file__).resolve().parents[2]
MODEL = "claude-sonnet-5-5"


# -- builders -------------------------------------------------------------------------------


def msg(
    index: int,
    text: str,
    *,
    role: str = "assistant",
    kind: str = "text",
    file: str = "s.jsonl",
    lines: tuple[int, int] | None = None,
    **extra: Any,
) -> TranscriptMessage:
    start, end = lines or (index * 2 + 1, index * 2 + 1)
    return TranscriptMessage(
        index=index,
        file=file,
        line_start=start,
        line_end=end,
        uuid=f"u{index}",
        role=role,
        kind=kind,
        text=text,
        timestamp="2026-11-01T10:00:00Z",
        **extra,
    )


def session(messages: list[TranscriptMessage]) -> ParsedSession:
    return ParsedSession(
        session_id="s",
        project="/work/demo",
        branch="main",
        client_version="2.1.0",
        started_at="",
        ended_at="",
        messages=tuple(messages),
        turns=1,
        tool_calls=0,
        errors=0,
        skills_used=(),
        skipped={},
        files=("/tmp/s.jsonl",),
    )


def filler(index: int, tokens: int) -> TranscriptMessage:
    """A message whose rendered block costs about `tokens` estimated tokens."""
    head = len(render_message(msg(index, "")))
    return msg(index, f"step {index} " + "x" * max(0, tokens * 3 - head - 8))


def node(evidence: Any, type_: str = "DISCOVERY", confidence: Any = 0.8, **extra: Any) -> Any:
    return {"type": type_, "summary": f"{type_} lesson", "evidence": evidence} | (
        {"confidence": confidence} | extra
    )


def message_json(tool_input: Any, *, stop: str = "tool_use") -> dict[str, Any]:
    """A realistic Messages API reply with one `record_nodes` tool call."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "text", "text": "Recording the nodes."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": TOOL_NAME,
                "input": tool_input,
            },
        ],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    }


def error_json(status: int, kind: str, message: str, **headers: str) -> httpx2.Response:
    body = {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    return httpx2.Response(status, json=body, headers=headers)


Reply = httpx2.Response | Callable[[dict[str, Any]], httpx2.Response]


@dataclass
class FakeApi:
    """The Messages API behind MockTransport. `replies` are served in order to `/v1/messages`
    (the last one repeats); `by_window` overrides by a marker found in the window text.
    `count_tokens` answers like a tokenizer (the local estimate) unless `count_status` is set."""

    replies: list[Reply] = field(default_factory=list)
    by_window: dict[str, list[Reply]] = field(default_factory=dict)
    count_status: int = 200
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append((request.url.path, body))
        if request.url.path == "/v1/messages/count_tokens":
            if self.count_status != 200:
                return error_json(self.count_status, "api_error", "counting is down")
            text = body["messages"][0]["content"]
            return httpx2.Response(200, json={"input_tokens": estimate_tokens(text)})
        assert request.url.path == "/v1/messages"
        content = body["messages"][0]["content"]
        queue = next((q for k, q in self.by_window.items() if k in content), self.replies)
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return reply if isinstance(reply, httpx2.Response) else reply(body)

    def calls(self, path: str = "/v1/messages") -> list[dict[str, Any]]:
        return [body for p, body in self.requests if p == path]


def ok(tool_input: Any, **kw: Any) -> httpx2.Response:
    return httpx2.Response(200, json=message_json(tool_input, **kw))


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(sleeps: list[float]) -> Callable[..., tuple[AnthropicClient, FakeApi]]:
    def factory(api: FakeApi, **kw: Any) -> tuple[AnthropicClient, FakeApi]:
        http = httpx2.Client(transport=httpx2.MockTransport(api.handler))
        kw.setdefault("max_retries", 2)
        client = AnthropicClient(
            MODEL,
            "sk-ant-test",
            http_client=http,
            sleep=sleeps.append,
            backoff=lambda attempt: 2.0**attempt,
            **kw,
        )
        return client, api

    return factory


# -- token arithmetic -----------------------------------------------------------------------


def test_window_budget_formula() -> None:
    assert window_budget(200_000, 1200, 0.45, 4000) == 84_800  # ⌊90000⌋ − 1200 − 4000
    assert window_budget(200_000, 1200) == 84_800
    assert window_budget(128_001, 0, 0.5, 0) == 64_000  # floor


def test_window_budget_limits() -> None:
    with pytest.raises(ValueError, match="no room"):
        window_budget(8000, 1200, 0.45, 4000)  # 3600 − 5200 < 0
    with pytest.raises(ValueError, match="no room"):
        window_budget(10_000, 500, 0.45, 4000)  # exactly 0
    with pytest.raises(ValueError, match="bad window settings"):
        window_budget(200_000, 1200, 0.0, 4000)
    # A small positive budget is raised to the minimum while everything still fits.
    assert window_budget(12_000, 500, 0.45, 4000) == 1000  # 5400 − 4500 = 900
    # ... but never past what the context holds: 2000 − 200 − 1000 = 800.
    assert window_budget(2_000, 200, 0.9, 1000) == 800  # 1800 − 1200 = 600 → 1000 → 800


def test_estimate_tokens_errs_high() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("é" * 3) == 2  # 6 UTF-8 bytes
    prose = "The flaky test failed because the fixture reused a port. " * 20
    assert estimate_tokens(prose) > len(prose) / 4  # above the usual ~4 chars per token


# -- windows --------------------------------------------------------------------------------


def test_windows_respect_budget_and_overlap() -> None:
    messages = [filler(i, 200) for i in range(40)]
    windows = make_windows(messages, budget=2000, overlap=750)
    assert len(windows) > 3
    assert windows == make_windows(messages, budget=2000, overlap=750)  # deterministic
    assert [w.index for w in windows] == list(range(len(windows)))
    covered = {m.index for w in windows for m in w.messages}
    assert covered == set(range(40))
    for window in windows:
        assert estimate_tokens(window.text) <= 2000
        assert window.text == "".join(render_message(m) for m in window.messages)
    for before, after in itertools.pairwise(windows):
        shared = [m for m in after.messages if m in before.messages]
        assert after.messages[: len(shared)] == tuple(shared)  # the next window starts with it
        assert before.messages[-len(shared) :] == tuple(shared)  # ... the previous one's tail
        assert sum(estimate_tokens(render_message(m)) for m in shared) >= 750
        assert after.messages[len(shared)].index == before.messages[-1].index + 1  # no gap


def test_overlap_zero_means_disjoint_windows() -> None:
    windows = make_windows([filler(i, 300) for i in range(10)], budget=1000, overlap=0)
    seen = [m.index for w in windows for m in w.messages]
    assert seen == list(range(10))


def test_message_larger_than_budget_gets_its_own_truncated_window() -> None:
    big = msg(1, "traceback line\n" * 2000)  # ~10,000 tokens
    messages = [filler(0, 200), big, filler(2, 200), filler(3, 200)]
    windows = make_windows(messages, budget=1000, overlap=150)
    alone = [w for w in windows if big in w.messages]
    assert len(alone) == 1
    assert alone[0].messages == (big,)
    assert alone[0].text.startswith("[#1 assistant text] traceback line")
    assert alone[0].text.endswith("…[truncated]\n")
    assert all(estimate_tokens(w.text) <= 1000 for w in windows)
    assert {m.index for w in windows for m in w.messages} == {0, 1, 2, 3}


def test_render_summarises_tool_uses_and_results() -> None:
    use = msg(3, "", kind="tool_use", tool_uses=(ToolUse("t1", "Bash", '{"command":"pytest"}'),))
    result = msg(
        4,
        "",
        role="user",
        kind="tool_result",
        tool_results=(ToolResult("t1", "E   AssertionError: 2 != 3", is_error=True),),
    )
    assert render_message(use) == '[#3 assistant tool_use]\n-> Bash: {"command":"pytest"}\n'
    assert render_message(result) == (
        "[#4 user tool_result]\n<- error: E   AssertionError: 2 != 3\n"
    )


# -- token counting through the SDK ---------------------------------------------------------


def test_count_tokens_uses_the_api_endpoint_and_caches(make_client: Any) -> None:
    client, api = make_client(FakeApi())
    text = "The migration failed because the column already existed."
    assert client.count_tokens(text) == estimate_tokens(text)
    assert client.count_tokens(text) == estimate_tokens(text)
    [body] = api.calls("/v1/messages/count_tokens")
    assert body == {"model": MODEL, "messages": [{"role": "user", "content": text}]}


def test_count_tokens_falls_back_to_the_estimate(make_client: Any) -> None:
    client, api = make_client(FakeApi(count_status=500))
    assert client.count_tokens("x" * 30) == 10
    assert client.count_tokens("y" * 60) == 20
    # One failed call, then local estimates only: counting never costs retries.
    assert len(api.calls("/v1/messages/count_tokens")) == 1
    assert not api.calls()


def test_windows_are_counted_per_window_not_per_message(make_client: Any) -> None:
    api = FakeApi(replies=[ok({"nodes": [], "edges": []})])
    client, _ = make_client(api)
    result = extract_cold(session([filler(i, 50) for i in range(30)]), client)
    assert result.windows == 1
    assert len(api.calls("/v1/messages/count_tokens")) == 2  # the prompt, the one window


# -- extraction through the SDK -------------------------------------------------------------

DEBUG_SESSION = [
    msg(0, "Tests fail on CI with ECONNREFUSED but pass locally.", role="user", kind="prompt"),
    msg(1, "Maybe the database container is not ready when the tests start."),
    msg(2, "", kind="tool_use", tool_uses=(ToolUse("t1", "Bash", '{"command":"docker ps"}'),)),
    msg(
        3,
        "",
        role="user",
        kind="tool_result",
        tool_results=(ToolResult("t1", "postgres   Up 2 seconds (health: starting)", False),),
    ),
    msg(4, "I found that the healthcheck was missing, so tests raced the database."),
    msg(5, "Adding a healthcheck and depends_on condition fixed the flaky CI run."),
]


def test_extract_cold_end_to_end(make_client: Any) -> None:
    reply = {
        "nodes": [
            node("the database container is not ready", "HYPOTHESIS", 0.7, message_index=1),
            node("health: starting", "INVESTIGATION", 0.6, message_index=3),
            node("the healthcheck was missing", "DISCOVERY", 7, summary="  Check  health " * 40),
            node("the database was never healthy", "DISCOVERY", 0.9),  # not in the window
            node("Adding a healthcheck and depends_on condition", "SOLUTION", -2),
            node("fixed the flaky CI run", "EPIPHANY", 0.9),  # unknown type
        ],
        "edges": [
            {"source": 0, "target": 1, "type": "informed"},
            {"source": 3, "target": 4, "type": "resolved"},  # from a dropped node
            {"source": 0, "target": 1, "type": "caused"},  # unknown edge type
        ],
    }
    api = FakeApi(replies=[ok(reply)])
    client, _ = make_client(api)
    result = extract_cold(session(DEBUG_SESSION), client)

    assert result.problems == ()
    assert result.windows == 1
    assert result.dropped == 2
    by_type = {n.type: n for n in result.nodes}
    assert list(by_type) == ["HYPOTHESIS", "INVESTIGATION", "DISCOVERY", "SOLUTION"]
    assert by_type["HYPOTHESIS"].key == "cold:llm:s.jsonl:3-3:HYPOTHESIS"
    assert by_type["INVESTIGATION"].key == "cold:llm:s.jsonl:7-7:INVESTIGATION"
    assert by_type["DISCOVERY"].confidence == 1.0
    assert len(by_type["DISCOVERY"].summary) <= 200
    assert by_type["DISCOVERY"].summary.startswith("Check health Check")
    assert by_type["SOLUTION"].confidence == 0.0
    assert all(n.tier == "cold" and n.strategy == "llm" for n in result.nodes)
    assert [(e.source, e.target, e.type) for e in result.edges] == [
        (by_type["HYPOTHESIS"].key, by_type["INVESTIGATION"].key, "informed")
    ]
    [call] = api.calls()
    assert call["system"] == PROMPT
    assert call["model"] == MODEL
    assert call["max_tokens"] == 4000
    assert call["tool_choice"] == {
        "type": "tool",
        "name": TOOL_NAME,
        "disable_parallel_tool_use": True,
    }
    [tool] = call["tools"]
    assert tool["name"] == TOOL_NAME
    assert tool["input_schema"]["properties"]["nodes"]["maxItems"] == 12
    assert "temperature" not in call
    assert (
        "[#4 assistant text] I found that the healthcheck was missing"
        in (call["messages"][0]["content"])
    )


def test_evidence_maps_to_its_message_range() -> None:
    messages = [
        msg(0, "Run the suite again.", role="user", kind="prompt", lines=(1, 1)),
        msg(1, "The suite is green now.", lines=(2, 4)),
        msg(2, "Spawned a helper.", file="s/subagents/agent-a.jsonl", lines=(1, 2)),
        msg(3, "The suite is green now.", file="s/subagents/agent-a.jsonl", lines=(5, 9)),
    ]
    [window] = make_windows(messages, budget=10_000)
    assert locate(window, "The suite is green now.") == ("s.jsonl", 2, 4)  # first occurrence
    assert locate(window, "The suite is green now.", 3) == ("s/subagents/agent-a.jsonl", 5, 9)
    assert locate(window, "The suite is green now.", 99) == ("s.jsonl", 2, 4)  # bad hint
    spanning = "again.\n[#1 assistant text] The suite"
    assert locate(window, spanning) == ("s.jsonl", 1, 4)  # across messages: their range
    assert locate(window, "not there at all") is None


def test_more_than_max_nodes_keeps_the_most_confident(make_client: Any) -> None:
    messages = [msg(i, f"Observation number {i:02d} about the cache.") for i in range(15)]
    nodes = [node(f"Observation number {i:02d}", confidence=i / 20) for i in range(15)]
    client, _ = make_client(FakeApi(replies=[ok({"nodes": nodes, "edges": []})]))
    result = extract_cold(session(messages), client)
    assert len(result.nodes) == 12
    assert result.dropped == 3
    assert sorted(n.confidence for n in result.nodes) == [i / 20 for i in range(3, 15)]


class ScriptedLlm:
    """A fake `LlmClient`: answers call `i` (1-based) with `replies[i]`, raising it when it is
    an exception."""

    def __init__(self, context_tokens: int, replies: dict[int, Any]) -> None:
        self.context_tokens = context_tokens
        self.replies = replies
        self.windows: list[str] = []

    def count_tokens(self, text: str) -> int:
        # The fixed prompt counts as nothing, so budgets are easy to set from outside.
        return 0 if text.startswith(PROMPT) else estimate_tokens(text)

    def extract(self, system: str, window: str, max_nodes: int) -> list[dict[str, Any]]:
        self.windows.append(window)
        reply = self.replies.get(len(self.windows), [])
        if isinstance(reply, Exception):
            raise reply
        return list(reply)


@pytest.mark.parametrize(("first", "second"), [(0.5, 0.7), (0.7, 0.5)])
def test_duplicates_from_overlapping_windows_keep_the_higher_confidence(
    first: float, second: float
) -> None:
    messages = [filler(i, 300) for i in range(8)]
    assert [[m.index for m in w.messages] for w in make_windows(messages, 1000, 300)] == [
        [0, 1, 2],
        [2, 3, 4],
        [4, 5, 6],
        [6, 7],
    ]
    evidence = messages[4].text[:20]
    replies = {
        2: [node(evidence, confidence=first, summary="seen first")],
        3: [node(evidence, confidence=second, summary="seen second")],
    }
    # budget = ⌊5500·1.0⌋ − (0 + 500 tool-use overhead) − 4000 = 1000
    llm = ScriptedLlm(5500, replies)
    result = extract_cold(session(messages), llm, fraction=1.0, overlap=300)
    assert result.windows == 4
    [kept] = result.nodes
    assert kept.key == "cold:llm:s.jsonl:9-9:DISCOVERY"
    assert kept.confidence == 0.7
    assert kept.summary == ("seen first" if first > second else "seen second")
    assert result.dropped == 0


def test_429_with_retry_after_then_success(make_client: Any, sleeps: list[float]) -> None:
    limited = error_json(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        **{"retry-after": "7"},
    )
    good = ok({"nodes": [node("I found that the healthcheck was missing")], "edges": []})
    api = FakeApi(replies=[limited, good])
    client, _ = make_client(api)
    result = extract_cold(session(DEBUG_SESSION), client)
    assert sleeps == [7.0]
    assert result.problems == ()
    assert [n.type for n in result.nodes] == ["DISCOVERY"]
    assert len(api.calls()) == 2


def three_windows() -> tuple[list[TranscriptMessage], dict[str, Any]]:
    """Three messages of ~2,100 tokens that cannot share a window, and the client settings
    that make it so: B = 8100 − T_prompt (~1,500) − 4000 output ≈ 2,600."""
    messages = [
        msg(i, f"Window marker W{i}: the build cache was stale. " + "detail " * 900)
        for i in range(3)
    ]
    return messages, {"context_tokens": 4000 + 1500 + 2600}


def good_for(i: int) -> httpx2.Response:
    return ok({"nodes": [node(f"Window marker W{i}: the build cache was stale")], "edges": []})


def test_529_retried_then_reported_while_later_windows_succeed(
    make_client: Any, sleeps: list[float]
) -> None:
    messages, settings = three_windows()
    overloaded = error_json(529, "overloaded_error", "Overloaded")
    api = FakeApi(by_window={"W0:": [overloaded], "W1:": [good_for(1)], "W2:": [good_for(2)]})
    client, _ = make_client(api, **settings)
    result = extract_cold(session(messages), client, fraction=1.0, overlap=0)
    assert result.windows == 3
    assert result.problems == ("window 1 of 3: API overloaded (529) after 2 retries",)
    assert sleeps == [1.0, 2.0]  # backoff(0), backoff(1): no retry-after header
    assert [n.line_start for n in result.nodes] == [3, 5]
    assert len(api.calls()) == 3 + 2  # 1 + 2 retries, then one call each


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (401, "authentication_error", "cold tier stopped: authentication failed (401)"),
        (
            400,
            "invalid_request_error",
            "cold tier stopped: bad request (400): tools.0.input_schema: invalid",
        ),
    ],
)
def test_auth_and_bad_requests_stop_the_tier_at_once(
    make_client: Any, sleeps: list[float], status: int, kind: str, expected: str
) -> None:
    messages, settings = three_windows()
    denied = error_json(status, kind, "tools.0.input_schema: invalid")
    client, api = make_client(FakeApi(replies=[denied]), **settings)
    result = extract_cold(session(messages), client, fraction=1.0, overlap=0)
    assert result.problems == (f"{expected}; 2 more windows skipped",)
    assert (result.failed, result.unsent, result.calls, result.stopped) == (3, 2, 1, True)
    assert result.nodes == ()
    assert len(api.calls()) == 1  # not retried, later windows not tried
    assert sleeps == []


def test_connection_errors_are_retried(make_client: Any, sleeps: list[float]) -> None:
    calls = 0

    def flaky(body: dict[str, Any]) -> httpx2.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise httpx2.ConnectError("connection refused")
        return ok({"nodes": [node("Tests fail on CI with ECONNREFUSED")], "edges": []})

    client, _ = make_client(FakeApi(replies=[flaky]))
    result = extract_cold(session(DEBUG_SESSION), client)
    assert sleeps == [1.0]
    assert result.problems == ()
    assert len(result.nodes) == 1


def test_retries_exhausted_is_a_window_error(make_client: Any, sleeps: list[float]) -> None:
    limited = error_json(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1500"})
    client, api = make_client(FakeApi(replies=[limited]), max_retries=4)
    with pytest.raises(LlmWindowError, match="rate limited after 4 retries"):
        client.extract(PROMPT, "[#0 user prompt] hi\n", 12)
    assert sleeps == [1.5] * 4
    assert len(api.calls()) == 5


@pytest.mark.parametrize(
    "tool_input",
    [
        {"nodes": "not a list", "edges": []},
        {"edges": []},
        ["nodes"],
    ],
)
def test_malformed_tool_input_is_a_window_problem(make_client: Any, tool_input: Any) -> None:
    client, _ = make_client(FakeApi(replies=[ok(tool_input)]))
    result = extract_cold(session(DEBUG_SESSION), client)
    assert result.nodes == ()
    assert len(result.problems) == 1
    assert result.problems[0].startswith("window 1 of 1: malformed reply")


def test_malformed_nodes_are_dropped_not_a_crash(make_client: Any) -> None:
    good = "the healthcheck was missing"
    reply = {
        "nodes": [
            {"type": "DISCOVERY", "summary": "no evidence"},
            {"type": "DISCOVERY", "evidence": good},  # no summary
            node(good, confidence="high"),
            node(good, confidence=None),
            node(good, confidence=True),
            {"type": 3, "summary": "x", "evidence": good, "confidence": 0.5},
            node(12345678),
            node("ECONNREFUSED"[:5]),  # too short to prove anything
            "just a string",
            None,
            node(good, confidence="0.75"),
            node(good, "solution", 0.75, message_index="four"),  # type case and a bad hint: ok
        ],
        "edges": [
            {"source": "0", "target": 10, "type": "resolved"},
            {"source": 10, "target": 10, "type": "resolved"},
            {"source": 10, "target": 99, "type": "resolved"},
            "edge",
        ],
    }
    client, _ = make_client(FakeApi(replies=[ok(reply)]))
    result = extract_cold(session(DEBUG_SESSION), client)
    assert result.problems == ()
    assert result.dropped == 11
    [kept] = result.nodes
    assert (kept.type, kept.confidence, kept.line_start) == ("SOLUTION", 0.75, 9)
    assert result.edges == ()


def test_nodes_sent_as_a_json_string_are_accepted(make_client: Any) -> None:
    nodes = json.dumps([node("the healthcheck was missing")])
    client, _ = make_client(FakeApi(replies=[ok({"nodes": nodes})]))
    result = extract_cold(session(DEBUG_SESSION), client)
    assert [n.type for n in result.nodes] == ["DISCOVERY"]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (ok({"nodes": []}, stop="max_tokens"), "reply cut off at max_tokens (4000)"),
        (ok({"nodes": []}, stop="refusal"), "the model refused this window"),
        (
            httpx2.Response(
                200,
                json=message_json({})
                | {
                    "content": [{"type": "text", "text": "Nothing to record."}],
                    "stop_reason": "end_turn",
                },
            ),
            "no record_nodes call in the reply (stop: end_turn)",
        ),
        (
            error_json(413, "request_too_large", "Request exceeds the maximum size"),
            "request rejected (413): Request exceeds the maximum size",
        ),
    ],
)
def test_unusable_replies_are_window_problems(
    make_client: Any, reply: httpx2.Response, problem: str
) -> None:
    client, _ = make_client(FakeApi(replies=[reply]))
    result = extract_cold(session(DEBUG_SESSION), client)
    assert result.problems == (f"window 1 of 1: {problem}",)


def test_fake_clients_report_through_the_tier_errors() -> None:
    messages = [filler(i, 900) for i in range(4)]
    replies: dict[int, Any] = {
        1: LlmWindowError("rate limited after 4 retries"),
        2: [node(messages[1].text[:20])],
        3: LlmFatalError("authentication failed (401)"),
    }
    llm = ScriptedLlm(5500, replies)  # budget 1000: one message per window
    result = extract_cold(session(messages), llm, fraction=1.0, overlap=0)
    assert result.problems == (
        "window 1 of 4: rate limited after 4 retries",
        "cold tier stopped: authentication failed (401); 1 more windows skipped",
    )
    assert len(llm.windows) == 3
    assert [n.line_start for n in result.nodes] == [3]


def test_a_context_too_small_is_a_problem_not_an_error() -> None:
    class Tiny:
        context_tokens = 2000

        def count_tokens(self, text: str) -> int:
            return estimate_tokens(text)

        def extract(self, system: str, window: str, max_nodes: int) -> list[dict[str, Any]]:
            raise AssertionError("never called")

    result = extract_cold(session(DEBUG_SESSION), Tiny())
    assert result.windows == 0
    assert result.problems[0].startswith("cold tier skipped: no room for a window")
    assert extract_cold(session([]), Tiny()).problems == ()


# -- configuration and availability ---------------------------------------------------------


def test_client_from_config_without_an_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    config = Config(tmp_path / "config.toml")
    with pytest.raises(ColdTierUnavailable, match="set ANTHROPIC_API_KEY"):
        client_from_config(config)
    config.set("llm.api_key_env", '"LIBRARIAN_LLM_KEY"')
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ignored")
    with pytest.raises(ColdTierUnavailable, match="set LIBRARIAN_LLM_KEY"):
        client_from_config(config)


def test_client_from_config_reads_the_llm_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    config = Config(tmp_path / "config.toml")
    client = client_from_config(config)
    assert (client.model, client.context_tokens, client.output_tokens) == (MODEL, 200_000, 4000)
    assert client.max_retries == 4
    config.set("llm.model", '"claude-opus-5"')
    config.set("llm.context_tokens", "1000000")
    config.set("llm.overlap_tokens", "500")
    client = client_from_config(config)
    assert (client.model, client.context_tokens) == ("claude-opus-5", 1_000_000)
    assert cold_settings(config) == {
        "fraction": 0.45,
        "output_tokens": 4000,
        "overlap": 500,
        "max_nodes": 12,
    }
    config.set("llm.context_tokens", '"lots"')
    with pytest.raises(ColdTierUnavailable, match=r"llm\.context_tokens must be a number"):
        client_from_config(config)


def test_missing_sdk_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ColdTierUnavailable, match="needs the anthropic SDK"):
        AnthropicClient(MODEL, "sk-ant-test")


def test_importing_the_module_does_not_import_the_sdk() -> None:
    code = "import store.ingest.cold, sys; print('anthropic' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_window_dataclass_is_frozen() -> None:
    window = Window(0, (), "")
    with pytest.raises(AttributeError):
        window.index = 1  # type: ignore[misc]
