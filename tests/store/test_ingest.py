"""Ingest end to end through the real library: sessions, nodes, dedup, idempotency, review,
audit, the spool worker, and hostile files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from store import hooks
from store.library import Library
from store.sessions.review import ReviewError
from store.verify import verify

SECRET = "AKIA" + "Q7XZ3MB2K9TR4WLE"


class Transcript:
    """Writes Claude Code-shaped JSONL records (one session) line by line."""

    def __init__(
        self, path: Path, session: str, cwd: str, branch: str = "main", agent: str = ""
    ) -> None:
        """`agent`: the records are a subagent's thread (`isSidechain`, `agentId`)."""
        self.path, self.session, self.cwd, self.branch = path, session, cwd, branch
        self.agent = agent
        self.count = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _envelope(self, kind: str) -> dict[str, Any]:
        self.count += 1
        record = {
            "type": kind,
            "uuid": f"{self.agent or self.session}-{self.count}",
            "parentUuid": None,
            "sessionId": self.session,
            "cwd": self.cwd,
            "gitBranch": self.branch,
            "version": "2.1.39",
            "userType": "external",
            "isSidechain": bool(self.agent),
            "timestamp": f"2026-10-2{self.count % 9}T10:{self.count % 60:02d}:00.000Z",
        }
        if self.agent:
            record["agentId"] = self.agent
        return record

    def _write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def prompt(self, text: str) -> Transcript:
        self._write({**self._envelope("user"), "message": {"role": "user", "content": text}})
        return self

    def say(self, text: str) -> Transcript:
        record = self._envelope("assistant")
        record["message"] = {
            "id": f"msg-{self.count}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        }
        self._write(record)
        return self

    def tool(
        self, name: str, command: str, result: str, is_error: bool = False, **inputs: str
    ) -> Transcript:
        tool_id = self.call(name, **(inputs or {"command": command}))
        return self.answer(tool_id, result, is_error)

    def call(self, name: str, **arguments: str) -> str:
        """An assistant line calling `name`; returns the call's id."""
        call = self._envelope("assistant")
        tool_id = f"toolu_{self.agent}{self.count}"
        call["message"] = {
            "id": f"msg-{self.agent}{self.count}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}],
        }
        self._write(call)
        return tool_id

    def relay(self, sub: Transcript, task_id: str) -> Transcript:
        """`sub`'s records copied into this file as `agent_progress` records, the way some
        Claude Code versions carry a subagent (each record's message whole, with its uuid)."""
        for line in sub.path.read_text(encoding="utf-8").splitlines():
            record = self._envelope("progress")
            record["data"] = {
                "type": "agent_progress",
                "agentId": sub.agent,
                "prompt": "",
                "message": json.loads(line),
            }
            record.update(toolUseID=f"agent_msg_{self.count}", parentToolUseID=task_id)
            self._write(record)
        return self

    def answer(self, tool_id: str, result: str, is_error: bool = False) -> Transcript:
        answer = self._envelope("user")
        answer["message"] = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": result,
                    "is_error": is_error,
                }
            ],
        }
        self._write(answer)
        return self


def debugging_session(
    folder: Path, session: str = "s-one", cwd: str = "/work/payments", branch: str = "fix/pool"
) -> Transcript:
    """A failing test run, what was found, the edit that fixed it, the run that passed."""
    t = Transcript(folder / f"{session}.jsonl", session, cwd, branch)
    t.prompt("The integration tests fail with a connection pool timeout under load.")
    t.say("I think the pool is too small for the test workers. Let me check the settings.")
    t.tool(
        "Bash",
        "pytest tests/integration -x",
        "ResourceWarning: unclosed session in fixture 'db' (tests/conftest.py:14)\n"
        f"FAILED tests/integration/test_pay.py - TimeoutError: pool exhausted\nenv: {SECRET}",
        is_error=True,
    )
    t.say("I found that `pool_size=5` in `tests/settings.py` is shared by all 8 xdist workers.")
    t.say(
        "That didn't work, same error. Let's try a different approach: instead of raising "
        "the pool size, close sessions in the fixture teardown."
    )
    t.tool(
        "Edit",
        "",
        "The file /work/payments/tests/conftest.py has been updated.",
        file_path="/work/payments/tests/conftest.py",
        old_string="    yield session",
        new_string="    yield session\n    session.close()",
    )
    t.tool("Bash", "pytest tests/integration -x", "42 passed in 3.1s")
    t.say(
        "The root cause was that the `db` fixture in `tests/conftest.py` never closed its"
        " session. Fixed: tests pass now."
    )
    return t


AGENT = "a5f0c2e"


def delegated_session(folder: Path, subagent_file: bool) -> Transcript:
    """A session whose subagent hits a failing test run and fixes it. The subagent's records
    are relayed into the main file as `agent_progress` records; its own file
    (`<session>/subagents/agent-<id>.jsonl`) is kept only when `subagent_file`."""
    main = Transcript(folder / "s-relay.jsonl", "s-relay", "/work/shop")
    sub_path = folder / "s-relay" / "subagents" / f"agent-{AGENT}.jsonl"
    sub = Transcript(sub_path, "s-relay", "/work/shop", agent=AGENT)
    sub.prompt("Find out why the cart tests fail and fix it.")
    sub.tool(
        "Bash",
        "npm test -- cart",
        "FAIL src/cart.test.ts\n  TypeError: discount is not a function\nExit code 1",
        is_error=True,
    )
    sub.tool(
        "Edit",
        "",
        "The file /work/shop/src/cart.ts has been updated.",
        file_path="/work/shop/src/cart.ts",
        old_string="import discount from './discount'",
        new_string="import { discount } from './discount'",
    )
    sub.tool("Bash", "npm test -- cart", "PASS src/cart.test.ts\nTests: 12 passed")
    sub.say("The root cause was a default import of `discount` in `src/cart.ts`; fixed.")
    main.prompt("The cart tests fail. Send a subagent to find out why.")
    task_id = main.call("Task", description="Fix cart tests", prompt="Find out why…")
    main.relay(sub, task_id)
    main.answer(task_id, "Fixed: `src/cart.ts` now imports `discount` by name.")
    main.say("The subagent fixed the import in `src/cart.ts`.")
    if not subagent_file:
        sub.path.unlink()
    return main


def archived(library: Library, session: str) -> list[tuple[str, int, int]]:
    rows = library.db.conn.execute(
        "SELECT file, line_start, line_end FROM session_messages WHERE session_id=? ORDER BY idx",
        (session,),
    ).fetchall()
    return [tuple(r) for r in rows]


def test_subagent_only_in_progress_records_is_ingested(library: Library, tmp_path: Path) -> None:
    delegated_session(tmp_path / "p", subagent_file=False)
    library.ingest([tmp_path / "p"])
    session = library.session("s-relay")
    assert (session.turns, session.tool_calls, session.errors) == (1, 4, 1)
    assert ("s-relay.jsonl", 3, 3) in archived(library, "s-relay")  # the first relayed line
    nodes, edges = library.session_graph("s-relay")
    pending = {n.type: n for n in nodes if n.status == "pending" and n.tier == "warm"}
    dead_end, solution = pending["DEAD_END"], pending["SOLUTION"]
    assert "discount is not a function" in dead_end.evidence
    relayed = range(3, 3 + 8)  # the subagent's eight records, as progress lines
    for node in (dead_end, solution):
        assert node.file == "s-relay.jsonl"
        assert node.line_start in relayed
        assert node.line_end in relayed
    assert (dead_end.node_id, solution.node_id, "resolved") in {
        (e.source, e.target, e.type) for e in edges
    }
    before = events(library)
    assert library.ingest([tmp_path / "p"]).unchanged == 1
    assert events(library) == before
    assert verify(library).ok


def test_subagent_file_and_progress_copies_ingest_once(library: Library, tmp_path: Path) -> None:
    delegated_session(tmp_path / "p", subagent_file=True)
    library.ingest([tmp_path / "p"])
    label = f"s-relay/subagents/agent-{AGENT}.jsonl"
    messages = archived(library, "s-relay")
    assert [m[0] for m in messages] == ["s-relay.jsonl"] * 4 + [label] * 8
    session = library.session("s-relay")
    assert (session.tool_calls, session.errors) == (4, 1)
    assert session.skipped == {"agent_progress:in_subagent_file": 8}  # the copies, told apart
    nodes, _ = library.session_graph("s-relay")
    dead_ends = [n for n in nodes if n.type == "DEAD_END" and n.status == "pending"]
    assert [n.file for n in dead_ends] == [label]
    relayed = range(3, 3 + 8)
    assert not [n for n in nodes if n.file == "s-relay.jsonl" and n.line_start in relayed]
    assert verify(library).ok


def events(library: Library) -> int:
    return int(library.db.conn.execute("SELECT count(*) FROM events").fetchone()[0])


@pytest.fixture
def library(make_library) -> Library:
    lib: Library = make_library()
    return lib


def test_ingest_records_session_nodes_edges(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "projects" / "-work-misleading-name")
    report = library.ingest([tmp_path / "projects"])
    assert (report.files, report.ingested, len(report.failed)) == (1, 1, 0)
    session = library.session("s-one")
    assert session.project == "/work/payments"  # from cwd, not the folder name
    assert session.branch == "fix/pool"
    assert session.errors == 1
    nodes, edges = library.session_graph("s-one")
    pending = {n.type for n in nodes if n.status == "pending"}
    assert {"DEAD_END", "SOLUTION", "DISCOVERY"} <= pending
    assert all(n.status in ("pending", "suppressed") and n.scope == "PROJECT" for n in nodes)
    kept_out = [n for n in nodes if n.status == "suppressed"]
    assert kept_out  # never lost...
    assert all(n.suppressed_reason for n in kept_out)  # ...and each says why
    assert any(e.type == "resolved" for e in edges)
    assert report.nodes_added == len(nodes)
    assert verify(library).ok


def test_secrets_are_redacted_in_nodes_and_archive(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    stored = library.db.conn.execute(
        "SELECT group_concat(evidence || summary, ' ') FROM nodes"
    ).fetchone()[0]
    archive = library.db.conn.execute(
        "SELECT group_concat(text, ' ') FROM session_messages"
    ).fetchone()[0]
    assert SECRET not in stored
    assert SECRET not in archive
    assert "pool exhausted" in archive


def test_reingest_unchanged_writes_nothing(library: Library, tmp_path: Path) -> None:
    t = debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    before = events(library)
    again = library.ingest([tmp_path / "p"])
    assert (again.ingested, again.unchanged) == (0, 1)
    os.utime(t.path, ns=(1, 1))  # touched, same content: still unchanged
    assert library.ingest([tmp_path / "p"]).unchanged == 1
    assert events(library) == before


def test_grown_transcript_adds_only_new_nodes(library: Library, tmp_path: Path) -> None:
    t = debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    first = {n.node_id: n for n in library.nodes()}
    t.say("I suspect the retry decorator also leaks connections. Let me check the decorator.")
    grown = library.ingest([tmp_path / "p"])
    assert grown.ingested == 1
    after = {n.node_id: n for n in library.nodes()}
    assert set(first) <= set(after)
    assert all(after[i] == first[i] for i in first)  # nothing already stored changed
    assert any(
        n.type == "HYPOTHESIS" and "decorator" in n.evidence
        for i, n in after.items()
        if i not in first
    )
    assert library.session("s-one").turns == 1


def test_dedup_merges_within_a_project_only(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "p", "s-one")
    debugging_session(tmp_path / "p", "s-two")
    debugging_session(tmp_path / "p", "s-three", cwd="/work/other")
    report = library.ingest([tmp_path / "p"])
    assert report.nodes_merged > 0
    merged = library.nodes(status="merged")
    assert merged
    assert all(m.merged_into and m.project == "/work/payments" for m in merged)
    winners = {library.node(m.merged_into).project for m in merged}
    assert winners == {"/work/payments"}
    assert library.nodes(project="/work/other")  # the other project kept its own copies
    merged_event = library.db.conn.execute(
        "SELECT payload FROM events WHERE type='node.merged' LIMIT 1"
    ).fetchone()[0]
    assert {"into", "merged"} <= set(json.loads(merged_event))
    assert verify(library).ok


def test_review_decisions_are_audited_and_undoable(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    # three pending nodes, then the suppressed ones (a reviewer may decide those too)
    pending = [n.node_id for n in library.nodes(status="pending")]
    ids = pending + [n.node_id for n in library.nodes(status="suppressed")]
    approved = library.review("approve", ids[:2])
    assert {n.status for n in approved} == {"approved"}
    assert all(n.decided_by == library.actor for n in approved)
    rejected = library.review("reject", [ids[2]], reason="too vague")[0]
    assert (rejected.status, rejected.reason) == ("rejected", "too vague")
    edited = library.review("edit", [ids[3]], summary="  The fixture   leaked sessions. ")[0]
    assert edited.summary == "The fixture leaked sessions."
    assert library.review("scope", [ids[3]])[0].scope == "TEAM"
    assert library.review("scope", [ids[3]], scope="PROJECT")[0].scope == "PROJECT"
    audit = library.audit()
    assert [a.action for a in audit[:2]] == ["rescoped", "rescoped"]
    assert audit[-1].before == {"status": "pending", "reason": ""}
    assert audit[-1].after == {"status": "approved", "reason": ""}
    library.undo_review()  # the last scope change
    assert library.node(ids[3]).scope == "TEAM"
    library.undo_review()
    library.undo_review()  # edit undone
    assert library.node(ids[3]).summary != "The fixture leaked sessions."
    library.undo_review()  # reject undone
    assert library.node(ids[2]).status == "pending"
    library.undo_review()  # the two approvals were one batch
    assert {library.node(i).status for i in ids[:2]} == {"pending"}
    assert library.node(ids[0]).decided_by == ""
    counts = library.queue_counts()
    assert counts.pending == len(pending)
    assert library.node(ids[3]).status == "suppressed"  # back below the bar
    assert verify(library).ok


def test_review_errors_are_clear(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    node = library.nodes(status="pending")[0]
    with pytest.raises(ReviewError, match="no node 'n_nope'"):
        library.review("approve", [node.node_id, "n_nope"])
    assert library.node(node.node_id).status == "pending"  # all or nothing
    with pytest.raises(ReviewError, match="non-empty summary"):
        library.review("edit", [node.node_id], summary="   ")
    with pytest.raises(ReviewError, match="unknown action"):
        library.review("delete", [node.node_id])


def test_context_shows_the_messages_around_the_evidence(library: Library, tmp_path: Path) -> None:
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    dead_end = library.nodes(type_="DEAD_END")[0]
    around = library.node_context(dead_end, radius=2)
    assert any(m.in_range for m in around)
    assert len(around) <= 5 + (dead_end.line_end - dead_end.line_start)


def test_spool_worker_ingests_what_the_hook_queued(library: Library, tmp_path: Path) -> None:
    t = debugging_session(tmp_path / "p")
    hooks.enqueue(library.paths.spool, json.dumps({"transcript_path": str(t.path)}), "stop")
    hooks.enqueue(library.paths.spool, json.dumps({"transcript_path": str(t.path)}), "stop")
    hooks.enqueue(library.paths.spool, json.dumps({"transcript_path": "/gone.jsonl"}), "stop")
    report = library.drain_spool()
    assert (report.sessions, report.ingested, report.failed) == (2, 1, 1)
    assert hooks.pending_count(library.paths.spool) == 0
    assert library.session("s-one").turns == 1
    with hooks.worker_lock(library.paths.spool):
        assert library.drain_spool().busy


def test_hostile_files_are_reported_and_the_rest_ingests(library: Library, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    debugging_session(folder)
    (folder / "binary.jsonl").write_bytes(b"\x00\x01\x02" * 1000)
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "garbage.jsonl").write_text('"a string"\n7\n[1]\nnull\n{"type": null}\n')
    before = verify(library)
    report = library.ingest([folder])
    assert report.ingested == 1
    assert {Path(f.path).name: f.code for f in report.failed} == {
        "binary.jsonl": "binary",
        "empty.jsonl": "empty",
        "garbage.jsonl": "no_messages",
    }
    assert before.ok
    assert verify(library).ok


def ingest_events(library: Library, session: str) -> int:
    return int(
        library.db.conn.execute(
            "SELECT count(*) FROM events WHERE type='session.ingested' AND subject=?",
            (f"session:{session}",),
        ).fetchone()[0]
    )


def test_one_session_in_two_files_ingests_each_file_once(library: Library, tmp_path: Path) -> None:
    """A transcript copied into another project folder keeps its `sessionId`: both files are
    sources of one session, each recorded with its own hash and label, each ingested once."""
    first = debugging_session(tmp_path / "p" / "a", "shared")
    second = Transcript(tmp_path / "p" / "b" / "shared.jsonl", "shared", "/work/payments")
    second.prompt("The nightly export job hangs after the schema migration.")
    second.say("I think the export holds a lock that the migration also takes.")
    reports = [library.ingest([tmp_path / "p"]) for _ in range(3)]
    assert [(r.files, r.ingested, r.unchanged) for r in reports] == [
        (2, 2, 0),
        (2, 0, 2),
        (2, 0, 2),
    ]
    assert ingest_events(library, "shared") == 2
    rows = library.db.conn.execute(
        "SELECT path, source, label FROM session_files WHERE session_id='shared' ORDER BY path"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        (str(first.path), str(first.path), "shared.jsonl"),  # labelled as when read alone
        (str(second.path), str(second.path), "b/shared.jsonl"),
    ]
    files = {r[0] for r in library.db.conn.execute("SELECT file FROM session_messages")}
    assert files == {"shared.jsonl", "b/shared.jsonl"}
    before = {n.node_id: n for n in library.nodes()}
    assert {n.file for n in before.values()} == {"shared.jsonl", "b/shared.jsonl"}
    dead_end = library.nodes(type_="DEAD_END")[0]
    assert any(m.in_range for m in library.node_context(dead_end, radius=2))

    second.say("Let me check which transaction holds the lock during the export.")
    grown = library.ingest([tmp_path / "p"])
    assert (grown.ingested, grown.unchanged) == (1, 1)
    after = {n.node_id: n for n in library.nodes()}
    assert set(before) <= set(after)
    assert all(after[i] == before[i] for i in before)  # nothing already stored changed
    assert grown.nodes_merged == 0
    assert library.ingest([tmp_path / "p"]).ingested == 0
    assert ingest_events(library, "shared") == 3
    assert verify(library).ok


def test_migration_7_fills_sources_and_labels_as_a_replay_does(tmp_path: Path) -> None:
    """Rows written before schema 7 get the source and label the projection gives events
    without them (so `verify`'s replay still matches)."""
    import sqlite3

    from store.migrations import MIGRATIONS, _statements, migrate
    from store.sessions.projections import _file_row

    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:6], start=1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    main = "/home/me/.claude/projects/-w/s1.jsonl"
    files = [
        {"path": path, "size": 1, "mtime_ns": 2, "sha256": "x"}
        for path in (main, "/home/me/.claude/projects/-w/s1/subagents/agent-a.jsonl")
    ]
    conn.execute(
        "INSERT INTO events(seq, ts, type, actor, subject, payload, prev_hash, hash)"
        " VALUES (1, 't', 'session.ingested', 'me', 'session:s1', ?, '', 'h')",
        (json.dumps({"session_id": "s1", "files": files}),),
    )
    conn.executemany(
        "INSERT INTO session_files(session_id, path, size, mtime_ns, sha256) VALUES (?,?,?,?,?)",
        [("s1", f["path"], 1, 2, "x") for f in files],
    )
    migrate(conn)
    rows = conn.execute(
        "SELECT path, size, mtime_ns, sha256, source, label FROM session_files ORDER BY path"
    ).fetchall()
    assert rows == sorted(_file_row(f, main) for f in files)
    assert [r[5] for r in rows] == ["s1.jsonl", "s1/subagents/agent-a.jsonl"]


def test_below_the_bar_is_kept_out_of_the_queue_and_can_be_promoted(
    library: Library, tmp_path: Path
) -> None:
    """Suppressed nodes are stored with their reason, never pending, never consolidated; a
    reviewer can promote one (audited, undoable), and replay rebuilds all of it."""
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    kept_out = library.nodes(status="suppressed")
    assert kept_out
    assert {n.node_id for n in kept_out}.isdisjoint(
        n.node_id for n in library.nodes(status="pending")
    )
    narration = next(n for n in kept_out if n.summary.startswith("Let me check"))
    assert narration.suppressed_reason == "narration of intent, not a finding"
    library.review("approve", [n.node_id for n in library.nodes(status="pending")])
    assert library.consolidate().nodes == len(library.nodes(status="approved"))
    (promoted,) = library.review("unsuppress", [narration.node_id])
    assert promoted.status == "pending"
    assert library.audit(node_id=narration.node_id)[0].action == "unsuppressed"
    with pytest.raises(ReviewError, match="not suppressed"):
        library.review("unsuppress", [narration.node_id])
    library.undo_review()
    assert library.node(narration.node_id).status == "suppressed"
    assert verify(library).ok


def test_nodes_of_different_types_never_merge_as_duplicates(
    library: Library, tmp_path: Path
) -> None:
    """A solution names the command its dead end named: two lessons, not one."""
    debugging_session(tmp_path / "p")
    library.ingest([tmp_path / "p"])
    dead = library.nodes(type_="DEAD_END", status="pending")
    fix = library.nodes(type_="SOLUTION", status="pending")
    assert [n.summary.split(" fails ")[0] for n in dead] == ["`pytest tests/integration -x`"]
    assert [n.summary.split(" succeeds ")[0] for n in fix] == ["`pytest tests/integration -x`"]
    assert library.nodes(status="merged") == []
