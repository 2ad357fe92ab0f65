"""`forget`: text that got into the library can be erased for good, and the library still
proves itself. A customer's name (nothing `redact` could know is sensitive) goes through
ingest, review, consolidation and retrieval, then is forgotten: it is gone from every table,
the database file and its WAL, what agents and the CLI read; `verify` and `rebuild` hold;
re-ingesting the transcript does not bring it back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from store.content import text_digest
from store.db import Database
from store.events import append, check_chain
from store.forget import ForgetError
from store.library import Library
from store.migrations import MIGRATIONS
from store.models import ERASED, Pattern
from store.projections import store_blob
from store.sessions.review import ReviewError
from store.verify import rebuild, verify
from tests.store.test_ingest import Transcript

SECRET = "Quillfeather Biotech"


def story(folder: Path, session: str = "s-one") -> Transcript:
    """A debugging session that names the customer in a prompt, an error and a conclusion."""
    t = Transcript(folder / f"{session}.jsonl", session, "/work/payments")
    t.prompt(f"The {SECRET} integration tests fail with a pool timeout.")
    t.say("I think the pool is too small for the test workers. Let me check the settings.")
    t.tool(
        "Bash",
        "pytest tests/integration -x",
        f"FAILED for {SECRET}: TimeoutError: pool exhausted",
        is_error=True,
    )
    t.say(
        "That didn't work, same error. Let's try a different approach: close sessions in the"
        " fixture teardown."
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
        f"The root cause was that the {SECRET} fixtures in `tests/conftest.py` never closed"
        " their database session. Fixed: tests pass now."
    )
    return t


def learned(library: Library, tmp_path: Path) -> Transcript:
    """The story ingested, every node approved (one edited to name the customer again),
    consolidated, and searched for by name."""
    t = story(tmp_path / "projects")
    library.ingest([tmp_path / "projects"])
    pending = [n.node_id for n in library.nodes(status="pending")]
    library.review("approve", pending)
    library.consolidate()
    library.review("edit", [pending[0]], summary=f"Pool sizing for {SECRET} test workers")
    assert library.search_memory(f"{SECRET} pool timeout")  # the query is logged, too
    assert SECRET in everything(library)
    assert any(on_disk(library).values())
    return t


def everything(library: Library) -> str:
    """Every value of every table (and FTS shadow table), as text."""
    conn = library.db.conn
    parts: list[str] = []
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'"):
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            for value in row:
                if isinstance(value, bytes):
                    parts.append(value.decode("utf-8", errors="replace"))
                elif value is not None:
                    parts.append(str(value))
    return "\n".join(parts)


def on_disk(library: Library) -> dict[str, bool]:
    """For each database file, whether the secret's bytes are in it."""
    wanted = SECRET.encode("utf-8")
    folder = library.paths.db.parent
    return {
        path.name: wanted in path.read_bytes()
        for path in sorted(folder.glob(library.paths.db.name + "*"))
    }


def failing(library: Library) -> dict[str, list[str]]:
    return {c.name: c.problems for c in verify(library).checks if not c.ok}


def test_forgotten_text_is_gone_everywhere_and_the_library_still_verifies(
    make_library, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = make_library()
    learned(library, tmp_path)
    before = library.patterns()
    assert before
    assert any(SECRET in " ".join((p.title, p.summary, p.trigger, p.resolution)) for p in before)

    report = library.forget("text", SECRET, reason="a customer's name")

    assert report.seq
    assert report.scrubbed
    assert report.embeddings > 0
    assert SECRET not in everything(library)
    assert not any(on_disk(library).values()), on_disk(library)
    assert failing(library) == {}
    blobs = next(c for c in verify(library).checks if c.name == "blobs")
    assert f"{report.blobs} erased" in blobs.detail
    rebuild(library)
    assert failing(library) == {}
    assert SECRET not in everything(library)

    forgotten = library.nodes(status="forgotten")
    assert {n.node_id for n in forgotten} == set(report.plan.nodes)
    assert all(n.summary == n.evidence == ERASED for n in forgotten)
    assert all(n.reason == "a customer's name" for n in forgotten)
    assert all(p.pattern_id in report.plan.patterns for p in before)
    assert library.patterns() == []  # dissolved: nothing quoting the customer is served
    for hits in (
        library.search_memory("integration tests fail with a pool timeout"),
        library.pitfalls("pool exhausted"),
        library.diagnose("database session never closed"),
    ):
        assert all(SECRET not in json.dumps(h.__dict__, default=str) for h in hits)
    assert SECRET not in library.profile()
    context = library.node_context(library.node(report.plan.nodes[0]))
    assert any(m.text == ERASED for m in context)

    capsys.readouterr()
    root = str(library.paths.root)
    for argv in (
        ["nodes"],
        ["session", "s-one"],
        ["audit"],
        ["patterns", "--all"],
        ["retrievals"],
        ["forget", "text", SECRET, "--dry-run"],
    ):
        assert main(["--library", root, *argv]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out
    assert "forgotten" in out
    assert ERASED in out
    assert "nothing to forget: no text matches" in out


class Recalling:
    """A cold tier that finds the customer's error again in the transcript."""

    context_tokens = 200_000

    def count_tokens(self, text: str) -> int:
        return len(text) // 3 + 1

    def extract(self, system: str, window: str, max_nodes: int) -> list[dict[str, Any]]:
        evidence = f"FAILED for {SECRET}: TimeoutError: pool exhausted"
        if evidence not in window:
            return []
        return [{"type": "DEAD_END", "summary": f"{SECRET} pool", "evidence": evidence}]


def test_reingesting_keeps_forgotten_content_forgotten(make_library, tmp_path: Path) -> None:
    library = make_library()
    transcript = learned(library, tmp_path)
    library.forget("text", SECRET)
    kept = {n.node_id: n.status for n in library.nodes()}

    transcript.say("Later: the pool metrics dashboard shows steady usage now.")
    again = library.ingest([tmp_path / "projects"], llm=Recalling())

    assert again.ingested == 1
    assert again.kept_erased == 3  # the prompt, the error, the conclusion
    assert again.withheld == 1  # the LLM tier's new node quotes an erased message
    assert SECRET not in everything(library)
    after = {n.node_id: n.status for n in library.nodes()}
    assert all(after[n] == status for n, status in kept.items())  # forgotten stay forgotten
    assert failing(library) == {}

    library.forget("session", "s-one", reason="the whole session")
    messages = library.node_context(library.node(next(iter(kept))), radius=50)
    assert messages
    assert all(m.text == ERASED for m in messages)
    transcript.say(f"One more note for {SECRET}.")
    last = library.ingest([tmp_path / "projects"])
    assert last.kept_erased == len(messages)
    assert last.withheld == 0
    live = [
        r[0]
        for r in library.db.conn.execute(
            "SELECT text FROM session_messages WHERE session_id='s-one' AND text != ?", (ERASED,)
        )
    ]
    assert live == [f"One more note for {SECRET}."]  # only the new message: new content
    assert failing(library) == {}


def test_forgetting_a_node_takes_its_texts_patterns_and_duplicates(
    make_library, tmp_path: Path
) -> None:
    library = make_library()
    story(tmp_path / "projects", "s-one")
    story(tmp_path / "projects", "s-two")  # the same story again: its nodes merge into s-one's
    library.ingest([tmp_path / "projects"])
    dead_end = next(n for n in library.nodes(status="pending") if SECRET in n.summary)
    library.review("approve", [n.node_id for n in library.nodes(status="pending")])
    library.consolidate()
    library.review("edit", [dead_end.node_id], summary=f"Timeouts for {SECRET}")
    (pattern,) = library.patterns()
    duplicate = next(n for n in library.nodes(status="merged") if n.merged_into == dead_end.node_id)

    plan = library.forget_plan("node", dead_end.node_id)
    assert set(plan.nodes) == {dead_end.node_id, duplicate.node_id}
    assert plan.patterns == (pattern.pattern_id,)
    assert plan.sessions == ()
    assert {i.what for i in plan.items} >= {"summary", "evidence", "pattern"}
    with pytest.raises(ForgetError, match="no node"):
        library.forget_plan("node", "n_nope")

    library.forget("node", dead_end.node_id, reason="wrong and sensitive")

    gone = library.node(dead_end.node_id)
    assert (gone.status, gone.summary, gone.evidence) == ("forgotten", ERASED, ERASED)
    assert library.node(duplicate.node_id).status == "forgotten"
    trail = library.audit(node_id=dead_end.node_id)
    assert trail[0].action == "forgotten"
    assert trail[0].reason == "wrong and sensitive"
    assert all(SECRET not in json.dumps([e.before, e.after, e.reason]) for e in trail)
    assert library.patterns() == []
    assert library.patterns(statuses=("dissolved",))[0].title == ERASED
    # The transcript it quoted is kept (`with_messages` would take it too).
    assert any(SECRET in m.text for m in library.node_context(gone))
    with pytest.raises(ReviewError, match="forgotten"):
        library.review("approve", [dead_end.node_id])
    assert library.undo_review() == []  # the last batch touched a forgotten node
    assert failing(library) == {}
    again = library.consolidate()  # rebuilt from what is left, without the forgotten node
    assert dead_end.node_id not in {n for p in library.patterns() for n in _members(library, p)}
    assert again.nodes == len(library.nodes(status="approved"))


def _members(library: Library, pattern: Pattern) -> list[str]:
    return [n.node_id for n in library.pattern_nodes(pattern.pattern_id)]


def legacy_library(library: Library) -> None:
    """Events as schema 6 wrote them: every text inline, a session's messages in one blob."""
    rows = [
        [0, "/t/s1.jsonl", 1, 1, "user", "prompt", f"tests fail for {SECRET}", "t0", 0],
        [1, "/t/s1.jsonl", 2, 3, "assistant", "text", "the pool was too small", "t1", 0],
    ]
    node = {
        "session_id": "s1",
        "project": "/w",
        "file": "/t/s1.jsonl",
        "confidence": 0.6,
        "scope": "PROJECT",
        "tier": "warm",
        "strategy": "t",
        "developer": "dev",
        "edges_in": [],
    }
    with library.db.write() as conn:
        archive = store_blob(conn, json.dumps(rows))
        library.append_event(
            conn,
            "session.ingested",
            "session:s1",
            {
                "session_id": "s1",
                "project": "/w",
                "branch": "main",
                "client_version": "2",
                "started_at": "t0",
                "ended_at": "t1",
                "turns": 1,
                "tool_calls": 0,
                "errors": 0,
                "skills_used": [],
                "skipped": {},
                "developer": "dev",
                "messages_hash": archive,
                "files": [],
            },
        )
        for node_id, line, type_, text in (
            ("n_a", 1, "DEAD_END", f"tests fail for {SECRET}"),
            ("n_b", 2, "SOLUTION", "the pool was too small"),
        ):
            library.append_event(
                conn,
                "node.extracted",
                f"node:{node_id}",
                {
                    "node": {
                        **node,
                        "node_id": node_id,
                        "type": type_,
                        "summary": text,
                        "evidence": text,
                        "line_start": line,
                        "line_end": line,
                    }
                },
            )
        library.append_event(
            conn,
            "node.rejected",
            "node:n_b",
            {
                "node_id": "n_b",
                "before": {"status": "pending", "reason": ""},
                "after": {"status": "rejected", "reason": f"a duplicate, see {SECRET}"},
                "reason": f"a duplicate, see {SECRET}",
                "batch": "b1",
            },
        )
        library.append_event(
            conn,
            "retrieval.logged",
            "retrieval:search",
            {"tool": "search", "query": SECRET, "project": "", "session_id": "", "hits": []},
        )


def test_old_inline_events_are_redacted_in_place_and_the_chain_still_holds(
    make_library,
) -> None:
    library = make_library()
    legacy_library(library)
    assert failing(library) == {}

    plan = library.forget_plan("text", "quillfeather", ignore_case=True)
    assert plan.redactions == 4  # two node extractions, the rejection, the retrieval
    assert all(SECRET not in i.preview for i in plan.items)  # previews mask the match
    assert any("[match]" in i.preview for i in plan.items)
    report = library.forget("text", "quillfeather", ignore_case=True)

    assert report.redacted == 4
    assert SECRET not in everything(library)
    assert not any(on_disk(library).values())
    assert check_chain(library.db.conn) == []
    assert failing(library) == {}
    rebuild(library)
    assert failing(library) == {}
    assert library.node("n_b").status == "forgotten"  # it quoted the erased message
    assert [m.text for m in library.node_context(library.node("n_a"))] == [
        ERASED,
        "the pool was too small",  # its neighbour survives the archive's rewrite
    ]
    conn = library.db.conn
    redacted = json.loads(conn.execute("SELECT payload FROM events WHERE seq=2").fetchone()[0])
    assert redacted["node"]["summary"] == {
        "blob": text_digest("node:n_a", f"tests fail for {SECRET}")
    }

    # Only `forget` may change an event, and only through the chain's own record of it.
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE events SET payload='{}' WHERE seq=1")
    conn.execute("UPDATE events SET payload=? WHERE seq=2", (json.dumps({"node": {}}),))
    assert any("event 2" in p for p in check_chain(conn))


def test_verify_accepts_erased_blobs_and_still_catches_damage(make_library, tmp_path: Path) -> None:
    library = make_library()
    story(tmp_path / "projects")
    library.ingest([tmp_path / "projects"])
    library.forget("text", SECRET)
    assert failing(library) == {}
    conn = library.db.conn
    live = conn.execute("SELECT hash FROM blobs WHERE erased_at='' ORDER BY hash").fetchall()

    conn.execute("UPDATE blobs SET text='', erased_at='now' WHERE hash=?", (live[0][0],))
    assert any("without a `blob.erased` event" in p for p in failing(library)["blobs"])
    conn.execute("DELETE FROM blobs WHERE hash=?", (live[0][0],))
    assert any("is missing" in p for p in failing(library)["blobs"])
    conn.execute("UPDATE blobs SET text = text || 'x' WHERE hash=?", (live[1][0],))
    assert any("does not match its hash" in p for p in failing(library)["blobs"])


def test_forget_refuses_what_it_cannot_do_safely(make_library, tmp_path: Path) -> None:
    library = make_library()
    story(tmp_path / "projects")
    library.ingest([tmp_path / "projects"])
    events = library.last_seq()
    for text, regex in (("", False), (".*", True), ("x?", True), ("(", True)):
        with pytest.raises(ForgetError):
            library.forget_plan("text", text, regex=regex)
    with pytest.raises(ForgetError, match="no session"):
        library.forget("session", "s-nope")
    assert library.forget_plan("text", SECRET).nodes  # a plan changes nothing
    assert library.forget("text", "no such words anywhere").seq == 0
    assert library.last_seq() == events
    assert SECRET in everything(library)


def test_a_schema_6_library_migrates_and_its_events_stay_unchangeable(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    old = sqlite3.connect(path, isolation_level=None)
    for number, script in enumerate(MIGRATIONS[:6], start=1):
        old.executescript(script)
        old.execute(f"PRAGMA user_version = {number}")
    append(  # an event with no projection: a schema-6 table cannot take today's rows
        old,
        "skill.revised",
        "skill:a",
        {"skill_id": 1, "reason": "edited by hand"},
        "me",
    )
    old.execute("INSERT INTO blobs(hash, text) VALUES ('h', 'kept')")
    old.close()

    db = Database(path)
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 15
    assert [
        tuple(r) for r in db.conn.execute("SELECT text, erased_at, replaced_by FROM blobs")
    ] == [("kept", "", "")]
    assert check_chain(db.conn) == []
    for change in ("payload='{}'", "actor='mallory'"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.conn.execute(f"UPDATE events SET {change}")
    db.close()
