"""`librarian team push`: this library's approved nodes, decisions and drafts into the hub.

One round trip greets the hub (registering the library, anchoring its chain head, checking
that the log still holds the head the hub anchored last); then the queue goes in batches,
each one transaction on the hub. A batch the hub committed is recorded here (`team.pushed`,
which moves the push cursor) right after; if this process or the hub dies in between, the
next push sends the batch again and the hub skips what it has (each op's global id is
`<library>:<local seq>`). Nothing new: one round trip.

The next batch is made (its nodes read and redacted here) while the hub takes one; it is sent
only once the one before it is recorded, so a failed batch stops the push before anything
after it reaches the hub.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from store.chain_head import hash_at, tip
from store.models.events import EventType
from store.team import hub as hub_api
from store.team.connection import configured_hub, connect, describe, hub_errors
from store.team.errors import TeamError
from store.team.local import QueuePlan, TeamDeps, join, library_id_for, state
from store.text import plural

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
            f"pushed {plural(self.ops, 'change')} in {plural(self.batches, 'batch', 'batches')}"
            f" to {self.hub} as"
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
        plan = QueuePlan(conn, library_id, cursor)
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
        who = Batch(library_id, user, _head_of(deps, anchored))
        tally = _send(deps, hub, who, plan, batch, progress)
    finally:
        hub.close()
    return PushReport(
        hub=where,
        user=user,
        library_id=library_id,
        queued_events=plan.events,
        ops=tally["ops"],
        applied=tally["applied"],
        duplicates=tally["duplicates"],
        overruled=tally["overruled"],
        skipped=tally["skipped"],
        batches=tally["batches"],
        through=plan.through,
        anchored=anchored,
        round_trips=1 + tally["batches"],
        seconds=round(time.perf_counter() - started, 3),
    )


@dataclass(frozen=True)
class Batch:
    """Who pushes, and the chain head the first batch's record carries."""

    library_id: str
    user: str
    head: list[object] | None


def _send(
    deps: TeamDeps,
    hub: hub_api.Conn,
    who: Batch,
    plan: QueuePlan,
    size: int,
    progress: Progress | None,
) -> dict[str, int]:
    """The batches in order, each sent once the one before it is recorded here; the next one
    is made while the hub takes one (their work overlaps), and a batch that fails stops the
    push before anything after it reaches the hub."""
    tally = dict.fromkeys(("ops", "applied", "duplicates", "overruled", "skipped", "batches"), 0)
    if not plan.events:
        return tally
    sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="team-push")
    try:
        sent: _Sent | None = None
        for chunk, through in _batches(deps, plan, size):  # made while `sent` is on the hub
            if sent is not None:
                _record(deps, who, sent, tally, len(plan), progress)
            future: Future[dict[str, Any]] = Future()
            if chunk:
                future = sender.submit(hub_api.push, hub, who.library_id, through, chunk)
            else:
                future.set_result({})
            sent = _Sent(future, chunk, through, first=sent is None)
        if sent is not None:
            _record(deps, who, sent, tally, len(plan), progress)
    finally:
        sender.shutdown(wait=True)
    return tally


@dataclass(frozen=True)
class _Sent:
    """A batch on its way to the hub."""

    future: Future[dict[str, Any]]
    ops: list[dict[str, Any]]
    through: int
    first: bool


def _batches(
    deps: TeamDeps, plan: QueuePlan, size: int
) -> Iterator[tuple[list[dict[str, Any]], int]]:
    """(ops, through) per batch: `through` is the last op's event, the last batch's the last
    event considered; a queue with no op at all still moves the cursor (an empty batch)."""
    ahead: list[dict[str, Any]] = []
    made = False
    while True:
        with deps.db.read() as conn:  # one op more than a batch: is this one the last?
            ahead += plan.take(conn, size + 1 - len(ahead))
        if len(ahead) <= size:
            if ahead or not made:
                yield ahead, plan.through
            return
        chunk, ahead = ahead[:size], ahead[size:]
        made = True
        yield chunk, int(chunk[-1]["gid"].rsplit(":", 1)[1])


def _record(
    deps: TeamDeps,
    who: Batch,
    sent: _Sent,
    tally: dict[str, int],
    left: int,
    progress: Progress | None,
) -> None:
    """Wait for the hub to commit a batch, then record it here (`team.pushed`)."""
    with hub_errors():
        result = sent.future.result()
    if sent.ops:
        tally["batches"] += 1
    for key in ("applied", "duplicates", "overruled", "skipped"):
        tally[key] += int(result.get(key, 0))
    ids = result.get("ids", {})
    items = [
        [op["item_id"], op.get("kind") or "", op["op"], int(ids.get(op["item_id"], 0))]
        for op in sent.ops
    ]
    with deps.db.write() as conn:
        deps.append_event(
            conn,
            EventType.TEAM_PUSHED,
            "team",
            {
                "library_id": who.library_id,
                "user": who.user,
                "through": sent.through,
                "ops": len(sent.ops),
                "items": items,
                "head": who.head if sent.first else None,
            },
        )
    tally["ops"] += len(sent.ops)
    if progress is not None:
        progress(tally["ops"], tally["ops"] + left)


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
