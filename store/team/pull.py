"""`librarian team pull`: what the team approved, for this developer's projects and for the
whole team, from the pull cursor, as local `team.received` events.

Each page of hub events is stored in one local transaction together with the cursor that
follows it (`team.pulled`), so a pull killed at any point (this process or the hub) keeps
whole pages only and the next pull goes on after the last one. A row that fails the checks
in `store.team.validate` is reported and skipped. Pulling again brings nothing and writes
nothing: one round trip.

A page is stored in bulk: its texts are redacted once each and written in one statement, its
events appended in one (`append_events`), and their projections read the texts back from
memory (`known_texts`), not from the table just written.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.content import envelope, known_texts
from store.ingest.redact import redact
from store.models.events import EventType
from store.projections import store_blob
from store.team import hub as hub_api
from store.team.connection import configured_hub, connect, describe, hub_errors
from store.team.drafts import team_root
from store.team.local import TeamDeps, join, library_id_for, projects, state, unpushed_items
from store.team.validate import problem
from store.text import plural

#: Hub events per page (one round trip, one local transaction).
PAGE = 5000
Progress = Callable[[int, int], None]
#: Blob hashes per statement when checking which of a page's texts are erased here.
_CHUNK = 500


class _Texts:
    """A page's texts: each distinct text redacted once, each blob (`store_text`'s envelope
    and hash) kept until `write` stores them all in one statement."""

    def __init__(self) -> None:
        self._redacted: dict[str, str] = {}
        self._bodies: dict[str, str] = {}
        #: digest → text, for `known_texts` (erased blobs are dropped by `write`).
        self.texts: dict[str, str] = {}

    def redact(self, text: str) -> str:
        done = self._redacted.get(text)
        if done is None:
            done = self._redacted[text] = redact(text)
        return done

    def ref(self, owner: str, text: str) -> Any:
        """`store_text(conn, owner, redact(text))`, written later by `write`."""
        text = self.redact(text)
        if not text:
            return text
        body = envelope(owner, text)
        digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
        self._bodies[digest] = body
        self.texts[digest] = text
        return {"blob": digest}

    def write(self, conn: Any) -> None:
        """Store the blobs (an existing one, erased or not, stays as it is) and forget the
        erased ones, so that `text_of` reads them from the table: `ERASED`."""
        conn.executemany(
            "INSERT OR IGNORE INTO blobs(hash, text) VALUES (?,?)", self._bodies.items()
        )
        # Only `forget` erases a blob (a `blob.erased` event): with none, there is nothing to find.
        if not conn.execute(
            "SELECT 1 FROM events WHERE type=? LIMIT 1", (EventType.BLOB_ERASED,)
        ).fetchone():
            return
        digests = list(self._bodies)
        for start in range(0, len(digests), _CHUNK):
            chunk = digests[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for (digest,) in conn.execute(
                f"SELECT hash FROM blobs WHERE hash IN ({marks}) AND coalesce(erased_at, '') != ''",
                chunk,
            ):
                self.texts.pop(digest, None)


@dataclass
class PullReport:
    """What a pull did."""

    hub: str
    library_id: str
    events: int = 0
    pages: int = 0
    nodes: int = 0
    drafts: int = 0
    conflicts: int = 0
    cursor: int = 0
    round_trips: int = 0
    seconds: float = 0.0
    #: Of `seconds`: waiting for the hub (what the page fetched ahead did not hide), and
    #: storing pages here.
    waited: float = 0.0
    stored: float = 0.0
    skipped: list[str] = field(default_factory=list)
    #: Whether approved nodes changed here (consolidation should run).
    nodes_changed: bool = False

    def describe(self) -> str:
        """One line saying what happened."""
        if not self.events:
            return f"nothing new from {self.hub}"
        return (
            f"pulled {plural(self.events, 'event')} from {self.hub}: {self.nodes:,} on nodes,"
            f" {self.drafts:,} on drafts, {self.conflicts:,} overruled ({self.seconds:.2f} s)"
        )


def pull(
    deps: TeamDeps,
    *,
    page: int = PAGE,
    full: bool = False,
    progress: Progress | None = None,
) -> PullReport:
    """Pull everything new; `full` reads the hub from the start again (what this library
    already has is skipped), e.g. after adding a project to `team.projects`."""
    started = time.perf_counter()
    conninfo = configured_hub(deps.config)
    library_id, joined = library_id_for(deps)
    report = PullReport(describe(conninfo), library_id)
    with deps.db.read() as conn:
        current = state(conn)
        wanted = projects(conn, deps.config)
        unpushed = unpushed_items(conn)
        seen = dict(conn.execute("SELECT item_id, hub_id FROM team_items").fetchall())
    cursor = 0 if full else current.pull_cursor
    root = team_root(deps.config)
    hub = connect(conninfo)
    # The next page is fetched while this one is stored: the hub's work, the network and
    # psycopg's parsing overlap with SQLite's (a page is stored whole or not at all either way).
    ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="team-pull")
    try:
        fetching = ahead.submit(_fetch, hub, report.library_id, cursor, wanted, page)
        while True:
            began = time.perf_counter()
            with hub_errors():
                rows = fetching.result()
            report.waited += time.perf_counter() - began
            report.round_trips += 1
            if not rows:
                break
            if not joined:  # the first thing pulled: record the id this library pulls as
                join(deps, library_id, report.hub)
                joined = True
            full_page = len(rows) == page
            if full_page:
                fetching = ahead.submit(
                    _fetch, hub, report.library_id, int(rows[-1]["id"]), wanted, page
                )
            began = time.perf_counter()
            cursor = _store_page(deps, rows, cursor, report, unpushed, seen, root)
            report.stored += time.perf_counter() - began
            report.pages += 1
            if progress is not None:
                progress(report.events, report.events + (page if full_page else 0))
            if not full_page:
                break
        if report.pages:
            with hub_errors():
                hub_api.pulled(hub, report.library_id)
            report.round_trips += 1
    finally:
        ahead.shutdown(wait=True)
        hub.close()
    report.cursor = max(cursor, current.pull_cursor)
    report.seconds = round(time.perf_counter() - started, 3)
    report.waited, report.stored = round(report.waited, 3), round(report.stored, 3)
    return report


def _fetch(
    hub: hub_api.Conn, library_id: str, cursor: int, wanted: list[str], page: int
) -> list[dict[str, Any]]:
    return hub_api.pull(hub, library_id, cursor, wanted, page)


def _store_page(
    deps: TeamDeps,
    rows: list[dict[str, Any]],
    cursor: int,
    report: PullReport,
    unpushed: set[str],
    seen: dict[str, int],
    root: Path,
) -> int:
    last = int(rows[-1]["id"])
    stored = malformed = 0
    texts = _Texts()
    entries: list[tuple[str, str, dict[str, Any]]] = []
    with deps.db.write() as conn:
        for row in rows:
            why = problem(row)
            if why is not None:
                report.skipped.append(why)
                malformed += 1
                continue
            if int(row["id"]) <= int(seen.get(row["item_id"], 0)):
                continue  # this library has it already (a full pull)
            payload = _payload(conn, texts, row, report.library_id, unpushed, root)
            subject = ("node:" if row["item_kind"] == "node" else "draft:") + row["item_id"]
            entries.append((EventType.TEAM_RECEIVED, subject, payload))
            seen[row["item_id"]] = int(row["id"])
            stored += 1
            report.conflicts += 0 if row["applied"] else 1
            if row["item_kind"] == "node":
                report.nodes += 1
                report.nodes_changed = report.nodes_changed or not payload["keep_local"]
            else:
                report.drafts += 1
        if last > cursor:
            pulled = {
                "from": cursor,
                "to": last,
                "events": stored,
                "malformed": malformed,
                "known": len(rows) - stored - malformed,
            }
            entries.append((EventType.TEAM_PULLED, "team", pulled))
        texts.write(conn)
        with known_texts(texts.texts):
            deps.append_events(conn, entries)
    report.events += stored
    return max(last, cursor)


def _payload(
    conn: Any, texts: _Texts, row: dict[str, Any], library_id: str, unpushed: set[str], root: Path
) -> dict[str, Any]:
    item_id = row["item_id"]
    owner = f"node:{item_id}" if row["item_kind"] == "node" else f"draft:{item_id}"
    own = row["origin"] == library_id
    body = row["body"]
    values: dict[str, Any] = {}
    for key in ("summary", "reason"):
        if body.get(key):
            values[key] = texts.ref(owner, body[key])
    if body.get("scope"):
        values["scope"] = body["scope"]
    payload: dict[str, Any] = {
        "hub_id": int(row["id"]),
        "gid": row["gid"],
        "kind": row["kind"],
        "item_id": item_id,
        "item_kind": row["item_kind"],
        "origin": row["origin"],
        "own": own,
        "author": row["author"],
        "actor": row["actor"],
        "at": row["at"].isoformat(timespec="microseconds"),
        "applied": row["applied"],
        "overruled_by": row["overruled_by"],
        "status": row["status"],
        "published": row["published"],
        "scope": row["scope"],
        "project": str(row["item_body"].get("project", "")),
        "summary": texts.ref(owner, row["summary"]),
        "reason": texts.ref(owner, row["reason"]),
        "decided_by": row["decided_by"],
        "decided_at": row["decided_at"].isoformat(timespec="microseconds")
        if row["decided_at"]
        else "",
        "last_event": int(row["last_event"]),
        "values": values,
        "keep_local": own and item_id in unpushed,
    }
    item = row["item_body"]
    if row["item_kind"] == "node" and not own:
        payload["node"] = {
            **{
                k: item[k]
                for k in (
                    "session_id",
                    "project",
                    "type",
                    "file",
                    "line_start",
                    "line_end",
                    "confidence",
                    "tier",
                    "developer",
                    "informativeness",
                )
            },
            "evidence": texts.ref(owner, item.get("evidence", "")),
            "session_started_at": str(item.get("session_started_at", "")),
            "created_at": str(item.get("created_at", "")),
            "edges": item.get("edges", []),
        }
    elif row["item_kind"] == "draft" and not own:
        payload["draft"] = {
            "pattern_id": item["pattern_id"],
            "name": item["name"],
            "content_hash": store_blob(conn, redact(item["content"])),
            "citations": item.get("citations", []),
            "staged_at": payload["at"],
            "path": str(root / item["name"] / "SKILL.md"),
        }
    return payload
