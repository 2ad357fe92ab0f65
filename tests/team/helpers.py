"""Building team test libraries: sessions with approved nodes, as two developers would have."""

from __future__ import annotations

from store.library import Library
from tests.store.test_patterns import add_node, add_session


def developer(
    library: Library,
    prefix: str,
    project: str,
    summaries: list[str],
    *,
    scope: str = "PROJECT",
    approve: bool = True,
    session_day: int = 10,
) -> list[str]:
    """One session of `project` with a node per summary (ids `n_<prefix><i>`), approved."""
    session = f"{prefix}-session"
    add_session(library, session, project, f"2026-10-{session_day:02d}T09:00:00+00:00")
    ids = []
    for i, summary in enumerate(summaries):
        node_id = f"n_{prefix}{i}"
        add_node(library, node_id, session, project, summary, scope=scope, line=10 * (i + 1))
        ids.append(node_id)
    if approve:
        library.review("approve", ids)
    return ids


def events(library: Library) -> int:
    return library.last_seq()
