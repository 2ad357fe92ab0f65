"""`librarian mcp` end to end: a real MCP client session over stdio, as an agent would use it.

The server runs in a subprocess on a copy of the demo library in which every reasoning node is
approved and consolidated, so memory, pitfalls, diagnose and the profile have patterns to
return. The server loads the embedding model at start-up (about three seconds), so one server
and client session (`client`) serves the whole module; its event loop runs in a thread behind
a blocking portal, which keeps the tests themselves synchronous. Only the raw-bytes test starts
a server of its own, because it needs the process's exit.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    TextContent,
    Tool,
)

from app.mcp_tools import LifecycleEvent
from store.embed import FastEmbedder
from store.events import iter_events
from store.library import Library
from store.models import AGENT_LIFECYCLE_EVENTS
from store.verify import verify
from tests.conftest import REPO, isolate_home

TOOLS = {
    "search_memory",
    "pitfalls",
    "diagnose",
    "profile",
    "suggest_skills",
    "record_skill_outcome",
}
#: Served only with `mcp.allow_status_changes = true`.
STATUS_TOOLS = {"skill_event"}
PAYMENTS = "/home/dev/work/payments-api"
#: A pitfall below the pattern bar, made to rank first everywhere if it were served.
FLAWED = "p_flawed0000"
FLAWED_TITLE = "Connection pool exhausted at checkout: raise the pool size"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-home")


@pytest.fixture(scope="module")
def library_dir(
    demo_library_dir: Path,
    home: Path,
    tmp_path_factory: pytest.TempPathFactory,
    _embedder: FastEmbedder,
) -> Path:
    """A copy of the demo with every node approved and consolidated into patterns."""
    target = tmp_path_factory.mktemp("mcp") / "library"
    _embedder.load()  # assembles the shared model folder the copy links to
    shutil.copytree(demo_library_dir, target, ignore=shutil.ignore_patterns("models"))
    # The server assembles no model of its own: it reads the tests' shared one (read-only;
    # the demo folder itself may have been restored without its models meanwhile).
    (target / "models").symlink_to(demo_library_dir.parent / "models", target_is_directory=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_home(monkeypatch, home)
        with Library(target, embedder=_embedder) as library:
            pending = library.nodes(status="pending")
            library.review("approve", [n.node_id for n in pending])
            library.consolidate(full=True)
            assert library.patterns(kind="pitfall"), "the demo should yield pitfalls"
            add_flawed_pitfall(library)
    return target


def add_flawed_pitfall(library: Library) -> None:
    """A high-severity TEAM pitfall about the pool, over real members, recorded with a flaw."""
    served = library.patterns(kind="pitfall")[0]
    members = [[n.node_id, n.session_id] for n in library.pattern_nodes(served.pattern_id)]
    record = {
        "pattern_id": FLAWED,
        "kind": "pitfall",
        "polarity": "anti",
        "title": FLAWED_TITLE,
        "summary": "connection pool exhausted at checkout",
        "trigger": "connection pool exhausted at checkout",
        "steps": [],
        "resolution": "Raising the pool did not help.",
        "severity": "high",
        "scope": "TEAM",
        "project": PAYMENTS,
        "classifier": "llm",
        "base_confidence": 0.99,
        "confidence": 0.99,
        "members": members,
        "sessions": 9,
        "developers": 3,
        "first_seen": served.first_seen,
        "last_seen": served.last_seen,
        "status": "active",
        "fingerprint": "",
        "flaw": "the resolution repeats the failing action instead of saying what changed",
    }
    with library.db.write() as conn:
        library.append_event(
            conn, "pattern.consolidated", "patterns", {"patterns": [record], "dissolved": []}
        )


@pytest.fixture
def opened(library_dir: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    """The test library, opened in the test process to check what the server recorded."""
    with Library(library_dir, embedder=_embedder) as library:
        yield library


def server_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "LIBRARIAN_HOME": str(home / "library"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "PYTHONPATH": str(REPO),
    }


def server_command(library_dir: Path, *, after: bool = False) -> list[str]:
    """`librarian --library P mcp`, or (`after`) `librarian mcp --library P`."""
    if after:
        return ["-m", "app", "mcp", "--library", str(library_dir)]
    return ["-m", "app", "--library", str(library_dir), "mcp"]


def library_copy(library_dir: Path, target: Path, **config: str) -> Path:
    """A private copy of the module's library (sharing its model link), with `config` set."""
    shutil.copytree(library_dir, target, symlinks=True)
    with Library(target) as library:
        for key, value in config.items():
            library.config.set(key, value)
    return target


@asynccontextmanager
async def mcp_session(
    library_dir: Path, home: Path, errlog: Path, *, after: bool = False
) -> AsyncIterator[ClientSession]:
    """An initialised client session on a fresh `librarian mcp` subprocess."""
    params = StdioServerParameters(
        command=sys.executable,
        args=server_command(library_dir, after=after),
        env=server_env(home),
        cwd=REPO,
    )
    with errlog.open("w", encoding="utf-8") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


class Client:
    """A synchronous face on one MCP client session (its event loop runs in a thread)."""

    def __init__(self, portal: BlockingPortal, session: ClientSession, errlog: Path) -> None:
        self.portal = portal
        self.session = session
        self.errlog = errlog

    def tools(self) -> list[Tool]:
        return self.portal.call(self.session.list_tools).tools

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert isinstance(result, CallToolResult)
        return result

    def server_stderr(self) -> str:
        return self.errlog.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def client(
    library_dir: Path, home: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    """One `librarian mcp` server and client session, shared by the tests of this module."""
    errlog = tmp_path_factory.mktemp("mcp-server") / "stderr.txt"
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp_session(library_dir, home, errlog)) as session,
    ):
        yield Client(portal, session, errlog)


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def data_of(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict)
    # The text block carries the same JSON, for clients that ignore structured content.
    assert json.loads(text_of(result)) == data
    return data


def read_only(tool: Tool) -> bool | None:
    return tool.annotations.read_only_hint if tool.annotations else None


def test_lifecycle_literal_matches_the_store() -> None:
    assert get_args(LifecycleEvent) == AGENT_LIFECYCLE_EVENTS


def test_tools_are_listed_with_their_schemas(client: Client) -> None:
    tools = {t.name: t for t in client.tools()}
    assert set(tools) == TOOLS  # no status changes by default: `skill_event` is not listed
    for tool in tools.values():
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.annotations is not None
    assert tools["search_memory"].input_schema["required"] == ["query"]
    assert read_only(tools["search_memory"]) is True
    assert tools["record_skill_outcome"].input_schema["required"] == ["skill", "success"]
    assert read_only(tools["record_skill_outcome"]) is False
    assert tools["search_memory"].output_schema is not None
    assert tools["profile"].output_schema is None  # Markdown text


def test_memory_tools_answer_and_are_logged(client: Client, opened: Library) -> None:
    search = data_of(
        client.call("search_memory", {"query": "connection pool exhausted at checkout", "limit": 5})
    )
    assert 0 < len(search["hits"]) <= 5
    assert [h["rank"] for h in search["hits"]] == list(range(1, len(search["hits"]) + 1))
    assert {h["kind"] for h in search["hits"]} <= {"pattern", "node"}

    pitfalls = data_of(client.call("pitfalls", {"project": PAYMENTS}))
    assert pitfalls["project"] == PAYMENTS
    assert pitfalls["hits"]
    assert {h["pattern_kind"] for h in pitfalls["hits"]} == {"pitfall"}

    diagnose = data_of(
        client.call(
            "diagnose",
            {"problem": "alembic upgrade fails: multiple heads", "cwd": f"{PAYMENTS}/src"},
        )
    )
    assert diagnose["project"] == PAYMENTS  # mapped from the working directory
    assert {h["pattern_kind"] for h in diagnose["hits"]} <= {"pitfall", "strategy"}

    profile = client.call("profile", {"cwd": PAYMENTS})
    assert not profile.is_error
    assert text_of(profile).startswith(f"# Knowledge profile: {PAYMENTS}")
    assert "## Pitfalls, most severe first" in text_of(profile)

    # Logged as an agent's requests (`mcp.<tool>`): they count for graduation.
    logged = {r.tool: r for r in reversed(opened.retrievals(20))}  # the newest of each tool
    assert {"mcp.search", "mcp.pitfalls", "mcp.diagnose", "mcp.profile"} <= set(logged)
    assert logged["mcp.search"].query == "connection pool exhausted at checkout"
    assert [h[1] for h in logged["mcp.search"].hits] == [h["id"] for h in search["hits"]]
    assert [h[1] for h in logged["mcp.pitfalls"].hits] == [h["id"] for h in pitfalls["hits"]]
    assert [h[1] for h in logged["mcp.diagnose"].hits] == [h["id"] for h in diagnose["hits"]]
    assert logged["mcp.diagnose"].project == PAYMENTS
    assert logged["mcp.profile"].project == PAYMENTS
    assert "Traceback" not in client.server_stderr()


def test_a_pattern_below_the_bar_is_never_served(client: Client, opened: Library) -> None:
    answers = [
        client.call("search_memory", {"query": "connection pool exhausted at checkout"}),
        client.call("pitfalls", {"project": PAYMENTS}),
        client.call("pitfalls", {"query": "connection pool exhausted at checkout"}),
        client.call("diagnose", {"problem": "connection pool exhausted at checkout"}),
        client.call("profile", {"cwd": PAYMENTS}),
    ]
    for result in answers:
        assert not result.is_error, text_of(result)
        assert FLAWED not in text_of(result)
        assert FLAWED_TITLE not in text_of(result)
    assert data_of(answers[1])["hits"]  # the pitfalls that pass are still served
    assert opened.pattern(FLAWED).flaw  # in the library, with its reason


def test_skills_are_suggested_and_outcomes_recorded(client: Client, opened: Library) -> None:
    suggested = data_of(
        client.call("suggest_skills", {"context": "debug a flaky test", "limit": 3})
    )
    assert 0 < len(suggested["skills"]) <= 3
    skill = suggested["skills"][0]["name"]  # as an agent would: suggested, applied, judged
    logged = next(r for r in opened.retrievals(20) if r.tool == "mcp.suggest")
    assert logged.query == "debug a flaky test"
    assert [h[1] for h in logged.hits] == [s["name"] for s in suggested["skills"]]

    before = opened.last_seq()
    with pytest.raises(MCPError) as refused:  # not served without the config's consent
        client.call("skill_event", {"skill": skill, "event": "deprecated"})
    assert refused.value.code == INVALID_PARAMS
    assert opened.last_seq() == before
    assert opened.get_skill(skill).summary.status != "deprecated"
    outcome = data_of(
        client.call(
            "record_skill_outcome",
            {"skill": skill, "success": True, "session_id": "s-mcp", "detail": "it helped"},
        )
    )
    assert outcome["type"] == "skill.outcome_recorded"
    assert outcome["skill"] == skill
    assert outcome["success"] is True
    assert outcome["version"] == opened.get_skill(skill).summary.version_no
    assert outcome["seq"] > before

    with opened.db.read() as conn:
        mine = [e for e in iter_events(conn) if e.subject == f"skill:{skill}"]
    assert mine[-1].seq == outcome["seq"]
    assert mine[-1].payload["success"] is True
    assert mine[-1].payload["session_id"] == "s-mcp"
    assert mine[-1].payload["detail"] == "it helped"


def test_bad_input_is_an_error_result_and_the_server_keeps_going(
    client: Client, opened: Library
) -> None:
    skill = next(s.name for s in opened.list_skills() if s.status == "stable")
    last_seq = opened.last_seq()
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("search_memory", {"query": 5}, "query: Input should be a valid string"),
        ("search_memory", {}, "query: Field required"),
        ("search_memory", {"query": "   "}, "query is empty"),
        ("search_memory", {"query": "x", "limit": 0}, "limit"),
        ("search_memory", {"query": "x", "limit": "many"}, "limit"),
        ("diagnose", {"problem": ""}, "problem"),
        ("suggest_skills", {"context": ["a", "list"]}, "context"),
        ("record_skill_outcome", {"skill": "no-such-skill", "success": True}, "no skill named"),
        ("record_skill_outcome", {"skill": skill, "success": "sometimes"}, "success"),
        ("record_skill_outcome", {"skill": skill}, "success: Field required"),
        ("record_skill_outcome", {"skill": skill, "success": True, "version": 999}, "version 999"),
    ]
    for name, arguments, expected in bad:
        result = client.call(name, arguments)
        assert result.is_error, (name, arguments)
        assert expected in text_of(result), (name, arguments, text_of(result))
        assert "Traceback" not in text_of(result)
    assert opened.last_seq() == last_seq  # nothing was logged or recorded

    with pytest.raises(MCPError) as unknown:
        client.call("no_such_tool", {})
    assert unknown.value.code == INVALID_PARAMS

    still = data_of(client.call("search_memory", {"query": "failed migration"}))
    assert still["hits"]
    assert "Traceback" not in client.server_stderr()


def test_a_cwd_is_normalised_before_it_names_a_project(client: Client) -> None:
    inside = data_of(client.call("pitfalls", {"cwd": f"{PAYMENTS}//src/./api/"}))
    assert inside["project"] == PAYMENTS
    for cwd in (f"{PAYMENTS}/../../../../", f"{PAYMENTS}/..", "/", "//", "relative/path"):
        outside = data_of(client.call("pitfalls", {"cwd": cwd}))
        assert outside["project"] == "", cwd  # no project: nothing is scoped to one


def test_status_changes_only_when_the_config_allows_them(
    library_dir: Path, home: Path, tmp_path: Path
) -> None:
    allowed = library_copy(
        library_dir, tmp_path / "library", **{"mcp.allow_status_changes": "true"}
    )
    with Library(allowed) as library:
        skill = next(s.name for s in library.list_skills() if s.status == "stable")
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(
            mcp_session(allowed, home, tmp_path / "stderr.txt", after=True)
        ) as session,
    ):
        client = Client(portal, session, tmp_path / "stderr.txt")
        tools = {t.name: t for t in client.tools()}
        assert set(tools) == TOOLS | STATUS_TOOLS
        event = tools["skill_event"].input_schema["properties"]["event"]
        assert tuple(event["enum"]) == AGENT_LIFECYCLE_EVENTS
        assert read_only(tools["skill_event"]) is False
        applied = data_of(client.call("skill_event", {"skill": skill, "event": "applied"}))
        assert applied["type"] == "skill.applied"
        deprecated = data_of(
            client.call("skill_event", {"skill": skill, "event": "deprecated", "detail": "old"})
        )
        assert deprecated["seq"] > applied["seq"]
        for arguments, expected in [
            ({"skill": skill, "event": "exploded"}, "event: Input should be"),
            ({"skill": skill, "event": "outcome_recorded"}, "needs success"),
            ({"skill": "no-such-skill", "event": "applied"}, "no skill named"),
        ]:
            result = client.call("skill_event", arguments)
            assert result.is_error
            assert expected in text_of(result), (arguments, text_of(result))
    with Library(allowed) as library:
        assert library.get_skill(skill).summary.status == "deprecated"


def raw_session(
    library_dir: Path, home: Path, lines: list[bytes], *, after: bool = False
) -> list[dict[str, Any]]:
    """Pipe `lines` into a fresh server, close its stdin, and return every answer."""
    done = subprocess.run(
        [sys.executable, *server_command(library_dir, after=after)],
        input=b"".join(lines),
        capture_output=True,
        env={**os.environ, **server_env(home)},
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
    b'"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


def call_line(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": tool, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode() + b"\n"


def test_raw_malformed_lines_are_answered_and_requests_in_flight_finish(
    library_dir: Path, home: Path
) -> None:
    lines = [
        b"this is not json\n",
        b"\xff\xfe\x00 binary garbage\n",
        INITIALIZE,
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"not an object"}\n',
        b'{"jsonrpc":"2.0","id":"two","method":"tools/list","params":[1, 2]}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n',
        b'{"jsonrpc":"2.0","id":4,"method":"no/such/method"}\n',
        b'{"jsonrpc":"2.0","id":{"an":"object"},"method":"tools/list"}\n',
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}\n',
        b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}\n',
        b'{"jsonrpc":"2.0","id":6,"method":7}\n',
        b'[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]\n',
        b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"odd"}\n',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"theirs"}}\n',
        call_line(5, "diagnose", {"problem": "pods fail readiness checks after deploy"}),
    ]
    # Everything at once, then end of input: the answers must still all arrive. The server is
    # started as `librarian mcp --library P` (the library after the command).
    answers = raw_session(library_dir, home, lines, after=True)
    errors = [a["error"]["code"] for a in answers if a.get("id") is None]
    assert sorted(errors) == sorted([PARSE_ERROR] * 2 + [INVALID_REQUEST] * 4)
    by_id = {a["id"]: a for a in answers if a.get("id") is not None}
    assert set(by_id) == {1, 2, "two", 3, 4, 5, 6}
    assert by_id[1]["result"]["serverInfo"]["name"] == "skill-librarian"
    assert by_id[2]["error"]["code"] == INVALID_PARAMS  # answered with the request's own id
    assert by_id["two"]["error"]["code"] == INVALID_PARAMS
    assert {t["name"] for t in by_id[3]["result"]["tools"]} == TOOLS
    assert by_id[4]["error"]["code"] == -32601
    assert by_id[5]["result"].get("isError") is not True
    assert json.loads(by_id[5]["result"]["content"][0]["text"])["hits"]
    assert by_id[6]["error"]["code"] == INVALID_REQUEST
    assert len(answers) == 13  # the bad notification and the stray response get none


def test_repeated_reads_grow_the_log_per_kind_not_per_call(
    library_dir: Path, home: Path, tmp_path: Path
) -> None:
    """300 identical searches, 20 identical profiles and 30 varied searches: 32 retrieval
    events and one roll-up, with every call counted, and the log still replays exactly."""
    library = library_copy(library_dir, tmp_path / "library")
    with Library(library) as opened:
        start = opened.last_seq()
    identical = [
        call_line(10 + i, "search_memory", {"query": "pool exhausted"}) for i in range(300)
    ]
    profiles = [call_line(400 + i, "profile", {"cwd": PAYMENTS}) for i in range(20)]
    varied = [
        call_line(500 + i, "search_memory", {"query": f"migration step {i} failed"})
        for i in range(30)
    ]
    answers = raw_session(library, home, [INITIALIZE, *identical, *profiles, *varied])
    assert len(answers) == 1 + 350
    assert not any("error" in a or a["result"].get("isError") for a in answers)

    with Library(library) as opened, opened.db.read() as conn:
        added = [e for e in iter_events(conn, start)]
        calls = dict(
            conn.execute(
                "SELECT query, sum(calls) FROM retrievals WHERE seq > ? GROUP BY query", (start,)
            ).fetchall()
        )
    assert [e.type for e in added].count("retrieval.logged") == 1 + 1 + 30
    assert [e.type for e in added].count("retrieval.repeated") == 1
    assert len(added) == 33
    assert calls["pool exhausted"] == 300
    assert calls[PAYMENTS] == 20  # the profile's query is the project
    assert sum(calls.values()) == 350
    with Library(library) as opened:
        report = verify(opened)
    assert next(c for c in report.checks if c.name == "replay").ok


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_server_stopped_by_a_signal_writes_its_counted_repeats(
    library_dir: Path, home: Path, tmp_path: Path, stop: str
) -> None:
    """A client that stops the server with SIGTERM (or Ctrl-C) without closing its stdin: the
    repeats counted in memory are written before it exits, and it exits at once (it used to
    drop them on SIGTERM and hang on SIGINT until stdin closed)."""
    library = library_copy(library_dir, tmp_path / "library")
    server = subprocess.Popen(
        [sys.executable, *server_command(library)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **server_env(home)},
        cwd=REPO,
    )
    assert server.stdin is not None
    assert server.stdout is not None
    try:
        server.stdin.write(INITIALIZE)
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        for i in range(40):
            server.stdin.write(call_line(10 + i, "search_memory", {"query": "pool exhausted"}))
            server.stdin.flush()
            assert json.loads(server.stdout.readline())["id"] == 10 + i
        server.send_signal(getattr(signal, stop))
        assert server.wait(timeout=30) == 128 + getattr(signal, stop)
    finally:
        server.kill()
        server.wait()
        server.stdin.close()
        server.stdout.close()
        assert server.stderr is not None
        server.stderr.close()
    with Library(library) as opened, opened.db.read() as conn:
        (calls,) = conn.execute(
            "SELECT sum(calls) FROM retrievals WHERE query = 'pool exhausted'"
        ).fetchone()
    assert calls == 40
