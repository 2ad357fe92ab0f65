"""`librarian bench --only team`: the team budgets on an embedded PostgreSQL hub (issue 13).

- push of 10,000 approved nodes from a real library (a fresh hub database each run);
- a hub holding 1,000,000 events from 20 libraries (500,000 staged items, 490,000 decided,
  10,000 pending; built once through the hub's own functions and cached with the server in
  the bench folder): the team review queue interactive, `team status`;
- pull of 100,000 new events into a new library (the decisions on the hub's TEAM items);
- nothing new: the round trips of a second push and a second pull.

Measurements run in child processes (`librarian bench-child child-team-…`), so their peak
memory is their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shutil
import stat
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from store.models.events import EventType
from store.team.errors import TeamError
from tooling.bench.common import own_peak_rss_mb, run_child

_R = TypeVar("_R")

#: Bump when the cached hub's content changes.
BUILD_VERSION = "7"
LIBRARIES = 20
BATCH = 1000
MEMBERS = ("pusher", "puller", "rev1", "rev2")


def sizes(quick: bool) -> dict[str, int]:
    """Items per library, pushed nodes, and the events a pull brings (= TEAM decisions)."""
    per = 1250 if quick else 25_000
    return {"items_per_library": per, "push": 1000 if quick else 10_000, "pull": per * 4}


def run(work: Path, quick: bool) -> dict[str, Any]:
    """Every team measurement (parent side)."""
    from store.team import server

    size = sizes(quick)
    try:
        folder = hub_folder(work)
        hub = server.start(folder)
    except TeamError as exc:
        return {"skipped": f"no embedded hub: {exc}"}
    try:
        _members(hub)
        big = f"bench_{size['items_per_library']}"
        built = _big_hub(hub, big, size["items_per_library"])
        pushed = _bench_push(work, hub, size["push"])
        pulled = _bench_pull(work, hub, big)
        reviewer = _empty_library(work / "team-reviewer", hub.url("rev1", big))
        review = run_child("app-team-review", str(reviewer), timeout=3600)
        status = run_child("child-team-status", str(work / "team-puller"), timeout=3600)
    finally:
        server.stop(folder)
    return {
        "hub_events": built["events"],
        "hub_libraries": built["libraries"],
        "hub_pending": built["pending"],
        "hub_build_seconds": built.get("seconds"),
        "push_nodes": size["push"],
        "push_seconds": pushed.get("seconds"),
        "push_cpu_seconds": pushed.get("cpu_seconds"),
        "push_peak_rss_mb": pushed.get("peak_rss_mb"),
        "push_again_round_trips": pushed.get("again_round_trips"),
        "pull_events": pulled.get("events"),
        "pull_seconds": pulled.get("seconds"),
        "pull_cpu_seconds": pulled.get("cpu_seconds"),
        "pull_peak_rss_mb": pulled.get("peak_rss_mb"),
        "pull_waited_for_hub_seconds": pulled.get("waited_for_hub_seconds"),
        "pull_stored_seconds": pulled.get("stored_seconds"),
        "pull_again_round_trips": pulled.get("again_round_trips"),
        "review_interactive_seconds": review.get("interactive_seconds"),
        "review_from_start_seconds": review.get("from_start_seconds"),
        "review_rows": review.get("rows"),
        "status_ms": status.get("median_ms"),
        "errors": [r["error"] for r in (pushed, pulled, review, status) if "error" in r],
    }


def hub_folder(work: Path) -> Path:
    """Where the bench's hub lives: `team-hub` in the bench folder, unless the server's user
    cannot enter that folder (this process is root, so the server runs as `nobody`, and the
    bench folder sits in root's private home): then in the system's folder for temporary files
    kept across reboots (the big hub takes minutes to build), named after the bench folder, and
    made here (a folder of that name someone else made, or a link, is refused)."""
    from store.team import server

    folder = work / "team-hub"
    if server.server_can_enter(work):
        return folder
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path(tempfile.gettempdir())
    key = hashlib.sha256(str(work.resolve()).encode("utf-8")).hexdigest()[:10]
    folder = base / f"librarian-bench-hub-{key}"
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o755)
    mode = folder.lstat()
    if not stat.S_ISDIR(mode.st_mode) or mode.st_uid != os.geteuid():
        raise TeamError(f"{folder} exists and was not made by this user: remove it")
    return folder


def _members(hub: Any) -> None:
    """The bench's logins (made once per cluster; their passwords stay in the hub's file)."""
    import psycopg  # the team extra: the team bench needs it

    from store.team import hub as hub_api
    from store.team import server

    names = [f"lib{i:02d}" for i in range(1, LIBRARIES + 1)] + list(MEMBERS)
    with psycopg.connect(hub.url(database="postgres"), autocommit=True) as conn:
        hub_api.init_roles(conn)
        have = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles").fetchall()}
        for name in names:
            if name not in have:
                password = hub_api.add_member(conn, name, reviewer=name.startswith("rev"))
                server.add_password(hub.passfile, server.HOST, hub.port, "*", name, password)


def _database(hub: Any, name: str, *, fresh: bool) -> None:
    import psycopg  # the team extra: the team bench needs it

    from store.team import hub as hub_api

    with psycopg.connect(hub.url(database="postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (name,)).fetchone()
        if exists and fresh:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        if not exists or fresh:
            conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(hub.url(database=name), autocommit=True) as conn:
        hub_api.init(conn)


# -- the big hub ----------------------------------------------------------------------------


def _item(library: int, i: int, scope: str) -> dict[str, Any]:
    project = f"/bench/service-{library:02d}"
    return {
        "session_id": f"s-{library:02d}-{i // 5:06d}",
        "project": project,
        "type": ("DISCOVERY", "DEAD_END", "SOLUTION", "INVESTIGATION")[i % 4],
        "summary": f"`svc{library:02d}` call {i} held a pooled connection across a slow HTTP"
        f" request, so the pool ran dry under load (pool_size {i % 50 + 5})",
        "evidence": f"TimeoutError: QueuePool limit of size {i % 50 + 5} overflow 10 reached,"
        " connection timed out, timeout 30.00 " * 8,
        "file": f"/home/dev{library:02d}/.claude/projects/{i // 5}.jsonl",
        "line_start": i % 400,
        "line_end": i % 400 + 3,
        "confidence": 0.55 + (i % 20) / 100,
        "scope": scope,
        "tier": "warm",
        "developer": f"dev{library:02d}",
        "informativeness": 0.3 + (i % 50) / 100,
        "rank": round((0.55 + (i % 20) / 100) * (0.3 + (i % 50) / 100), 6),
        "created_at": "2026-10-01T09:00:00+00:00",
        "session_started_at": "2026-10-01T09:00:00+00:00",
        "edges": [],
    }


def _big_hub(hub: Any, name: str, per: int) -> dict[str, Any]:
    """20 libraries' pushes and the reviewers' decisions, through the hub's functions."""
    marker = hub.folder / f"{name}.json"
    try:
        done: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        if done.get("version") == BUILD_VERSION:
            _database(hub, name, fresh=False)  # the hub's newer migrations, if any
            return done
    except (OSError, ValueError):
        pass
    import psycopg  # the team extra: the team bench needs it

    from store.team import hub as hub_api

    started = time.perf_counter()
    _database(hub, name, fresh=True)
    team = per // 5  # a fifth of each library's items are TEAM-scoped
    for number in range(1, LIBRARIES + 1):
        library_id = f"{number:032x}"
        with psycopg.connect(hub.url(f"lib{number:02d}", name), autocommit=True) as conn:
            hub_api.hello(conn, library_id, f"library {number}", (1, "0" * 63 + "1"))
            ops = [
                {
                    "gid": f"{library_id}:{i + 1}",
                    "op": "stage",
                    "kind": "node",
                    "item_id": f"n_{number:02d}_{i:07d}",
                    "item": _item(number, i, "TEAM" if i < team else "PROJECT"),
                }
                for i in range(per)
            ]
            for start in range(0, per, BATCH):
                hub_api.push(conn, library_id, start + BATCH, ops[start : start + BATCH])
    with psycopg.connect(hub.url("rev1", name), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT item_id, last_event, scope FROM librarian.items ORDER BY item_id"
        ).fetchall()
        team_items = [r for r in rows if r[2] == "TEAM"]
        other = [r for r in rows if r[2] != "TEAM"]
        # TEAM: 90% approved (a tenth of those also edited), 10% rejected. The rest: 10,000
        # (2% of the items) left pending, of the others three in four approved.
        approve = team_items[: len(team_items) * 9 // 10]
        reject = team_items[len(approve) :]
        pending = len(rows) // 50
        decided_other = other[: len(other) - pending]
        cut = len(decided_other) * 29 // 39
        plan = [
            ("approve", approve),
            ("reject", reject),
            ("approve", decided_other[:cut]),
            ("reject", decided_other[cut:]),
        ]
        for action, items in plan:
            for start in range(0, len(items), BATCH):
                chunk = items[start : start + BATCH]
                hub_api.decide(conn, [r[0] for r in chunk], [int(r[1]) for r in chunk], action, {})
        edited = approve[: len(team_items) // 10]
        bases: dict[str, int] = {
            str(r[0]): int(r[1])
            for r in conn.execute(
                "SELECT item_id, last_event FROM librarian.items WHERE item_id = ANY(%s)",
                ([r[0] for r in edited],),
            ).fetchall()
        }
        for start in range(0, len(edited), BATCH):
            names = [str(r[0]) for r in edited[start : start + BATCH]]
            for item_id in names:  # one edit each, with its own summary
                hub_api.decide(
                    conn,
                    [item_id],
                    [int(bases[item_id])],
                    "edit",
                    {"summary": f"Edited by the reviewer: {item_id} held a pooled connection"},
                )
        events = int(conn.execute("SELECT count(*) FROM librarian.events").fetchone()[0])  # type: ignore[index]
        waiting = int(
            conn.execute(  # type: ignore[index]
                "SELECT count(*) FROM librarian.items WHERE status='staged'"
            ).fetchone()[0]
        )
    with psycopg.connect(hub.url(database=name), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")  # what autovacuum does on a hub that lives for a while
    done = {
        "version": BUILD_VERSION,
        "events": events,
        "libraries": LIBRARIES,
        "pending": waiting,
        "seconds": round(time.perf_counter() - started, 1),
    }
    marker.write_text(json.dumps(done) + "\n", encoding="utf-8")
    return done


# -- the measured libraries ------------------------------------------------------------------


def _empty_library(path: Path, url: str) -> Path:
    from store.config import Config

    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    config = Config(path / "config.toml")
    config.set("team.hub", json.dumps(url))
    config.set("reviewer.name", json.dumps("bench"))
    return path


def _approved_library(path: Path, count: int) -> Path:
    """A library with `count` approved nodes in sessions of five (cached by its marker)."""
    from store.library import Library
    from store.projections import store_blob

    marker = path / f"approved-{count}-{BUILD_VERSION}"
    if marker.exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    with Library(path) as library:
        for start in range(0, count, 1000):
            ids = []
            with library.db.write() as conn:
                for i in range(start, min(count, start + 1000)):
                    session = f"s{i // 5:06d}"
                    if i % 5 == 0:
                        library.append_event(
                            conn,
                            EventType.SESSION_INGESTED,
                            f"session:{session}",
                            _session(session, store_blob(conn, "[]")),
                        )
                    node = {**_item(0, i, "TEAM" if i % 3 == 0 else "PROJECT")}
                    node.update(node_id=f"n_push{i:07d}", strategy="bench", session_id=session)
                    library.append_event(
                        conn, EventType.NODE_EXTRACTED, f"node:{node['node_id']}", {"node": node}
                    )
                    ids.append(node["node_id"])
            library.review("approve", ids)
    marker.write_text("", encoding="utf-8")
    return path


def _session(session: str, digest: str) -> dict[str, Any]:
    return {
        "session_id": session,
        "project": "/bench/service-00",
        "branch": "main",
        "client_version": "2.1",
        "started_at": "2026-10-01T09:00:00+00:00",
        "ended_at": "2026-10-01T10:00:00+00:00",
        "turns": 10,
        "tool_calls": 8,
        "errors": 1,
        "skills_used": [],
        "skipped": {},
        "developer": "bench",
        "messages_hash": digest,
        "files": [],
    }


def _bench_push(work: Path, hub: Any, count: int) -> dict[str, Any]:
    name = "bench_push"
    _database(hub, name, fresh=True)
    template = _approved_library(work / f"team-approved-{count}", count)
    copy = work / "team-pusher"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(template, copy)
    from store.config import Config

    Config(copy / "config.toml").set("team.hub", json.dumps(hub.url("pusher", name)))
    return run_child("child-team-push", str(copy), timeout=3600)


def _bench_pull(work: Path, hub: Any, big: str) -> dict[str, Any]:
    path = _empty_library(work / "team-puller", hub.url("puller", big))
    return run_child("child-team-pull", str(path), timeout=3600)


# -- children -----------------------------------------------------------------------------------


def _cpu() -> float:
    """CPU seconds this process used (all its threads): what the work costs on a machine
    other work shares, where wall time also counts the waiting."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _twice(library_dir: str, run: Callable[[Any], _R]) -> tuple[_R, _R, float, float]:
    """`run` on the library, timed (wall and CPU), then once more with nothing new."""
    from store.library import Library

    with Library(Path(library_dir)) as library:
        started, cpu = time.perf_counter(), _cpu()
        first = run(library)
        seconds, cpu = time.perf_counter() - started, _cpu() - cpu
        again = run(library)
    return first, again, seconds, cpu


def child_push(library_dir: str) -> dict[str, Any]:
    from store.team.push import push

    first, again, seconds, cpu = _twice(library_dir, push)
    return {
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "ops": first.ops,
        "applied": first.applied,
        "batches": first.batches,
        "again_round_trips": again.round_trips,
        "again_seconds": again.seconds,
        "peak_rss_mb": own_peak_rss_mb(),
    }


def child_pull(library_dir: str) -> dict[str, Any]:
    from store.team.pull import pull

    first, again, seconds, cpu = _twice(library_dir, pull)
    return {
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "events": first.events,
        "pages": first.pages,
        "waited_for_hub_seconds": first.waited,
        "stored_seconds": first.stored,
        "again_round_trips": again.round_trips,
        "peak_rss_mb": own_peak_rss_mb(),
    }


def child_status(library_dir: str) -> dict[str, Any]:
    from store.library import Library
    from store.team.status import team_status

    times = []
    with Library(Path(library_dir)) as library:
        for _ in range(7):
            started = time.perf_counter()
            status = team_status(library)
            times.append((time.perf_counter() - started) * 1000)
    return {
        "median_ms": round(statistics.median(times), 1),
        "reachable": status.reachable,
        "hub_events": status.hub_events,
    }


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "child-team-push": child_push,
    "child-team-pull": child_pull,
    "child-team-status": child_status,
}
