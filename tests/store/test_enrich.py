"""Enrichment of thin skills (issue 16): a proposed rewrite of the discovery frontmatter, by
rules mined from the transcripts where the skill was used or by the configured LLM (the real
anthropic client over httpx2.MockTransport), waiting as a diff; approval writes the SKILL.md
back by a round trip (comments, key order, formatting intact), spec keys only, re-validated
and re-linted, as a new version served at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from store.ingest.cold import AnthropicClient
from store.library import Library
from store.skills.enrich import EnrichmentError, thin_reasons
from store.skills.parser import parse_skill_md
from store.verify import verify

SKILL = "py-spy-profiling"


def reply(tool_input: dict[str, Any]) -> httpx2.Response:
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "propose_frontmatter",
                "input": tool_input,
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
    return httpx2.Response(200, json=body)


def client(handler: Any) -> AnthropicClient:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicClient("claude-test", "sk-ant-test", http_client=http, max_retries=0)


def path_of(lib: Library) -> Path:
    return Path(lib.get_skill(SKILL).summary.fs_path)


def test_thin_means_short_or_silent_about_when() -> None:
    assert thin_reasons("Profile Python processes with py-spy.", "", []) == [
        "the description is 37 characters (under 80)",
        "nothing says when to use it (no 'use when', when_to_use or triggers)",
    ]
    long = "Profile a running Python service in a pod to find where its CPU time goes, live."
    assert thin_reasons(long + " Use when it is slow.", "", []) == []
    assert thin_reasons(long, "", ["flame graph"]) == []


def test_the_demo_has_one_thin_skill_and_rules_mine_its_usage(demo_library: Library) -> None:
    assert [t.name for t in demo_library.thin_skills()] == [SKILL]
    before = path_of(demo_library).read_text(encoding="utf-8")
    proposal = demo_library.enrich(SKILL)
    assert proposal.status == "pending"
    assert proposal.source == "rules"
    assert any("session(s) that used it" in r for r in proposal.reasons)
    assert proposal.fields["description"].startswith("Profile Python processes with py-spy.")
    assert "Use when" in proposal.fields["description"]
    assert "seen in use:" in proposal.fields["when_to_use"]
    assert "k6 checkout scenario" in proposal.fields["when_to_use"]  # mined from session S3
    assert "python" in proposal.fields["tags"]
    assert proposal.before == before
    assert "+  when_to_use:" in proposal.diff
    assert "-description: Profile Python processes with py-spy." in proposal.diff
    assert path_of(demo_library).read_text(encoding="utf-8") == before  # nothing written yet
    assert [e.proposal_id for e in demo_library.enrichments()] == [proposal.proposal_id]
    assert verify(demo_library).ok


def test_approval_writes_back_by_round_trip_as_a_served_version(demo_library: Library) -> None:
    detail = demo_library.get_skill(SKILL)
    proposal = demo_library.enrich(SKILL)
    approved = demo_library.approve_enrichment(proposal.proposal_id)
    assert approved.status == "approved"
    text = path_of(demo_library).read_text(encoding="utf-8")
    assert text == proposal.after
    assert "# Quick notes from the platform team; the description is still a stub." in text
    assert "  author: platform-team  # ask in #perf" in text  # comments kept
    keys = [line.split(":")[0] for line in text.split("---")[1].splitlines() if line[:1].isalpha()]
    assert keys == [
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
    ]  # key order kept, spec keys only
    assert text.split("\n---\n", 1)[1] == proposal.before.split("\n---\n", 1)[1]  # the body
    parsed = parse_skill_md(text.encode(), SKILL)
    assert not isinstance(parsed, Exception)
    after = demo_library.get_skill(SKILL)
    assert after.summary.version_no == detail.summary.version_no + 1
    assert after.served_version == after.summary.version_no  # approved text: served at once
    assert after.manifest["when_to_use"] == proposal.fields["when_to_use"]
    assert demo_library.thin_skills() == []
    hit = demo_library.suggest("what is every thread of a hung python worker doing")[0]
    assert hit.name == SKILL
    assert verify(demo_library).ok


def test_a_stale_proposal_is_refused_and_set_aside(demo_library: Library) -> None:
    proposal = demo_library.enrich(SKILL)
    path = path_of(demo_library)
    path.write_text(path.read_text(encoding="utf-8") + "\nEdited meanwhile.\n", encoding="utf-8")
    with pytest.raises(EnrichmentError, match="changed since this proposal"):
        demo_library.approve_enrichment(proposal.proposal_id)
    assert demo_library.enrichment(proposal.proposal_id).status == "stale"
    with pytest.raises(EnrichmentError, match="needs a reason"):
        demo_library.reject_enrichment(demo_library.enrich(SKILL).proposal_id, " ")
    assert verify(demo_library).ok


def test_the_llm_proposes_through_the_real_client(demo_library: Library) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return reply(
            {
                "description": "Profile a running Python service with py-spy to see where"
                " CPU time and waiting go. Use when a pod is slow or hung and logs say"
                " nothing; see <script> nothing.",
                "when_to_use": "latency or CPU rose without a cause in the logs",
                "triggers": ["why is the api slow", "flame graph, please", "what is it waiting on"],
                "tags": ["Python", "py spy", "profiling"],
            }
        )

    proposal = demo_library.enrich(SKILL, client(handler))
    assert proposal.source == "llm:claude-test"
    body = seen[0]
    assert body["tool_choice"] == {
        "type": "tool",
        "name": "propose_frontmatter",
        "disable_parallel_tool_use": True,
    }
    assert "k6 checkout scenario" in body["messages"][0]["content"]  # the usage context
    assert "<" not in proposal.fields["description"]  # angle brackets never get in
    assert proposal.fields["tags"] == "python, py-spy, profiling"
    # a comma inside a trigger would split it in two: it is folded away
    assert proposal.fields["triggers"] == (
        "why is the api slow, flame graph please, what is it waiting on"
    )
    demo_library.approve_enrichment(proposal.proposal_id)
    assert (
        demo_library.get_skill(SKILL)
        .manifest["description"]
        .startswith("Profile a running Python service")
    )


def test_a_failing_llm_is_a_clear_error_and_changes_nothing(demo_library: Library) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(401, json={"type": "error", "error": {"type": "x", "message": "no"}})

    seq = demo_library.last_seq()
    with pytest.raises(Exception, match="authentication failed"):
        demo_library.enrich(SKILL, client(handler))
    assert demo_library.last_seq() == seq

    def nonsense(request: httpx2.Request) -> httpx2.Response:
        return reply({"description": "", "when_to_use": "", "triggers": [], "tags": []})

    with pytest.raises(EnrichmentError, match="no description"):
        demo_library.enrich(SKILL, client(nonsense))
    assert demo_library.last_seq() == seq
