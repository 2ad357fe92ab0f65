"""The review queue's reads: the `best` order (informativeness × confidence, a total order),
grouping by session, the count of suppressed nodes, and undoing decisions on suppressed nodes.

Nodes are written as `node.extracted` events (as the ingest pipeline writes them), so the
projections under test are the real ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from itertools import groupby
from typing import Any

import pytest

from store.library import Library
from store.sessions.review import ORDERS
from store.verify import verify

#: (session, informativeness, confidence, suppressed reason) per node, in extraction order.
NODES: tuple[tuple[str, float, float, str], ...] = (
    ("s-a", 0.50, 0.60, ""),  # 0.300
    ("s-b", 0.90, 0.70, ""),  # 0.630 best
    ("s-a", 0.60, 0.50, ""),  # 0.300, ties with the first: created later
    ("s-c", 0.20, 0.45, "narration of intent, not a finding"),  # 0.090
    ("s-b", 0.30, 0.45, ""),  # 0.135
    ("s-c", 0.80, 0.45, ""),  # 0.360
    ("s-a", 1.00, 0.35, "agent mechanics [bold]not[/bold] knowledge"),  # 0.350
    ("s-b", 0.00, 0.75, ""),  # 0.000: from before the knowledge bar
)


def score(node: Any) -> float:
    return float(node.informativeness * node.confidence)


def write_queue(library: Library, nodes: tuple[tuple[str, float, float, str], ...]) -> list[str]:
    """Store `nodes` through events; returns their ids in extraction order."""
    ids = []
    with library.db.write() as conn:
        messages = "[]"  # no archived messages: the queue is what is tested
        digest = hashlib.sha256(messages.encode()).hexdigest()
        conn.execute("INSERT OR IGNORE INTO blobs(hash, text) VALUES (?,?)", (digest, messages))
        for session in sorted({n[0] for n in nodes}):
            library.append_event(
                conn,
                "session.ingested",
                f"session:{session}",
                {
                    "session_id": session,
                    "project": f"/work/{session}",
                    "branch": "main",
                    "client_version": "2.1.39",
                    "started_at": f"2026-10-0{ord(session[-1]) - 96}T08:00:00Z",
                    "ended_at": "2026-10-09T00:00:00Z",
                    "turns": 1,
                    "tool_calls": 0,
                    "errors": 0,
                    "skills_used": [],
                    "skipped": {},
                    "developer": "dev",
                    "messages_hash": digest,
                    "files": [],
                },
            )
        for number, (session, informativeness, confidence, reason) in enumerate(nodes):
            node_id = f"n_{number:04d}"
            node = {
                "node_id": node_id,
                "session_id": session,
                "project": f"/work/{session}",
                "type": "DISCOVERY",
                "summary": f"Finding {number}: `pool_size=5` exhausts the pool under load.",
                "evidence": f"evidence {number}",
                "file": f"{session}.jsonl",
                "line_start": number + 1,
                "line_end": number + 1,
                "confidence": confidence,
                "scope": "PROJECT",
                "tier": "warm",
                "strategy": "keywords",
                "developer": "dev",
                "key": str(number),
                "edges_in": [],
                "informativeness": informativeness,
                "suppressed": reason,
            }
            library.append_event(conn, "node.extracted", f"node:{node_id}", {"node": node})
            ids.append(node_id)
    return ids


@pytest.fixture
def library(make_library: Callable[..., Library]) -> Library:
    lib: Library = make_library()
    write_queue(lib, NODES)
    return lib


def test_best_puts_the_most_informative_and_confident_first(library: Library) -> None:
    rows = library.nodes(status="pending", order="best")
    assert [r.node_id for r in rows] == ["n_0001", "n_0005", "n_0000", "n_0002", "n_0004", "n_0007"]
    scores = [score(r) for r in rows]
    assert scores == sorted(scores, reverse=True)
    # a tie on the score goes to the node found first (n_0000 before n_0002, both 0.30)
    assert scores[2] == pytest.approx(scores[3])


def test_every_order_is_total(make_library: Callable[..., Library]) -> None:
    """Nodes equal in everything an order looks at still come in one order: by node id."""
    assert "best" in ORDERS
    library = make_library()
    ids = write_queue(library, (("s-a", 0.5, 0.6, ""),) * 6)
    with library.db.write() as conn:  # same moment for all: only the node id can decide
        conn.execute("UPDATE nodes SET created_at = '2026-10-01T00:00:00Z'")
    for order in ORDERS:
        expected = ids[::-1] if order == "newest" else ids
        assert [n.node_id for n in library.nodes(order=order)] == expected, order
        page = library.nodes(order=order, limit=3, offset=2)
        assert [n.node_id for n in page] == expected[2:5], order


def test_suppressed_nodes_are_listed_only_when_asked_for(library: Library) -> None:
    suppressed = library.nodes(status="suppressed", order="best")
    assert [n.node_id for n in suppressed] == ["n_0006", "n_0003"]
    assert suppressed[0].suppressed_reason == "agent mechanics [bold]not[/bold] knowledge"
    assert suppressed[0].informativeness == 1.0
    counts = library.queue_counts()
    assert (counts.pending, counts.suppressed) == (6, 2)


def test_grouped_by_session_keeps_each_session_together_best_first(library: Library) -> None:
    rows = library.nodes(status="pending", order="best", by_session=True)
    sessions = [key for key, _ in groupby(rows, key=lambda n: n.session_id)]
    assert sessions == ["s-b", "s-c", "s-a"]  # each once, the one with the best node first
    assert [n.node_id for n in rows] == [
        "n_0001",
        "n_0004",
        "n_0007",
        "n_0005",
        "n_0000",
        "n_0002",
    ]
    for _, group in groupby(rows, key=lambda n: n.session_id):
        scores = [score(n) for n in group]
        assert scores == sorted(scores, reverse=True)
    # another order inside the groups: sessions come in the order of their first node
    oldest = library.nodes(status="pending", order="oldest", by_session=True)
    assert [n.node_id for n in oldest] == [
        "n_0000",
        "n_0002",
        "n_0001",
        "n_0004",
        "n_0007",
        "n_0005",
    ]
    # pages of the grouped list are slices of it
    page = library.nodes(status="pending", order="best", by_session=True, limit=2, offset=3)
    assert page == rows[3:5]


def test_session_starts(library: Library) -> None:
    assert library.session_starts() == {
        "s-a": "2026-10-01T08:00:00Z",
        "s-b": "2026-10-02T08:00:00Z",
        "s-c": "2026-10-03T08:00:00Z",
    }


def test_decisions_on_suppressed_nodes_are_undone_back_below_the_bar(library: Library) -> None:
    promoted = library.review("unsuppress", ["n_0003", "n_0006"])
    assert {n.status for n in promoted} == {"pending"}
    assert promoted[0].suppressed_reason  # the reason stays on record
    assert library.queue_counts().suppressed == 0
    restored = library.undo_review()
    assert sorted(n.node_id for n in restored) == ["n_0003", "n_0006"]
    assert {n.status for n in restored} == {"suppressed"}
    assert [e.action for e in library.audit(node_id="n_0003")] == ["reopened", "unsuppressed"]

    approved = library.review("approve", ["n_0003"])[0]
    assert (approved.status, approved.decided_by) == ("approved", library.actor)
    back = library.undo_review()[0]
    assert back.status == "suppressed"
    assert (back.decided_at, back.decided_by) == ("", "")  # no longer decided
    assert verify(library).ok
