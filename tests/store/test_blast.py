"""Hand-made relations (checked) and the blast radius on diamonds, chains and cycles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.lifecycle.graph import RelationError
from store.verify import verify
from tests.store.conftest import write_skill


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    """base <- left, right (requires); top requires left and right: a diamond; app extends
    top; docs complements base."""
    library = make_library()
    root = tmp_path / "skills"
    for name in ("base", "left", "right", "top", "app", "docs", "alone"):
        write_skill(root, name, f"The {name} skill.")
    library.scan([root])
    for a, kind, b in (
        ("left", "requires", "base"),
        ("right", "requires", "base"),
        ("top", "requires", "left"),
        ("top", "requires", "right"),
        ("app", "extends", "top"),
        ("docs", "complements", "base"),
    ):
        library.relate(a, kind, b)
    return library


def test_diamond_dependents_are_found_once_at_their_nearest_depth(lib: Library) -> None:
    radius = lib.blast("base")
    got = [(d.name, d.depth) for d in radius.dependents]
    assert got == [("left", 1), ("right", 1), ("top", 2), ("app", 3)]
    app = radius.dependents[-1]
    assert app.path == ("app", "top", "left", "base")
    assert app.relation == "extends"
    assert [r.name for r in radius.related] == ["docs"]
    assert lib.blast("alone").dependents == ()


def test_relations_are_checked(lib: Library) -> None:
    with pytest.raises(RelationError, match="cycle: base -> app -> top -> left -> base"):
        lib.relate("base", "requires", "app")
    with pytest.raises(RelationError, match="itself"):
        lib.relate("base", "requires", "base")
    with pytest.raises(RelationError, match="no skill named 'ghost'"):
        lib.relate("ghost", "requires", "base")
    with pytest.raises(RelationError, match="unknown relation"):
        lib.relate("app", "loves", "base")
    assert lib.relate("left", "requires", "base").startswith("already there")
    # a complement may point back: only requires/extends cycles are refused
    assert lib.relate("base", "complements", "docs").startswith("added")
    assert verify(lib).ok


def test_removing_a_relation_shrinks_the_radius(lib: Library) -> None:
    lib.relate("app", "extends", "top", remove=True)
    assert [d.name for d in lib.blast("base").dependents] == ["left", "right", "top"]
    with pytest.raises(RelationError, match="no hand-made relation"):
        lib.relate("app", "extends", "top", remove=True)
    assert verify(lib).ok


def test_a_cycle_from_frontmatter_still_terminates(lib: Library, tmp_path: Path) -> None:
    root = tmp_path / "cyclic"
    write_skill(root, "ping", "Ping.", extra="metadata:\n  requires: pong\n")
    write_skill(root, "pong", "Pong.", extra="metadata:\n  requires: ping\n")
    lib.scan([root])
    assert [d.name for d in lib.blast("ping").dependents] == ["pong"]


def test_blast_includes_sessions_patterns_and_drafts(demo_library: Library) -> None:
    used = demo_library.blast("sql-tuning")  # used in the session both drafts learned from
    assert used.sessions
    assert used.patterns
    assert used.drafts
    with pytest.raises(RelationError, match="no skill named"):
        demo_library.blast("no-such-skill")
