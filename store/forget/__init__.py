"""`librarian forget`: erase text that got into the library, for good, and record that it did.

What can be forgotten: a node (its summary, evidence and review texts, and the duplicates
merged into it; `with_messages` also the archived messages its evidence quoted), a session
(every archived message and node of it, and the details of outcomes inferred from it), or a
text (every archived message, node text, pattern text, draft, outcome detail and retrieval
query that contains it, literally or as a regex).

The rules, so that nothing is left half-forgotten (`planning`):

- a node that quotes an erased message (same session, file and overlapping lines), or one of
  whose texts is erased, is forgotten whole: all its texts are erased and it leaves the queue,
  the patterns and search for good;
- a pattern that had a forgotten node as a member, or whose text matched, is forgotten whole:
  its texts in every record are erased, it is dissolved (the next `consolidate` rebuilds what
  the remaining nodes support), and its pending drafts are set aside;
- a SKILL.md (graduated or scanned) is a file its owner keeps: never touched, only named.

How (`erasing`): a blob is emptied and stays as a tombstone (see `store.content`). Text that an
event from before schema 9 carries inline is redacted in place: the payload gets a reference to
a tombstone instead, and the `blob.erased` event records the event's original hash and the
hash over the redacted payload, so `check_chain` accepts that event, and only it, as it is now.
A session archive from before schema 9 is written again with each message in its own blob,
the old archive becoming a tombstone `replaced_by` the new one.

The `blob.erased` event names hashes, counts, the scope and the reason, never the text or what
was searched for. Then every projection is rebuilt from the log (so the live tables are what a
replay gives), cached vectors of forgotten node texts are deleted, and the database files are
scrubbed: the write runs with `secure_delete`, then the WAL is checkpointed and truncated, the
file vacuumed, and the WAL truncated again.
"""

from store.forget.planning import SCOPES, ForgetError, matcher, plan

# The erasing (`store.forget.erasing`: `forget`, `scrub`) writes events, so this package's
# top imports only the planning: the event log's projections include `projections` here.
__all__ = ["SCOPES", "ForgetError", "matcher", "plan"]
