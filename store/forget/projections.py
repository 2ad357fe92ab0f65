"""The projection of `blob.erased` (see `store.forget`): tombstones, redactions, and the
patterns and drafts that quoted what was erased.

Replaying it is idempotent: a blob already erased keeps its first tombstone, so `rebuild`
and the scratch replay of `verify` give the same result as the live write.
"""

from __future__ import annotations

import sqlite3

from store.models import Event
from store.projections import Projection

projection = Projection("forget")
handles = projection.handles

#: Why a pending draft of a forgotten pattern was set aside.
DRAFT_REASON = "the pattern's content was forgotten"


@handles("blob.erased")
def _blob_erased(conn: sqlite3.Connection, event: Event) -> None:
    p = event.payload
    reason = str(p.get("reason", ""))
    replaced = {str(old): str(new) for old, new in p.get("replaced", [])}
    for digest in [*p.get("erased", []), *replaced]:
        conn.execute("INSERT OR IGNORE INTO blobs(hash, text) VALUES (?, '')", (digest,))
        conn.execute(
            "UPDATE blobs SET text='', erased_at=?, erased_seq=?, erased_reason=?, replaced_by=?"
            " WHERE hash=? AND erased_at=''",
            (event.ts, event.seq, reason, replaced.get(digest, ""), digest),
        )
    conn.executemany(
        "INSERT OR REPLACE INTO redactions(seq, hash, redacted_hash, by_seq) VALUES (?,?,?,?)",
        [(int(r["seq"]), r["hash"], r["redacted_hash"], event.seq) for r in p.get("redacted", [])],
    )
    patterns = [str(x) for x in p.get("patterns", [])]
    conn.executemany(
        "UPDATE patterns SET status=CASE WHEN status='graduated' THEN status ELSE 'dissolved'"
        " END, fingerprint='', updated_at=? WHERE pattern_id=?",
        [(event.ts, pid) for pid in patterns],
    )
    conn.executemany(
        "UPDATE drafts SET status='rejected', decided_at=?, decided_by=?, reason=?"
        " WHERE pattern_id=? AND status='pending'",
        [(event.ts, event.actor, DRAFT_REASON, pid) for pid in patterns],
    )
