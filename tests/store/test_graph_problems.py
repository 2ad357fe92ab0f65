"""Graph problems (dangling references, frontmatter cycles, self-relations) and a skill's
dependencies, over real libraries scanned from SKILL.md folders."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.lifecycle.graph import RelationError, strongly_connected
from store.models import Dependency
from store.verify import verify
from tests.store.conftest import write_skill


def requires(*names: str, kind: str = "requires") -> str:
    """Frontmatter lines declaring relations of one kind."""
    return f"metadata:\n  {kind}: [{', '.join(names)}]\n"


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    """A cycle a -> b -> c -> a from the frontmatter, a diamond (top -> left, right -> base),
    a self-relation, a dangling reference and a hand-made relation."""
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "a", "A.", extra=requires("b"))
    write_skill(root, "b", "B.", extra=requires("c"))
    write_skill(root, "c", "C.", extra=requires("a", "ghost"))
    write_skill(root, "base", "Base.")
    write_skill(root, "left", "Left.", extra=requires("base"))
    write_skill(root, "right", "Right.", extra=requires("base"))
    write_skill(root, "top", "Top.", extra=requires("left", "right") + "  complements: [docs]\n")
    write_skill(root, "docs", "Docs.")
    write_skill(root, "narcissus", "Requires itself.", extra=requires("narcissus"))
    library.scan([root])
    library.relate("docs", "extends", "base")
    return library


def test_a_frontmatter_cycle_is_reported_once_from_its_smallest_name(lib: Library) -> None:
    problems = lib.graph_problems()
    assert problems.cycles == (("a", "b", "c"),)
    assert problems.knots == (("a", "b", "c"),)
    assert problems.touching("b").cycles == (("a", "b", "c"),)
    assert problems.touching("base").cycles == ()


def test_dangling_references_and_self_relations(lib: Library) -> None:
    problems = lib.graph_problems()
    assert [(r.source, r.type, r.target) for r in problems.dangling] == [("c", "requires", "ghost")]
    assert all(r.dangling for r in problems.dangling)
    # A self-relation is reported, but is not a cycle of the graph.
    assert [(r.source, r.target) for r in problems.self_loops] == [("narcissus", "narcissus")]
    assert all("narcissus" not in c for c in problems.cycles)
    assert problems.count == 3
    assert problems.touching("ghost").dangling == problems.dangling
    assert problems.touching("top").count == 0


def test_a_diamond_is_not_a_cycle(lib: Library) -> None:
    radius = lib.blast("base")
    assert [(d.name, d.depth) for d in radius.dependents] == [
        ("docs", 1),
        ("left", 1),
        ("right", 1),
        ("top", 2),
    ]
    assert not any("base" in knot for knot in lib.graph_problems().knots)


def test_dependencies_carry_origin_and_the_targets_status(lib: Library) -> None:
    assert lib.dependencies("top") == [
        Dependency("left", "requires", ("extracted",), "stable"),
        Dependency("right", "requires", ("extracted",), "stable"),
        Dependency("docs", "complements", ("extracted",), "stable"),
    ]
    assert lib.dependencies("c") == [
        Dependency("a", "requires", ("extracted",), "stable"),
        Dependency("ghost", "requires", ("extracted",), "missing"),
    ]
    assert lib.dependencies("c")[1].missing
    (manual,) = lib.dependencies("docs")
    assert manual.manual
    assert manual.origins == ("manual",)
    lib.change_status("base", "skill.deprecated", "replaced")
    assert lib.dependencies("docs")[0].status == "deprecated"
    assert lib.dependencies("base") == []
    with pytest.raises(RelationError, match="no skill named 'nope'"):
        lib.dependencies("nope")


def test_the_same_relation_by_hand_and_in_the_frontmatter_is_one_dependency(
    lib: Library,
) -> None:
    lib.relate("left", "requires", "base")
    (dep,) = lib.dependencies("left")
    assert dep.origins == ("extracted", "manual")
    assert dep.manual


def test_problems_follow_the_catalog(lib: Library, tmp_path: Path) -> None:
    assert lib.graph_problems().cycles
    # Rewriting c without its requirements breaks the cycle and the dangling reference.
    write_skill(tmp_path / "skills", "c", "C, repaired.")
    lib.scan([tmp_path / "skills"])
    problems = lib.graph_problems()
    assert problems.cycles == ()
    assert problems.dangling == ()
    # A hand-made relation to a skill that is then uninstalled dangles.
    lib.relate("top", "complements", "narcissus")
    (tmp_path / "skills" / "narcissus" / "SKILL.md").unlink()
    lib.scan([tmp_path / "skills"])
    assert [(r.source, r.target) for r in lib.graph_problems().dangling] == [("top", "narcissus")]
    assert lib.dependencies("top")[-1] == Dependency(
        "narcissus", "complements", ("manual",), "missing"
    )
    assert verify(lib).ok


def test_the_graph_notices_a_relation_swapped_while_the_clock_stands_still(
    make_library: Callable[..., Library], tmp_path: Path
) -> None:
    from store.events import stepping_clock

    library = make_library("still")
    library.clock = stepping_clock(step_seconds=0)
    root = tmp_path / "still-skills"
    for name in ("x", "y", "z"):
        write_skill(root, name, f"{name}.")
    library.scan([root])
    library.relate("x", "requires", "y")
    assert [d.name for d in library.blast("y").dependents] == ["x"]
    library.relate("x", "requires", "y", remove=True)
    library.relate("x", "requires", "z")  # same count, same time: only the events differ
    assert library.blast("y").dependents == ()
    assert [d.name for d in library.blast("z").dependents] == ["x"]


def test_focus_gathers_the_dependencies_radius_and_problems(lib: Library) -> None:
    focus = lib.graph_focus("c")
    assert (focus.name, focus.status, focus.version_no) == ("c", "stable", 1)
    assert [d.name for d in focus.dependencies] == ["a", "ghost"]
    assert [d.name for d in focus.radius.dependents] == ["b", "a"]
    assert focus.problems.cycles == (("a", "b", "c"),)
    assert len(focus.problems.dangling) == 1


def test_the_default_skill_is_the_deprecated_one_with_the_largest_radius(lib: Library) -> None:
    assert lib.default_graph_skill() == "a"  # nothing deprecated: the first by name
    for _ in range(3):
        lib.record_outcome("left", False)  # drifting, not demoted yet
    lib.record_outcome("right", False)  # one failure: too few runs to call it drifting
    assert lib.default_graph_skill() == "left"
    lib.change_status("right", "skill.deprecated", "old")
    assert lib.default_graph_skill() == "left"  # equal radii (top): the first by name
    lib.change_status("base", "skill.deprecated", "old")
    assert lib.default_graph_skill() == "base"


def test_tarjan_finds_every_component_of_a_long_chain_without_recursion() -> None:
    size = 30_000  # far beyond Python's recursion limit
    edges = {f"n{i}": [f"n{i + 1}"] for i in range(size)}
    edges[f"n{size}"] = ["n0"]  # one big ring
    (ring,) = strongly_connected(edges)
    assert len(ring) == size + 1
    chain = {f"n{i}": [f"n{i + 1}"] for i in range(size)}
    assert len(strongly_connected(chain)) == size + 1


def test_tarjan_agrees_with_networkx_on_random_graphs() -> None:
    import networkx as nx

    rng = random.Random(5)
    for _ in range(30):
        nodes = [f"s{i}" for i in range(rng.randint(2, 40))]
        edges: dict[str, list[str]] = {}
        graph: nx.DiGraph[str] = nx.DiGraph()
        graph.add_nodes_from(nodes)
        for _ in range(rng.randint(0, 80)):
            a, b = rng.choice(nodes), rng.choice(nodes)
            if a != b:
                edges.setdefault(a, []).append(b)
                graph.add_edge(a, b)
        mine = {frozenset(c) for c in strongly_connected(edges)}
        theirs = {frozenset(c) for c in nx.strongly_connected_components(graph)}
        linked = {n for n in nodes if n in edges or any(n in t for t in edges.values())}
        assert mine == {c for c in theirs if c & linked}
