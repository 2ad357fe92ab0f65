"""Every answer an agent can get is masked: the MCP tools (called through the registry the
server serves, in process) and the CLI's agent-facing commands (in subprocesses), on a library
whose skill descriptions, nodes and patterns carry tokens."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from app.mcp_server import build_tools
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.app.test_cli import run
from tests.store.test_serving import PROJECT, TOKENS, leaky_library


@pytest.fixture(scope="module")
def library_dir(tmp_path_factory: pytest.TempPathFactory, _embedder: FastEmbedder) -> Path:
    base = tmp_path_factory.mktemp("leaky")
    with Library(base / "lib", embedder=_embedder, clock=stepping_clock()) as library:
        leaky_library(library, base)
    return base / "lib"


@pytest.fixture
def library(library_dir: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    with Library(library_dir, embedder=_embedder) as opened:
        yield opened


def assert_masked(text: str) -> None:
    for token in TOKENS:
        assert token[4:20] not in text, text
    assert "[REDACTED" in text


def call(library: Library, tool: str, **arguments: Any) -> str:
    """The tool's whole answer (text blocks and structured content) as the agent gets it."""
    result = asyncio.run(build_tools(library).call_tool(tool, arguments))
    assert isinstance(result, CallToolResult)
    assert not result.is_error
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    return "\n".join(texts) + json.dumps(result.structured_content or {})


QUERIES = {
    "suggest_skills": {"context": "push the image to the registry, pull the model"},
    "search_memory": {"query": "registry push fails with 401 denied"},
    "pitfalls": {"query": ""},
    "diagnose": {"problem": "the registry push returns 401 denied"},
    "profile": {},
}


@pytest.mark.parametrize("tool", sorted(QUERIES))
def test_every_mcp_read_tool_answers_masked(library: Library, tool: str) -> None:
    answer = call(library, tool, project=PROJECT, **QUERIES[tool])
    assert_masked(answer)


def test_mcp_suggestions_are_the_same_skills_masked(library: Library) -> None:
    result = asyncio.run(
        build_tools(library).call_tool("suggest_skills", QUERIES["suggest_skills"])
    )
    assert isinstance(result, CallToolResult)
    assert result.structured_content
    skills = result.structured_content["skills"]
    assert {s["name"] for s in skills} >= {"registry-push", "model-pull"}
    push = next(s for s in skills if s["name"] == "registry-push")
    assert push["description"] == (
        "Push images to the registry with the token [REDACTED:ghp_]. Use when a push is denied."
    )


def test_cli_suggest_json_is_masked(library_dir: Path) -> None:
    out = run(library_dir, "suggest", "push the image to the registry", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "registry-push" in {s["name"] for s in data["suggestions"]}
    assert_masked(out.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ("search", "registry push fails with 401 denied", "--json"),
        ("pitfalls", "--json"),
        ("diagnose", "the registry push returns 401 denied"),
        ("profile", "--project", PROJECT),
    ],
)
def test_cli_memory_commands_are_masked(library_dir: Path, args: tuple[str, ...]) -> None:
    out = run(library_dir, *args)
    assert out.returncode == 0, out.stderr
    assert_masked(out.stdout)
