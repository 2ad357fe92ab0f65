"""`librarian team status`, the Team screen's data, and `librarian team verify`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from store.chain_head import hash_at, tip
from store.models.team import TeamStatus
from store.team import hub as hub_api
from store.team.connection import configured_hub, connect, describe, hub_errors
from store.team.errors import TeamError, TeamNotConfigured
from store.team.local import TeamDeps, queue_size, state
from store.text import one_line


def team_status(deps: TeamDeps) -> TeamStatus:
    """The local side always; the hub's side in one round trip when it answers."""
    started = time.perf_counter()
    with deps.db.read() as conn:
        current = state(conn)
        queued = queue_size(conn)
        own = dict(
            conn.execute(
                "SELECT status, count(*) FROM team_items WHERE own=1 GROUP BY status"
            ).fetchall()
        )
        received, conflicts = conn.execute(
            "SELECT count(*) FILTER (WHERE own=0), coalesce(sum(conflicts), 0) FROM team_items"
        ).fetchone()
    local: dict[str, Any] = {
        "library_id": current.library_id,
        "queued": queued,
        "push_seq": current.push_seq,
        "pushed_at": current.pushed_at,
        "pull_cursor": current.pull_cursor,
        "pulled_at": current.pulled_at,
        "own": {str(k): int(v) for k, v in own.items()},
        "received": int(received),
        "conflicts": int(conflicts),
    }
    try:
        conninfo = configured_hub(deps.config)
    except TeamNotConfigured as exc:
        return TeamStatus(configured=False, problem=str(exc), **local)
    where = describe(conninfo)
    try:
        hub = connect(conninfo)
        try:
            with hub_errors():
                remote = hub_api.status(hub, current.library_id or "0" * 32)
        finally:
            hub.close()
    except TeamError as exc:
        return TeamStatus(configured=True, hub=where, problem=str(exc), **local)
    head = remote.get("last_head") or {}
    return TeamStatus(
        configured=True,
        hub=where,
        reachable=True,
        user=str(remote.get("user", "")),
        reviewer=bool(remote.get("reviewer")),
        hub_schema=int(remote.get("schema", 0)),
        waiting_for_me=int(remote.get("waiting_for_me", 0)),
        staged=int(remote.get("staged", 0)),
        hub_events=int(remote.get("hub_events", 0)),
        libraries=int(remote.get("libraries", 0)),
        behind=max(0, int(remote.get("hub_events", 0)) - current.pull_cursor),
        mine_in_hub={str(k): int(v) for k, v in (remote.get("mine") or {}).items()},
        anchored=int(head.get("events", 0) or 0),
        milliseconds=round((time.perf_counter() - started) * 1000, 1),
        **local,
    )


@dataclass
class TeamVerifyReport:
    """Both sides: the hub's log and projection, and this library against its anchors."""

    hub: str
    ok: bool = True
    checks: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str, problems: list[str] | None = None) -> None:
        self.checks.append({"name": name, "ok": ok, "detail": detail, "problems": problems or []})
        self.ok = self.ok and ok

    def as_dict(self) -> dict[str, Any]:
        return {"hub": self.hub, "ok": self.ok, "checks": self.checks}

    def lines(self) -> list[str]:
        """The report as text lines."""
        found = [f"team verify against {self.hub}"]
        for check in self.checks:
            mark = "ok  " if check["ok"] else "FAIL"
            found.append(f"  {mark} {check['name']}: {check['detail']}")
            found += [f"       {one_line(p, 200)}" for p in check["problems"]]
        found.append("all checks passed" if self.ok else "problems found")
        return found


def team_verify(deps: TeamDeps) -> TeamVerifyReport:
    """The hub's hash chain, its items against a replay of its log, and every chain head it
    anchored for this library against this library's log."""
    conninfo = configured_hub(deps.config)
    report = TeamVerifyReport(describe(conninfo))
    with deps.db.read() as conn:
        library_id = state(conn).library_id
    hub = connect(conninfo)
    try:
        with hub_errors():
            chain = hub_api.verify_chain(hub)
            items = hub_api.verify_items(hub)
            anchored = hub_api.heads(hub, library_id) if library_id else []
    finally:
        hub.close()
    report.add(
        "hub_chain",
        not chain["problems"],
        f"{chain['events']} hub events, hash chain "
        + ("whole" if not chain["problems"] else "broken"),
        list(chain["problems"]),
    )
    report.add(
        "hub_items",
        not items["problems"],
        f"{items['items']} items "
        + ("equal a replay of the log" if not items["problems"] else "differ from a replay"),
        list(items["problems"]),
    )
    problems: list[str] = []
    with deps.db.read() as conn:
        end = tip(conn).events
        for events, digest, when in anchored:
            here = hash_at(conn, events)
            if here is None:
                problems.append(
                    f"the hub anchored event {events} on {when}; the log here ends at {end}"
                )
            elif here != digest:
                problems.append(
                    f"event {events} has hash {here[:12]}…, the hub anchored {digest[:12]}…"
                    f" on {when}: history here was rewritten"
                )
    if not library_id:
        detail = "this library has not joined the hub yet"
    elif problems:
        detail = "local history no longer contains what it pushed"
    else:
        detail = f"{len(anchored)} anchored heads, all in the log here"
    report.add("anchors", not problems, detail, problems)
    return report
