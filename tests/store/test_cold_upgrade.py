"""The cold tier over sessions the warm tier already read (`store.ingest.upgrade`).

Every test drives the real `anthropic.Anthropic` client (`AnthropicClient`, no retries)
through `httpx2.MockTransport`: the handler answers `/v1/messages` with bodies shaped as the
Messages API returns them (a text block, then a `record_nodes` tool_use block; usage with
cache fields; error bodies with a request id) and `/v1/messages/count_tokens` like a
tokenizer. The session is `debugging_session`: a failing test run (lines 3-4), a finding
(line 5), a pivot (line 6), the edit that fixed it (line 7), the passing run, the root cause.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from store.ingest.cold import (
    PROMPT,
    PROMPT_VERSION,
    TOOL_NAME,
    AnthropicClient,
    estimate_tokens,
)
from store.ingest.transcript import parse_session
from store.ingest.upgrade import SUPERSEDES, transcript_digest
from store.library import Library
from store.models import Node
from store.verify import verify
from tests.store.test_cold import MODEL, FakeApi, error_json
from tests.store.test_ingest import SECRET, Transcript, debugging_session

# What a careful model records from the session (summaries that clear the bar).
DEAD_END = {
    "type": "DEAD_END",
    "summary": "`pytest tests/integration -x` fails with TimeoutError: pool exhausted when 8"
    " xdist workers share one SQLAlchemy pool.",
    "evidence": "TimeoutError: pool exhausted",
    "confidence": 0.86,
    "message_index": 3,
}
DISCOVERY = {
    "type": "DISCOVERY",
    "summary": "`pool_size=5` in `tests/settings.py` is shared by all 8 pytest-xdist workers,"
    " so the integration tests run out of database connections.",
    "evidence": "is shared by all 8 xdist workers",
    "confidence": 0.9,
    "message_index": 4,
}
PIVOT = {
    "type": "PIVOT",
    "summary": "Raising `pool_size` did not help; closing the session in the `db` fixture"
    " teardown of `tests/conftest.py` was tried instead.",
    "evidence": "instead of raising the pool size, close sessions in the fixture teardown",
    "confidence": 0.8,
    "message_index": 5,
}
SOLUTION = {
    "type": "SOLUTION",
    "summary": "Adding `session.close()` after `yield session` in the `db` fixture of"
    " `tests/conftest.py` stops the pool exhaustion: 42 tests pass.",
    "evidence": "session.close()",
    "confidence": 0.88,
    "message_index": 6,
}
RESOLVED = {"source": 0, "target": 3, "type": "resolved"}


def message(tool_input: Any) -> dict[str, Any]:
    """A `/v1/messages` body as the API sends it for a forced tool call."""
    return {
        "id": "msg_01HCDu5LRGeP2o7s2xGmxyx8",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "text", "text": "I'll record the reasoning nodes from this window."},
            {
                "type": "tool_use",
                "id": "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
                "name": TOOL_NAME,
                "input": tool_input,
            },
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 3187,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 412,
            "service_tier": "standard",
        },
    }


def recorded(nodes: list[dict[str, Any]], edges: list[dict[str, Any]] | None = None) -> Any:
    body = message({"nodes": nodes, "edges": edges or []})
    return httpx2.Response(200, json=body, headers={"request-id": "req_011CRz9d1sWq"})


def careful() -> Any:
    return recorded([DEAD_END, DISCOVERY, PIVOT, SOLUTION], [RESOLVED])


def client(api: FakeApi, **kw: Any) -> AnthropicClient:
    http = httpx2.Client(transport=httpx2.MockTransport(api.handler))
    return AnthropicClient(MODEL, "sk-ant-test", http_client=http, max_retries=0, **kw)


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    debugging_session(tmp_path / "projects")
    return tmp_path / "projects"


@pytest.fixture
def library(make_library: Any, projects: Path) -> Library:
    """The session, ingested by the warm tier alone."""
    lib: Library = make_library()
    assert lib.ingest([projects]).ingested == 1
    return lib


def warm(library: Library, type_: str, line: int) -> Node:
    [found] = [
        n
        for n in library.nodes()
        if n.tier == "warm" and n.type == type_ and n.line_start <= line <= n.line_end
    ]
    return found


def cold(library: Library, type_: str) -> Node:
    [found] = [n for n in library.nodes() if n.tier == "cold" and n.type == type_]
    return found


def event_types(library: Library) -> list[str]:
    return [r[0] for r in library.db.conn.execute("SELECT type FROM events ORDER BY seq")]


def assert_verifies(library: Library) -> None:
    assert {c.name: c.problems for c in verify(library).checks if not c.ok} == {}


# -- supersede, never touch a reviewed node --------------------------------------------------


def test_an_unchanged_session_is_read_and_a_pending_warm_node_is_superseded(
    library: Library, projects: Path
) -> None:
    discovery = warm(library, "DISCOVERY", 5)
    pivot = warm(library, "PIVOT", 6)
    solution = warm(library, "SOLUTION", 7)
    # the discovery is below the bar (the dead end before it ends with the same cause), yet
    # still the warm tier's: the cold tier may supersede it
    assert (discovery.status, pivot.status, solution.status) == (
        "suppressed",
        "suppressed",
        "pending",
    )
    api = FakeApi(replies=[careful()])

    report = library.ingest([projects], llm=client(api))

    assert (report.ingested, report.unchanged) == (0, 1)  # the warm tier had nothing to do
    assert len(api.calls()) == 1  # ... and the cold tier still read the session
    sent = json.dumps(api.calls())
    assert "pool exhausted" in sent
    assert SECRET not in sent  # the key in the tool output never leaves the machine
    assert report.cold is not None
    assert (report.cold.sessions, report.cold.calls, report.cold.superseded) == (1, 1, 4)
    for old, type_ in ((discovery, "DISCOVERY"), (pivot, "PIVOT"), (solution, "SOLUTION")):
        now = library.node(old.node_id)
        new = cold(library, type_)
        assert (now.status, now.superseded_by) == ("superseded", new.node_id)
        assert now.summary == old.summary  # kept as it was, nothing deleted
        assert new.status == "pending"
    assert cold(library, "DISCOVERY").summary == DISCOVERY["summary"]
    pending = {n.node_id for n in library.nodes(status="pending")}
    assert discovery.node_id not in pending

    [event] = [
        json.loads(r[0])
        for r in library.db.conn.execute(
            "SELECT payload FROM events WHERE type='node.superseded' AND subject=?",
            (f"node:{discovery.node_id}",),
        )
    ]
    assert event["node_id"] == discovery.node_id
    assert event["by"] == cold(library, "DISCOVERY").node_id
    assert f"{MODEL}, prompt {PROMPT_VERSION}" in event["reason"]
    assert "restated this DISCOVERY as a DISCOVERY from lines 5-5" in event["reason"]
    # The edge the model drew: the failing run resolved by the fix.
    edges = library.session_graph("s-one")[1]
    assert (cold(library, "DEAD_END").node_id, cold(library, "SOLUTION").node_id) in {
        (e.source, e.target) for e in edges if e.type == "resolved"
    }
    assert_verifies(library)  # replay gives the same projections, `superseded` included


def test_reviewed_nodes_are_never_touched(library: Library, projects: Path) -> None:
    dead_end = warm(library, "DEAD_END", 3)
    discovery = warm(library, "DISCOVERY", 5)
    solution = warm(library, "SOLUTION", 7)
    library.review("approve", [dead_end.node_id])
    library.review("reject", [solution.node_id], reason="says too little")
    library.review("edit", [discovery.node_id], summary="Edited: `pool_size=5` is shared.")
    before = {n.node_id: n for n in library.nodes()}

    report = library.ingest([projects], llm=client(FakeApi(replies=[careful()])))

    for node_id in (dead_end.node_id, discovery.node_id, solution.node_id):
        assert library.node(node_id) == before[node_id]  # not a field changed
    # The model's versions are on record as duplicates of the reviewed nodes, not queued.
    assert cold(library, "DEAD_END").status == "merged"
    assert cold(library, "DEAD_END").merged_into == dead_end.node_id
    assert cold(library, "DISCOVERY").merged_into == discovery.node_id  # edited: reviewed
    assert cold(library, "SOLUTION").merged_into == solution.node_id  # rejected stays so
    assert cold(library, "PIVOT").status == "pending"  # the suppressed pivot was nobody's
    assert report.cold is not None
    assert (report.cold.superseded, report.cold.merged) == (1, 3)
    assert_verifies(library)


def test_a_node_approved_while_the_model_answers_is_not_touched(
    library: Library, projects: Path
) -> None:
    discovery = warm(library, "DISCOVERY", 5)

    def approve_then_answer(body: dict[str, Any]) -> Any:
        library.review("approve", [discovery.node_id])  # in the middle of the call
        return careful()

    library.ingest([projects], llm=client(FakeApi(replies=[approve_then_answer])))
    assert library.node(discovery.node_id).status == "approved"
    assert_verifies(library)


# -- the bar and the evidence ----------------------------------------------------------------


def test_cold_nodes_go_through_the_knowledge_bar(library: Library, projects: Path) -> None:
    narration = {
        "type": "DISCOVERY",
        "summary": "Let me look at the settings to understand the pool.",
        "evidence": "is shared by all 8 xdist workers",
        "confidence": 0.7,
        "message_index": 4,
    }
    unsure = DEAD_END | {"confidence": 0.15}  # the prompt's "nothing clears the bar"
    discovery, dead_end = warm(library, "DISCOVERY", 5), warm(library, "DEAD_END", 3)

    report = library.ingest(
        [projects], llm=client(FakeApi(replies=[recorded([narration, unsure])]))
    )

    found = {n.type: n for n in library.nodes() if n.tier == "cold"}
    assert found["DISCOVERY"].status == "suppressed"
    assert found["DISCOVERY"].suppressed_reason == "narration of intent, not a finding"
    assert found["DEAD_END"].status == "suppressed"
    assert found["DEAD_END"].suppressed_reason.startswith("the model rated it below the bar")
    # Below the bar supersedes nothing.
    assert library.node(discovery.node_id).status == discovery.status  # untouched
    assert library.node(dead_end.node_id).status == "pending"
    assert report.cold is not None
    assert (report.cold.suppressed, report.cold.superseded) == (2, 0)


def test_evidence_not_in_the_window_is_dropped(library: Library, projects: Path) -> None:
    invented = DISCOVERY | {"evidence": "the pool was configured with max_overflow=0"}
    discovery = warm(library, "DISCOVERY", 5)

    report = library.ingest([projects], llm=client(FakeApi(replies=[recorded([invented])])))

    assert report.cold is not None
    assert (report.cold.dropped, report.cold.nodes_added, report.cold.superseded) == (1, 0, 0)
    assert library.node(discovery.node_id).status == discovery.status  # untouched
    assert not [n for n in library.nodes() if n.tier == "cold"]


def test_cold_duplicates_of_other_sessions_merge_like_warm_ones(
    make_library: Any, tmp_path: Path
) -> None:
    library = make_library()
    debugging_session(tmp_path / "a", "s-one")
    library.ingest([tmp_path / "a"], llm=client(FakeApi(replies=[careful()])))
    debugging_session(tmp_path / "b", "s-two")
    report = library.ingest([tmp_path / "b"], llm=client(FakeApi(replies=[careful()])))
    assert report.cold is not None
    assert report.cold.merged == 4  # the same four lessons: dedup per project, by meaning
    twos = [n for n in library.nodes(session="s-two") if n.tier == "cold"]
    assert {n.status for n in twos} == {"merged"}


def test_a_cold_node_over_a_forgotten_one_is_withheld(library: Library, projects: Path) -> None:
    discovery = warm(library, "DISCOVERY", 5)
    library.forget("node", discovery.node_id, reason="not to be kept")

    report = library.ingest([projects], llm=client(FakeApi(replies=[recorded([DISCOVERY])])))

    assert report.cold is not None
    assert (report.cold.withheld, report.cold.nodes_added) == (1, 0)
    assert library.node(discovery.node_id).status == "forgotten"
    assert_verifies(library)


# -- once per model and prompt version -------------------------------------------------------


def test_a_rerun_sends_nothing_unless_again(library: Library, projects: Path) -> None:
    api = FakeApi(replies=[careful()])
    llm = client(api)
    library.ingest([projects], llm=llm)
    row = library.db.conn.execute(
        "SELECT model, prompt_version, digest, runs, failed_windows FROM cold_extractions"
        " WHERE session_id='s-one'"
    ).fetchone()
    digest = transcript_digest(parse_session(projects / "s-one.jsonl"))
    assert tuple(row) == (MODEL, PROMPT_VERSION, digest, 1, 0)
    seq = library.last_seq()
    nodes = library.nodes()

    again = library.ingest([projects], llm=llm)
    assert len(api.calls()) == 1  # not sent again
    assert again.cold is not None
    assert (again.cold.already, again.cold.sessions, again.cold.calls) == (1, 0, 0)
    assert library.last_seq() == seq  # nothing written
    assert library.plan_upgrade([projects], model=MODEL).calls == 0

    forced = library.ingest([projects], llm=llm, again=True)
    assert len(api.calls()) == 2
    assert forced.cold is not None
    assert (forced.cold.nodes_added, forced.cold.superseded) == (0, 0)
    assert library.nodes() == nodes  # the same nodes: idempotent
    assert event_types(library)[seq:] == ["session.cold_extracted"]
    assert (
        library.db.conn.execute(
            "SELECT runs FROM cold_extractions WHERE session_id='s-one'"
        ).fetchone()[0]
        == 2
    )
    assert_verifies(library)


def test_a_grown_session_or_another_prompt_is_read_again(library: Library, projects: Path) -> None:
    library.ingest([projects], llm=client(FakeApi(replies=[careful()])))
    assert library.plan_upgrade([projects], model=MODEL).calls == 0
    assert library.plan_upgrade([projects], model="claude-opus-5").sessions[0].reason == "prompt"
    grown = Transcript(projects / "s-one.jsonl", "s-one", "/work/payments")
    grown.count = 100  # new records, new uuids
    grown.say("Later: `pytest -n 8` is stable with `pool_size=5` now that sessions close.")
    [planned] = library.plan_upgrade([projects], model=MODEL).sessions
    assert (planned.session_id, planned.windows, planned.reason) == ("s-one", 1, "changed")


def test_api_failures_record_nothing_and_the_session_is_tried_again(
    library: Library, projects: Path
) -> None:
    limited = error_json(
        429,
        "rate_limit_error",
        "This request would exceed your organization's rate limit of 50,000 input tokens per"
        " minute.",
        **{"retry-after": "12", "x-should-retry": "true"},
    )
    down = error_json(500, "api_error", "Internal server error")
    malformed = httpx2.Response(200, json=message({"nodes": "DISCOVERY: the pool is small"}))
    discovery = warm(library, "DISCOVERY", 5)
    for reply, problem in (
        (limited, "rate limited after 0 retries"),
        (down, "server error (500) after 0 retries"),
        (malformed, "malformed reply: 'nodes' is not a list"),
    ):
        api = FakeApi(replies=[reply])
        report = library.ingest([projects], llm=client(api))
        assert report.cold is not None
        assert report.cold.sessions == 0
        assert any(problem in p for p in report.problems), report.problems
        assert library.node(discovery.node_id).status == discovery.status  # untouched
        assert library.plan_upgrade([projects], model=MODEL).sessions[0].reason == "new"
    assert "session.cold_extracted" not in event_types(library)

    library.ingest([projects], llm=client(FakeApi(replies=[careful()])))
    assert library.node(discovery.node_id).status == "superseded"


def test_a_bad_key_stops_the_cold_tier(make_library: Any, tmp_path: Path) -> None:
    library = make_library()
    for name in ("s-one", "s-two", "s-three"):
        debugging_session(tmp_path / "projects", name)
    api = FakeApi(replies=[error_json(401, "authentication_error", "invalid x-api-key")])
    report = library.ingest([tmp_path / "projects"], llm=client(api))
    assert len(api.calls()) == 1  # not once per session
    assert report.cold is not None
    assert (report.cold.sessions, report.cold.calls) == (0, 1)
    assert any("authentication failed (401)" in p for p in report.problems)
    assert any(p.startswith("cold tier stopped after 1 of 3 files") for p in report.problems)


# -- the estimate and the prompt -------------------------------------------------------------


def test_the_plan_counts_calls_and_tokens_without_the_network(
    library: Library, projects: Path
) -> None:
    debugging_session(projects, "s-two")
    plan = library.plan_upgrade([projects])
    assert plan.model == "claude-sonnet-5-5"  # the configured model
    assert plan.prompt_version == PROMPT_VERSION
    assert [(s.session_id, s.windows, s.reason) for s in plan.sessions] == [
        ("s-one", 1, "new"),
        ("s-two", 1, "new"),  # not ingested yet: planned all the same
    ]
    assert plan.calls == 2
    assert plan.input_tokens > 2 * 1500  # the prompt alone is over 1,500 tokens per call
    assert plan.max_output_tokens == 2 * 4000
    # The tool schema, the wrapper and the tool-use overhead add ~850 tokens to the prompt's:
    # room for windows of ~300 tokens, so each session takes a few calls.
    context = estimate_tokens(PROMPT) + 4000 + 1150
    library.config.set("llm.context_tokens", str(context))
    library.config.set("llm.window_fraction", "1.0")
    library.config.set("llm.overlap_tokens", "0")
    small = library.plan_upgrade([projects])
    assert all(s.windows >= 2 for s in small.sessions)
    assert small.calls == sum(s.windows for s in small.sessions)


def test_the_prompt_states_the_bar_with_labelled_examples(library: Library, projects: Path) -> None:
    api = FakeApi(replies=[careful()])
    library.ingest([projects], llm=client(api))
    [call] = api.calls()
    assert call["system"] == PROMPT
    for rule in (
        "specific:",
        "self-contained:",
        "true to the evidence:",
        "not routine:",
        "The agent harness's own tool errors",
        "that is a PIVOT",
        "record the finding, not the narration",
    ):
        assert rule in PROMPT
    examples = [line for line in PROMPT.splitlines() if line[:2] in ("K ", "R ")]
    assert len(examples) >= 8
    assert {line.split(":")[0][2:] for line in examples} >= {"DEAD_END", "SOLUTION", "PIVOT"}
    assert set(SUPERSEDES) == {
        "HYPOTHESIS",
        "INVESTIGATION",
        "DISCOVERY",
        "PIVOT",
        "DEAD_END",
        "SOLUTION",
        "CONTEXT_LOAD",
    }
