"""`librarian demo --team`: a team story on a local hub, so the Team screen (9) and the review
queue's team source (T) have something real to show.

A local hub (`librarian team hub --local` machinery: an embedded PostgreSQL on the loopback
address) gets the team's members: two developers who contribute (alex, jordan), a colleague
who reviews (sam) and the person trying the demo, who reviews as `dana` (the demo's
reviewer). Each developer has a library of their own (in the demo folder's
`team-developers/`): a session with what they learned, approved by them, and a SKILL.md
draft; both push. The demo library pushes its own approved nodes. Sam decides part of what
was staged (approves, edits, rejects with a reason, approves alex's draft and dana's nodes);
the rest waits for dana. Then the demo library pulls: the team's approved nodes join its
consolidation, alex's approved draft becomes a skill under the demo's team skills root.

Everything goes through the same functions as `librarian team push / review / pull`; only
the developers' libraries are written event by event (as the bench does), instead of being
ingested from transcripts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.events import stepping_clock
from store.library import Library
from store.models.events import EventType
from store.projections import store_blob
from store.team import hub as hub_api
from store.team import server
from store.team.drafts import install
from store.team.pull import pull
from store.team.push import push
from store.team.review import TeamQueue

#: The demo library's login in the hub (a reviewer: the person trying the demo).
DEMO_USER = "dana"
#: The colleague who reviews before the demo is opened.
COLLEAGUE = "sam"
MEMBERS = {"alex": False, "jordan": False, COLLEAGUE: True, DEMO_USER: True}
#: The developers' libraries are written on a fixed clock, the hour before the demo's.
DEVELOPERS_BUILT = "2026-11-02T08:00:00+00:00"
#: The demo's hub database.
DATABASE = "librarian"
MARKER = "team-story.json"
#: The build's stage for `build_demo`'s progress.
TEAM_STAGE = "a team story: a local hub, two developers' pushes, a review, a pull"


@dataclass(frozen=True)
class Developer:
    """A teammate's library: one session, its lessons (summary, scope), one draft."""

    user: str
    project: str
    started: str
    lessons: tuple[tuple[str, str, str], ...]  # (type, summary, scope)
    draft: tuple[str, str]  # (skill name, description)


DEVELOPERS = (
    Developer(
        "alex",
        "/home/alex/work/checkout-service",
        "2026-10-20T09:00:00+00:00",
        (
            (
                "DEAD_END",
                "Raising SQLAlchemy pool_size from 20 to 60 did not stop the QueuePool timeouts"
                " in the checkout worker: the new connections were held just as long.",
                "TEAM",
            ),
            (
                "SOLUTION",
                "The checkout worker held a pooled connection across the payment provider's"
                " HTTP call; committing and releasing it before the call ended the timeouts.",
                "TEAM",
            ),
            (
                "DISCOVERY",
                "pg_stat_activity showed 41 of 60 connections idle in transaction, all opened"
                " by the checkout worker's retry loop.",
                "TEAM",
            ),
            (
                "INVESTIGATION",
                "The flaky checkout test depends on the order of two fixtures that share one"
                " sequence.",
                "TEAM",
            ),
        ),
        (
            "release-pool-before-http",
            "Release a pooled database connection before any slow network call. Use when"
            " QueuePool timeouts appear and raising the pool size does not help.",
        ),
    ),
    Developer(
        "jordan",
        "/home/jordan/work/search-indexer",
        "2026-10-22T14:00:00+00:00",
        (
            (
                "DEAD_END",
                "A lock_timeout of 5 s on the reindex migration still queued every write"
                " behind its ACCESS EXCLUSIVE lock.",
                "TEAM",
            ),
            (
                "SOLUTION",
                "CREATE INDEX CONCURRENTLY inside an autocommit block rebuilt the index"
                " without stopping writes.",
                "TEAM",
            ),
            (
                "DISCOVERY",
                "The indexer's nightly batch kept one transaction open for its whole"
                " 40-minute run, which held back vacuum on the documents table.",
                "TEAM",
            ),
        ),
        (
            "concurrent-index-builds",
            "Build and rebuild PostgreSQL indexes without blocking writes. Use when a"
            " migration adds or replaces an index on a busy table.",
        ),
    ),
)
#: Sam's decisions before the demo opens: (developer, lesson index, action, value).
COLLEAGUE_DECISIONS: tuple[tuple[str, int, str, str], ...] = (
    ("alex", 0, "approve", ""),
    (
        "alex",
        1,
        "edit",
        "Commit and release the pooled connection before a slow HTTP call: the checkout"
        " worker held it across the payment provider's call and the pool ran dry.",
    ),
    ("alex", 1, "approve", ""),
    ("alex", 3, "reject", "a project detail of checkout's tests, not a lesson for the team"),
    ("jordan", 0, "approve", ""),
)
#: Sam approves alex's draft; jordan's waits for dana.
APPROVED_DRAFT = "alex"

Tell = Callable[[str], None]


def hub_folder(target: Path) -> Path:
    """Where the demo's hub keeps its data: beside the demo library, or (when this process is
    root, whose server runs as `nobody`, which cannot enter a private home) in the system's
    temporary folder, named after the demo library's path."""
    if os.geteuid() == 0:
        key = hashlib.sha256(str(target.resolve()).encode("utf-8")).hexdigest()[:10]
        return Path(tempfile.gettempdir()) / f"librarian-demo-hub-{key}"
    return target / "team-hub"


def build_team(
    target: Path, library: Library, tell: Tell | None = None, *, folder: Path | None = None
) -> dict[str, Any]:
    """Start the demo's hub (in `folder`, default `hub_folder(target)`) and, the first time,
    play the team story into it and into `library` (the demo library at `target`). Returns
    what the story did (kept in `team-story.json`)."""

    say = tell or (lambda text: None)
    folder = folder or hub_folder(target)
    marker = target / MARKER
    if marker.exists() and (folder / "data").exists():
        server.start(folder)
        return dict(json.loads(marker.read_text(encoding="utf-8")))
    if folder.exists():  # a hub left from an older demo: start again from nothing
        server.stop(folder, immediate=True)
        shutil.rmtree(folder)
    say("starting a local team hub (embedded PostgreSQL)")
    hub = server.start(folder, durable=False)
    _members(hub)
    say("two developers push what they learned")
    developers = [_developer(target, hub, d) for d in DEVELOPERS]
    library.config.set("team.hub", json.dumps(hub.url(DEMO_USER, DATABASE)))
    library.config.set("team.skills_root", json.dumps(str(target / "team-skills")))

    pushed = push(library)
    say("a colleague reviews in the hub")
    decided = _colleague(hub, developers)
    say("the demo library pulls what the team approved")
    story = _pull(library) | {
        "hub": str(folder),
        "pushed": pushed.ops,
        "decided": decided,
        "developers": [str(p) for p in developers],
    }
    marker.write_text(json.dumps(story, sort_keys=True) + "\n", encoding="utf-8")
    return story


def stop_hub(target: Path) -> bool:
    """Stop the demo's hub (False: it was not running)."""

    return server.stop(hub_folder(target))


def _members(hub: Any) -> None:
    import psycopg  # the team extra: `demo --team` needs it

    with psycopg.connect(hub.url(database=DATABASE), autocommit=True) as conn:
        hub_api.init(conn)
        for name, reviewer in MEMBERS.items():
            password = hub_api.add_member(conn, name, reviewer=reviewer)
            server.add_password(hub.passfile, server.HOST, hub.port, "*", name, password)


def _developer(target: Path, hub: Any, dev: Developer) -> Path:
    """A teammate's library: a session, its lessons approved by its developer, a drafted
    SKILL.md; pushed to the hub."""

    path = target / "team-developers" / dev.user
    shutil.rmtree(path, ignore_errors=True)
    session = f"{dev.user}-{dev.started[:10]}"
    with Library(path, clock=stepping_clock(DEVELOPERS_BUILT)) as library:
        library.config.set("team.hub", json.dumps(hub.url(dev.user, DATABASE)))
        library.config.set("reviewer.name", json.dumps(dev.user))
        ids = []
        with library.db.write() as conn:
            library.append_event(
                conn,
                EventType.SESSION_INGESTED,
                f"session:{session}",
                _session(session, dev, store_blob(conn, "[]")),
            )
            for i, (type_, summary, scope) in enumerate(dev.lessons):
                node = _node(session, dev, i, type_, summary, scope)
                library.append_event(
                    conn, EventType.NODE_EXTRACTED, f"node:{node['node_id']}", {"node": node}
                )
                ids.append(node["node_id"])
            _draft(library, conn, dev)
        library.review("approve", ids)
        push(library)
    return path


def _session(session: str, dev: Developer, digest: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "project": dev.project,
        "branch": "main",
        "client_version": "2.1",
        "started_at": dev.started,
        "ended_at": dev.started,
        "turns": 24,
        "tool_calls": 17,
        "errors": 3,
        "skills_used": [],
        "skipped": {},
        "developer": dev.user,
        "messages_hash": digest,
        "files": [],
    }


def _node(
    session: str, dev: Developer, i: int, type_: str, summary: str, scope: str
) -> dict[str, Any]:
    return {
        "node_id": f"n_{dev.user}{i}",
        "session_id": session,
        "project": dev.project,
        "type": type_,
        "summary": summary,
        "evidence": summary,
        "file": f"/home/{dev.user}/.claude/projects/{session}.jsonl",
        "line_start": 40 * (i + 1),
        "line_end": 40 * (i + 1) + 6,
        "confidence": 0.8,
        "scope": scope,
        "tier": "warm",
        "strategy": "demo",
        "developer": dev.user,
        "edges_in": [],
    }


def _draft(library: Library, conn: Any, dev: Developer) -> None:
    name, description = dev.draft
    content = (
        f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n"
        f"Learned by {dev.user} in {dev.project}.\n\n## Steps\n\n"
        + "\n".join(f"{i}. {s}" for i, (_t, s, _scope) in enumerate(dev.lessons[:2], start=1))
        + "\n"
    )
    library.append_event(
        conn,
        EventType.PATTERN_DRAFTED,
        f"pattern:p_{dev.user}",
        {
            "draft_id": f"d_{dev.user}_{name.replace('-', '_')}",
            "pattern_id": f"p_{dev.user}",
            "name": name,
            "content_hash": store_blob(conn, content),
            "literal_hash": store_blob(conn, content),
            "parameters": [],
            "regressions": [],
            "citations": [],
        },
    )


def _colleague(hub: Any, developers: list[Path]) -> int:
    """Sam's decisions, through the team review queue; dana's own pushed nodes approved."""

    decided = 0
    queue = TeamQueue(hub.url(COLLEAGUE, DATABASE))
    try:
        for user, index, action, value in COLLEAGUE_DECISIONS:
            values = {"summary": value} if action == "edit" else {"reason": value}
            queue.review(action, [f"n_{user}{index}"], **values)
            decided += 1
        theirs = {f"n_{d.user}{i}" for d in DEVELOPERS for i in range(len(d.lessons))}
        dana = [n.node_id for n in queue.nodes(status="pending") if n.node_id not in theirs]
        if dana:
            queue.review("approve", dana)
            decided += len(dana)
    finally:
        queue.close()
    drafts = TeamQueue(hub.url(COLLEAGUE, DATABASE), kind="draft")
    try:
        approve = [
            d.draft_id for d in drafts.drafts() if d.draft_id.startswith(f"d_{APPROVED_DRAFT}_")
        ]
        if approve:
            drafts.review("approve", approve)
            decided += len(approve)
    finally:
        drafts.close()
    return decided


def _pull(library: Library) -> dict[str, Any]:

    report = pull(library)
    if report.nodes_changed:
        library.consolidate()
    installed, problems = install(library, lambda root: library.scan([root]))
    return {
        "pulled": report.events,
        "installed": installed,
        "problems": problems + report.skipped,
    }
