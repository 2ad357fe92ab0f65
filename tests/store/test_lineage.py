"""Lineage on real libraries: versions and diffs after a SKILL.md changes, the status history
with from → to (also for events written before "from" was recorded), a graduated skill's
provenance end to end (sessions → nodes → pattern → draft → skill), events paging, name
collisions, and unknown skills or versions."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from store.errors import LibrarianError
from store.library import Library
from store.lifecycle.lineage import MAX_DIFF_LINES, LineageError
from store.projections import store_blob
from store.verify import verify
from tests.store.conftest import write_skill
from tests.store.test_patterns import pitfall_of, pool_library


@pytest.fixture
def lib(make_library: Callable[..., Library]) -> Library:
    return make_library()


@pytest.fixture
def root(lib: Library, tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    write_skill(folder, "deploy", "Deploy the API with a canary.", body="Step one.\nStep two.\n")
    write_skill(folder, "rollback", "Roll the API back.")
    lib.scan([folder])
    return folder


def add_session(
    library: Library, session_id: str, started: str, skills: list[str], prompt: str = ""
) -> None:
    """A session as ingest records it, with one user prompt and the skills it used."""
    with library.db.write() as conn:
        messages = [[0, f"{session_id}.jsonl", 1, 1, "user", "prompt", prompt, started, 0]]
        digest = store_blob(conn, json.dumps(messages if prompt else []))
        library.append_event(
            conn,
            "session.ingested",
            f"session:{session_id}",
            {
                "session_id": session_id,
                "project": "/w/api",
                "branch": "main",
                "client_version": "2.1",
                "started_at": started,
                "ended_at": started,
                "turns": 1,
                "tool_calls": 0,
                "errors": 0,
                "skills_used": skills,
                "skipped": {},
                "developer": "dev",
                "messages_hash": digest,
                "files": [],
            },
        )


# -- versions and diffs ---------------------------------------------------------------------


def test_a_changed_skill_md_is_a_new_version_with_a_diff(lib: Library, root: Path) -> None:
    write_skill(
        root, "deploy", "Deploy the API with a canary.", body="Step one.\nStep 2, checked.\n"
    )
    report = lib.scan([root])
    assert report.changed == 1
    found = lib.lineage("deploy")
    assert [v.version_no for v in found.versions] == [2, 1]  # newest first
    newest, first = found.versions
    assert (newest.event, first.event) == ("skill.changed", "skill.installed")
    assert newest.content_hash != first.content_hash
    assert newest.statuses == ("stable",)
    assert newest.description == "Deploy the API with a canary."
    diff = lib.version_diff("deploy", 1, 2)
    lines = diff.splitlines()
    assert lines[:2] == ["--- deploy v1", "+++ deploy v2"]
    assert "-Step two." in lines
    assert "+Step 2, checked." in lines
    assert " Step one." in lines  # context
    whole = lib.version_diff("deploy", 0, 1).splitlines()
    assert whole[0] == "--- /dev/null"
    assert "+Step two." in whole
    assert not [line for line in whole[3:] if not line.startswith("+")]
    assert lib.version_diff("deploy", 2, 2) == ""
    with pytest.raises(LineageError, match="no version 7"):
        lib.version_diff("deploy", 1, 7)
    assert verify(lib).ok


def test_long_diffs_are_cut_and_counted(lib: Library, root: Path) -> None:
    write_skill(
        root,
        "deploy",
        "Deploy the API with a canary.",
        body="".join(f"line {i}\n" for i in range(1000)),
    )
    lib.scan([root])
    lines = lib.version_diff("deploy", 1, 2).splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    more = int(lines[-1].split()[1])
    assert lines[-1] == f"… {more} more lines"
    # 1,000 added lines, 2 removed, 2 file headers, 1 hunk header, a few context lines
    assert MAX_DIFF_LINES + more in range(1005, 1015)
    assert lines[-2].startswith("+line ")


# -- status history -------------------------------------------------------------------------


def test_status_history_has_from_and_to_with_actor_reason_and_alert(
    lib: Library, root: Path
) -> None:
    lib.change_status("deploy", "skill.deprecated", "7 of 10 runs failed", alert="drifting")
    lib.change_status("deploy", "skill.promoted", "repaired the canary check")
    lib.change_status("deploy", "skill.retired", "replaced by rollback")
    lib.change_status("deploy", "skill.proposed", "fixed again")
    found = lib.lineage("deploy")
    moves = [(c.event, c.from_status, c.to_status) for c in reversed(found.history)]
    assert moves == [
        ("skill.installed", "", "stable"),
        ("skill.deprecated", "stable", "deprecated"),
        ("skill.promoted", "deprecated", "stable"),
        ("skill.retired", "stable", "retired"),
        ("skill.proposed", "retired", "proposed"),
    ]
    drift = found.history[3]
    assert drift.alert == "drifting"
    assert drift.reason == "7 of 10 runs failed"
    assert drift.actor == lib.actor
    assert drift.version_no == 1
    assert found.history[0].reason == "fixed again"
    assert found.history[-1].reason.startswith("v1 installed from ")
    assert found.status == "proposed"
    assert found.versions[0].statuses == ("stable", "deprecated", "stable", "retired", "proposed")


def test_from_is_walked_for_events_written_without_it(lib: Library, root: Path) -> None:
    sid = lib.get_skill("rollback").summary.skill_id
    with lib.db.write() as conn:  # as older versions of the librarian wrote them
        lib.append_event(conn, "skill.deprecated", "skill:rollback", {"skill_id": sid})
        lib.append_event(
            conn, "skill.validated", "skill:rollback", {"skill_id": sid, "reason": "checked"}
        )
    history = lib.lineage("rollback").history
    assert [(c.event, c.from_status, c.to_status) for c in history[:2]] == [
        ("skill.validated", "deprecated", "deprecated"),
        ("skill.deprecated", "stable", "deprecated"),
    ]


def test_an_uninstalled_skill_keeps_its_lineage(lib: Library, root: Path) -> None:
    shutil.rmtree(root / "rollback")
    lib.scan([root])
    found = lib.lineage("rollback")
    assert found.status == "uninstalled"
    assert (found.history[0].from_status, found.history[0].to_status) == (
        "stable",
        "uninstalled",
    )
    assert found.versions[0].statuses == ("stable", "uninstalled")


# -- provenance -----------------------------------------------------------------------------


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_a_graduated_skill_leads_back_to_its_pattern_nodes_and_sessions(
    lib: Library, tmp_path: Path
) -> None:
    pool_library(lib)
    lib.consolidate()
    pattern = pitfall_of(lib)
    lib.retrieval_log.channel = "mcp"  # an agent asks: graduation counts only its requests
    lib.diagnose("requests time out waiting for a pooled database connection")
    draft = lib.draft(pattern.pattern_id)
    lib.approve_draft(draft.draft_id, tmp_path / "graduated")

    found = lib.lineage(draft.name)
    p = found.provenance
    assert p.origin == "graduated"
    assert p.pattern is not None
    assert p.pattern.pattern_id == pattern.pattern_id
    assert p.pattern.status == "graduated"
    assert p.draft is not None
    assert (p.draft.draft_id, p.draft.status) == (draft.draft_id, "approved")
    assert p.draft.decided_by == lib.actor
    members = {n.node_id: n.session_id for n in lib.pattern_nodes(pattern.pattern_id)}
    assert [s.session_id for s in p.sessions] == sorted(set(members.values()))  # by start
    chained = {n.node_id: s.session_id for s in p.sessions for n in s.nodes}
    assert chained == members
    assert all(n.status == "approved" for s in p.sessions for n in s.nodes)
    assert p.missing_nodes == ()
    assert p.metadata["librarian-pattern"] == pattern.pattern_id
    assert set(p.metadata["librarian-nodes"].split(",")) == set(members)
    assert pattern.pattern_id in p.note
    assert draft.draft_id in p.note
    # graduation installs the skill, then proposes it: both in the history, from → to
    moves = [(c.event, c.from_status, c.to_status) for c in reversed(found.history)]
    assert moves == [("skill.installed", "", "stable"), ("skill.proposed", "stable", "proposed")]
    assert found.status == "proposed"
    assert lib.lineage_default() == draft.name  # the most recently graduated skill
    assert verify(lib).ok


def test_sessions_cited_by_the_skill_md_but_never_ingested_are_listed(
    lib: Library, tmp_path: Path
) -> None:
    folder = tmp_path / "imported"
    write_skill(
        folder,
        "pool-fix",
        "Fix pool exhaustion.",
        extra=(
            "metadata:\n  generated-by: skill-librarian\n  librarian-pattern: p_elsewhere\n"
            "  librarian-sessions: s-far-1,s-far-2\n  librarian-nodes: n_far\n"
        ),
    )
    lib.scan([folder])
    p = lib.lineage("pool-fix").provenance
    assert p.origin == "graduated"
    assert p.pattern is None
    assert p.draft is None
    assert [(s.session_id, s.known) for s in p.sessions] == [
        ("s-far-1", False),
        ("s-far-2", False),
    ]
    assert p.missing_nodes == ("n_far",)
    assert "p_elsewhere" in p.note


def test_an_installed_skill_says_where_from_and_which_sessions_used_it(
    lib: Library, root: Path
) -> None:
    add_session(lib, "s-old", "2026-10-01T09:00:00+00:00", ["deploy"], "Ship the API")
    add_session(lib, "s-new", "2026-10-20T09:00:00+00:00", ["deploy", "rollback"], "Roll back")
    add_session(lib, "s-other", "2026-10-21T09:00:00+00:00", ["rollback"])
    p = lib.lineage("deploy").provenance
    assert p.origin == "installed"
    assert p.note.startswith(f"installed from {root / 'deploy' / 'SKILL.md'}")
    assert (p.pattern, p.draft, p.sessions) == (None, None, ())
    assert [s.session_id for s in p.used_in] == ["s-new", "s-old"]  # newest first
    assert p.used_in[1].title == "Ship the API"
    assert p.used_in[1].project == "/w/api"
    assert p.used_in_total == 2
    assert lib.lineage_default() == "rollback"  # nothing graduated: the last installed


# -- events, succession, collisions, errors ---------------------------------------------------


def test_events_come_newest_first_in_pages(lib: Library, root: Path) -> None:
    for number in range(25):
        lib.record_outcome("deploy", number % 5 != 0, detail=f"run {number}")
    first = lib.lineage("deploy", events_limit=10)
    assert first.event_total == 26  # installed + 25 outcomes
    assert len(first.events) == 10
    seqs = [e.seq for e in first.events]
    assert seqs == sorted(seqs, reverse=True)
    assert first.events[0].payload["detail"] == "run 24"
    rest, total = lib.skill_events("deploy", limit=100, offset=10)
    assert total == 26
    assert len(rest) == 16
    assert not {e.seq for e in rest} & set(seqs)
    assert rest[-1].type == "skill.installed"
    assert rest[0].seq < seqs[-1]
    assert lib.skill_events("deploy", limit=5, offset=26) == ((), 26)


def test_successors_come_from_supersedes_relations(lib: Library, root: Path) -> None:
    lib.relate("rollback", "supersedes", "deploy")
    assert lib.lineage("deploy").superseded_by == ("rollback",)
    assert lib.lineage("rollback").supersedes == ("deploy",)
    assert lib.lineage("deploy").runs == ()
    assert lib.lineage("deploy").incidents == ()


def test_two_folders_with_one_name_keep_their_own_events(lib: Library, tmp_path: Path) -> None:
    for place in ("a", "b"):
        write_skill(tmp_path / place, "twin", f"Twin from {place}.")
    lib.scan([tmp_path / "a", tmp_path / "b"])
    ids = sorted(s.skill_id for s in lib.list_skills("twin"))
    lib.record_outcome(ids[1], False, detail="only the second")
    first, second = lib.lineage(ids[0]), lib.lineage(ids[1])
    assert (first.event_total, second.event_total) == (1, 2)
    assert [c.event for c in first.history] == ["skill.installed"]
    assert first.fs_path != second.fs_path


def test_unknown_skills_and_versions_are_errors(lib: Library, root: Path) -> None:
    with pytest.raises(LibrarianError, match="no skill named 'ghost'"):
        lib.lineage("ghost")
    with pytest.raises(LibrarianError, match="no skill named 'ghost'"):
        lib.version_diff("ghost", 0, 1)
    with pytest.raises(LibrarianError, match="no skill named 'ghost'"):
        lib.skill_events("ghost")


def test_an_empty_library_has_no_default(lib: Library) -> None:
    assert lib.lineage_default() is None
