"""`librarian team push`: this library's approved nodes, decisions and drafts into the hub.

One round trip greets the hub (registering the library, anchoring its chain head, checking
that the log still holds the head the hub anchored last); then the queue goes in batches,
each one transaction on the hub. A batch the hub committed is recorded here (`team.pushed`,
which moves the push cursor) right after; if this process or the hub dies in between, the
next push sends the batch again and the hub skips what it has (each op's global id is
`<library>:<local seq>`). Nothing new: one round trip.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from store.chain_head import hash_at, tip
from store.models.events import EventType
from store.team import hub as hub_api
from store.team.connection import configured_hub, connect, describe, hub_errors
from store.team.errors import TeamError
from store.team.local import Queue, TeamDeps, join, library_id_for, queue, state

#: Ops per hub transaction.
BATCH = 500
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class PushReport:
    """What a push did."""

    hub: str
    user: str
    library_id: str
    queued_events: int
    ops: int
    applied: int
    duplicates: int
    overruled: int
    skipped: int
    batches: int
    through: int
    anchored: int
    round_trips: int
    seconds: float

    def describe(self) -> str:
        """One line saying what happened."""
        if self.queued_events == 0:
            return f"nothing new to push to {self.hub}"
        return (
            f"pushed {self.ops} change(s) in {self.batches} batch(es) to {self.hub} as"
            f" {self.user}: {self.applied} new, {self.duplicates} already there,"
            f" {self.overruled} overruled, {self.skipped} skipped ({self.seconds:.2f} s)"
        )


def push(
    deps: TeamDeps,
    *,
    batch: int = BATCH,
    progress: Progress | None = None,
) -> PushReport:
    """Push everything queued; raises a one-line TeamError when the hub cannot take it (the
    batches it committed before stay recorded, the rest stays queued)."""
    started = time.perf_counter()
    conninfo = configured_hub(deps.config)
    where = describe(conninfo)
    library_id, joined = library_id_for(deps)
    with deps.db.read() as conn:
        cursor = state(conn).push_seq
        todo = queue(conn, library_id, cursor)
        head = tip(conn)
    hub = connect(conninfo)
    try:
        with hub_errors():
            greeting = hub_api.hello(hub, library_id, deps.actor, (head.events, head.hash))
        _check_history(deps, greeting)
        if not joined:  # the hub registered it: from now on this library is a member
            join(deps, library_id, where)
        user = str(greeting.get("user", ""))
        anchored = head.events if greeting.get("anchored") else 0
        tally = _send(deps, hub, library_id, user, todo, batch, anchored, progress)
    finally:
        hub.close()
    return PushReport(
        hub=where,
        user=user,
        library_id=library_id,
        queued_events=todo.events,
        ops=len(todo.ops),
        applied=tally["applied"],
        duplicates=tally["duplicates"],
        overruled=tally["overruled"],
        skipped=tally["skipped"],
        batches=tally["batches"],
        through=todo.through if todo.events else cursor,
        anchored=anchored,
        round_trips=1 + tally["batches"],
        seconds=round(time.perf_counter() - started, 3),
    )


def _send(
    deps: TeamDeps,
    hub: hub_api.Conn,
    library_id: str,
    user: str,
    todo: Queue,
    size: int,
    anchored: int,
    progress: Progress | None,
) -> dict[str, int]:
    tally = dict.fromkeys(("applied", "duplicates", "overruled", "skipped", "batches"), 0)
    head = _head_of(deps, anchored)
    if not todo.events:
        return tally
    chunks = [todo.ops[i : i + size] for i in range(0, len(todo.ops), size)] or [()]
    done = 0
    for number, chunk in enumerate(chunks):
        last = number == len(chunks) - 1
        through = todo.through if last else int(chunk[-1]["gid"].rsplit(":", 1)[1])
        if chunk:
            with hub_errors():
                result = hub_api.push(hub, library_id, through, list(chunk))
            tally["batches"] += 1
            for key in ("applied", "duplicates", "overruled", "skipped"):
                tally[key] += int(result.get(key, 0))
            ids = result.get("ids", {})
        else:
            ids = {}
        items = [
            [op["item_id"], op.get("kind") or "", op["op"], int(ids.get(op["item_id"], 0))]
            for op in chunk
        ]
        with deps.db.write() as conn:
            deps.append_event(
                conn,
                EventType.TEAM_PUSHED,
                "team",
                {
                    "library_id": library_id,
                    "user": user,
                    "through": through,
                    "ops": len(chunk),
                    "items": items,
                    "head": head if number == 0 else None,
                },
            )
        done += len(chunk)
        if progress is not None:
            progress(done, len(todo.ops))
    return tally


def _head_of(deps: TeamDeps, anchored: int) -> list[object] | None:
    if not anchored:
        return None
    with deps.db.read() as conn:
        digest = hash_at(conn, anchored)
    return [anchored, digest] if digest else None


def _check_history(deps: TeamDeps, greeting: dict[str, object]) -> None:
    """The hub's last anchored head must still be in this library's log."""
    last = greeting.get("last_head")
    if not isinstance(last, dict):
        return
    events, digest = int(last["events"]), str(last["hash"])
    with deps.db.read() as conn:
        here = hash_at(conn, events)
        total = tip(conn).events
    if here is None:
        raise TeamError(
            f"the hub anchored this library at event {events}, and its log now ends at event"
            f" {total}: history was lost; nothing was pushed (see `librarian team verify`)"
        )
    if here != digest:
        raise TeamError(
            f"event {events} no longer has the hash the hub anchored ({digest[:12]}…): this"
            " library's history was rewritten; nothing was pushed (see `librarian team verify`)"
        )
