"""The change probe: the event log's head, and what changed since the last look."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from store.changes import ChangeProbe
from store.library import Library
from tests.store.conftest import write_skill


def test_the_probe_sees_commits_from_any_connection_and_ignores_bookkeeping(
    make_library: Callable[..., Library], tmp_path: Path
) -> None:
    library = make_library()
    probe = ChangeProbe(library.db)
    assert probe.poll() is None  # nothing changed: nothing to do

    write_skill(tmp_path / "skills", "deploy", "Deploy the service.")
    library.scan([tmp_path / "skills"])
    changes = probe.poll()
    assert changes is not None
    assert "skill.installed" in changes.types
    assert probe.poll() is None

    seen = probe.seen
    library.suggest_logged("deploy the service")
    assert probe.poll() is None  # the retrieval log changes nothing a view shows
    assert probe.seen > seen  # though it was appended (and looked at once)

    other = Library(library.paths.root, embedder=library.embedder)  # another process's view
    try:
        other.change_status("deploy", "skill.deprecated", "drifting")
    finally:
        other.close()
    changes = probe.poll()
    assert changes is not None
    assert changes.types == frozenset({"skill.deprecated"})
