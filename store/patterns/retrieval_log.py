"""The retrieval log (DESIGN §7): what `suggest`, `search`, `pitfalls`, `diagnose`, `profile`
and the SessionStart hook returned, the evidence graduation and decay count on.

Every retrieval is a `retrieval.logged` event, unless the log has a window (`window` seconds,
0 by default; the MCP server sets one, see `mcp.log_window_seconds`). An agent repeats the
same call many times, and one event per call would grow the log without telling anything new,
so with a window:

- the first call of a kind (same tool, query, project, session and the same hits, ranks and
  scores) is logged at once as `retrieval.logged`, and opens a window;
- identical calls within `window` seconds of it are counted in memory only;
- when windows close, their counts and the time of their last call are written as one
  `retrieval.repeated` roll-up event (`repeats`: [seq of the logged event, calls, last]).
  Windows close when a later call finds them expired, on `flush` (the MCP server flushes
  periodically, and on a stop signal), when more than `MAX_OPEN` are open (the oldest first),
  and when the library closes. A process killed outright (SIGKILL) loses the counts of its
  open windows, nothing else.

A repeat counts as a full retrieval everywhere: the `calls` of its retrieval, the
`retrieval_count` and `last_retrieved_at` of every node and pattern it returned, the decay
clock it resets, and the retrieval rate of graduation. Replaying the log gives the same
projections, because the roll-up is an event like any other.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from store.events import retrieval_payload
from store.ingest.redact import redact

if TYPE_CHECKING:
    from store.kernel import Kernel

Hit = tuple[str, str, int, float]
#: More open windows than this close the oldest (bounds memory for endlessly varied calls).
MAX_OPEN = 4096


@dataclass
class _Window:
    seq: int  # the `retrieval.logged` event the repeats belong to
    opened: datetime
    calls: int = 0  # repeats not yet written
    last: str = ""


class RetrievalLog:
    """Appends retrievals to a library's event log, coalescing repeats within `window`."""

    def __init__(self, library: Kernel, window: float = 0.0, channel: str = "") -> None:
        self.library = library
        self.window = window
        #: Where the calls come from ("mcp" in the MCP server): their tools are logged as
        #: `<channel>.<tool>`, which tells an agent's request from a person's
        #: (`store.patterns.retrieval_origin`).
        self.channel = channel
        self._open: OrderedDict[tuple[Any, ...], _Window] = OrderedDict()
        self._lock = threading.Lock()
        library.on_close(self.flush)  # the counts still held in memory are written on close

    def record(
        self,
        tool: str,
        query: str,
        hits: Sequence[Hit],
        *,
        project: str = "",
        session_id: str = "",
    ) -> int:
        """Log one retrieval; returns the seq of the `retrieval.logged` event it counts in.
        The query is kept with its secrets masked (an agent pastes the error it is stuck on)."""
        if self.channel and not tool.startswith(f"{self.channel}."):
            tool = f"{self.channel}.{tool}"
        payload = retrieval_payload(tool, redact(query), hits, project, session_id)
        if self.window <= 0:
            return self._append(payload)
        key = _key(payload)
        with self._lock:
            stamp = self.library.clock()
            now = datetime.fromisoformat(stamp)
            closing = self._expired(now)
            found = self._open.get(key)
            if found is not None:
                found.calls += 1
                found.last = stamp
                self._write(closing)
                return found.seq
            if len(self._open) >= MAX_OPEN:
                closing.append(self._open.popitem(last=False)[1])
            self._write(closing)
            seq = self._append(payload)
            self._open[key] = _Window(seq, now)
            return seq

    def flush(self, *, expired_only: bool = False) -> int:
        """Write the counts of closing windows as one roll-up event: every window, or only
        those older than `window`. Returns how many repeats were written."""
        with self._lock:
            if expired_only:
                closing = self._expired(datetime.fromisoformat(self.library.clock()))
            else:
                closing = list(self._open.values())
                self._open.clear()
            return self._write(closing)

    def pending(self) -> int:
        """Repeats counted in memory and not yet written."""
        with self._lock:
            return sum(w.calls for w in self._open.values())

    def _expired(self, now: datetime) -> list[_Window]:
        """Take the windows older than `window` out (they were opened in order, so they are
        the first ones)."""
        closing: list[_Window] = []
        while self._open:
            oldest = next(iter(self._open.values()))
            if (now - oldest.opened).total_seconds() < self.window:
                break
            closing.append(self._open.popitem(last=False)[1])
        return closing

    def _write(self, windows: list[_Window]) -> int:
        """One roll-up event for the repeats of closed windows; returns how many."""
        repeats = sorted((w.seq, w.calls, w.last) for w in windows if w.calls)
        if repeats:
            payload = {"repeats": [list(r) for r in repeats]}
            with self.library.db.write() as conn:
                self.library.append_event(conn, "retrieval.repeated", "retrieval:repeats", payload)
        return sum(calls for _, calls, _ in repeats)

    def _append(self, payload: dict[str, Any]) -> int:
        with self.library.db.write() as conn:
            event = self.library.append_event(
                conn, "retrieval.logged", f"retrieval:{payload['tool']}", payload
            )
        return event.seq


def _key(payload: dict[str, Any]) -> tuple[Any, ...]:
    hits = tuple(tuple(h) for h in payload["hits"])
    return (payload["tool"], payload["query"], payload["project"], payload["session_id"], hits)
