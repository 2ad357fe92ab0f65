"""The Graph screen, driven with Pilot through the app factory over a small real library:
base <- left, right (requires) <- top (requires both: a diamond) <- app (extends); docs
complements base; a frontmatter cycle ping -> pong -> ping; `secrets` requires a skill that
does not exist; one skill's name is hostile markup. `base` is deprecated, so the screen
opens on it (the deprecated skill with the largest blast radius)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from app.dialogs.relate import RelateModal
from app.dialogs.skill_picker import SkillPicker
from app.factory import make_app
from app.screens.graph import GraphScreen
from app.screens.skills import SkillsScreen
from app.screenshots import settle
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.conftest import TEST_NOW
from tests.store.conftest import write_skill
from widgets.graph_card import GraphCard
from widgets.graph_list import GraphList

HOSTILE = "[bold]x[/bold] [link=http://e]y[/link]"


def requires(*names: str, kind: str = "requires") -> str:
    return f"metadata:\n  {kind}: [{', '.join(names)}]\n"


@pytest.fixture
def library(tmp_path: Path, _embedder: FastEmbedder) -> Iterator[Library]:
    root = tmp_path / "skills"
    write_skill(root, "base", "The base skill.")
    write_skill(root, "left", "Left.", extra=requires("base"))
    write_skill(root, "right", "Right.", extra=requires("base"))
    write_skill(root, "top", "Top.", extra=requires("left", "right"))
    write_skill(root, "app", "App.", extra=requires("top", kind="extends"))
    write_skill(root, "docs", "Docs.", extra=requires("base", kind="complements"))
    write_skill(root, "ping", "Ping.", extra=requires("pong"))
    write_skill(root, "pong", "Pong.", extra=requires("ping"))
    write_skill(root, "secrets", "Secrets.", extra=requires("vault-cli"))
    write_skill(root, "hostile", f"Hostile {HOSTILE} description.")
    lib = Library(tmp_path / "lib", embedder=_embedder, clock=stepping_clock(TEST_NOW, 0))
    lib.scan([root], embed=False)
    lib.change_status("base", "skill.deprecated", "replaced by base2")
    try:
        yield lib
    finally:
        lib.close()


@pytest.fixture
async def pilot(library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(160, 44)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        yield pilot


def screen(pilot: Pilot[int]) -> GraphScreen:
    found = pilot.app.get_screen("graph")
    assert isinstance(found, GraphScreen)
    return found


def centre(pilot: Pilot[int]) -> str:
    focus = screen(pilot).focus_shown
    assert focus is not None
    return focus.name


def column(pilot: Pilot[int], name: str) -> GraphList:
    return screen(pilot).query_one(f"#graph-{name}", GraphList)


def names(pilot: Pilot[int], name: str) -> list[str]:
    return [r.name for r in column(pilot, name).rows]


def status(pilot: Pilot[int]) -> str:
    return str(screen(pilot).query_one("#graph-status", Static).content)


def notices(pilot: Pilot[int], severity: str | None = None) -> list[str]:
    return [
        n.message for n in pilot.app._notifications if severity is None or n.severity == severity
    ]


async def test_opens_on_the_deprecated_skill_with_its_blast_radius(pilot: Pilot[int]) -> None:
    assert screen(pilot).loaded
    assert centre(pilot) == "base"
    focus = screen(pilot).focus_shown
    assert focus is not None
    assert focus.complete
    # The dependents as a tree: each under the skill it depends on.
    rows = column(pilot, "dependents").rows
    assert [(r.name, r.depth) for r in rows] == [("left", 1), ("top", 2), ("app", 3), ("right", 1)]
    assert names(pilot, "related") == ["docs"]
    assert names(pilot, "deps") == []
    assert "blast radius: 4 skills (2 direct)" in status(pilot)
    assert column(pilot, "dependents").title == "dependents · blast radius 4 skills"
    assert column(pilot, "dependents").has_focus


async def test_enter_recentres_and_backspace_goes_back(pilot: Pilot[int]) -> None:
    await pilot.press("down", "enter")  # the second dependent: top
    await settle(pilot)
    assert centre(pilot) == "top"
    assert names(pilot, "deps") == ["left", "right"]
    assert names(pilot, "dependents") == ["app"]
    assert screen(pilot).history == ["base"]
    await pilot.press("left", "enter")  # to the dependencies column: left
    await settle(pilot)
    assert centre(pilot) == "left"
    assert screen(pilot).history == ["base", "top"]
    await pilot.press("backspace")
    await settle(pilot)
    assert centre(pilot) == "top"
    await pilot.press("backspace")
    await settle(pilot)
    assert centre(pilot) == "base"
    await pilot.press("backspace")  # nothing left: a bell, still base
    await settle(pilot)
    assert centre(pilot) == "base"


async def test_jump_to_any_skill_through_the_picker(pilot: Pilot[int]) -> None:
    await pilot.press("slash")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SkillPicker)
    await pilot.press(*"ping")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert pilot.app.screen.name == "graph"
    assert centre(pilot) == "ping"
    focus = screen(pilot).focus_shown
    assert focus is not None
    assert focus.problems.cycles == (("ping", "pong"),)
    assert "1 graph problem" in status(pilot)


async def test_a_dangling_reference_is_shown_missing_and_not_followed(
    pilot: Pilot[int],
) -> None:
    await screen(pilot).show_skill("secrets")
    await settle(pilot)
    (row,) = column(pilot, "deps").rows
    assert (row.name, row.status, row.note) == ("vault-cli", "missing", "no such skill")
    column(pilot, "deps").focus()
    await pilot.press("enter")
    await settle(pilot)
    assert centre(pilot) == "secrets"
    assert any("dangling reference" in n for n in notices(pilot, "warning"))
    assert "1 graph problem" in status(pilot)


async def test_relate_and_unrelate_through_the_modal(pilot: Pilot[int], library: Library) -> None:
    await screen(pilot).show_skill("docs")
    await settle(pilot)
    await pilot.press("plus")
    await settle(pilot)
    modal = pilot.app.screen
    assert isinstance(modal, RelateModal)
    modal.query_one(Select).value = "extends"
    modal.query_one(Input).value = "left"
    await pilot.press("enter")
    await settle(pilot)
    assert any(n.startswith("added: docs extends left") for n in notices(pilot))
    assert [(r.name, r.relation, r.note) for r in column(pilot, "deps").rows] == [
        ("left", "extends", "by hand"),
    ]
    # complements is a related skill (as `blast` has it), not a dependency
    assert [(r.name, r.relation) for r in column(pilot, "related").rows] == [
        ("base", "→ complements")
    ]
    assert [d.name for d in library.blast("left").dependents] == ["docs", "top", "app"]
    # The frontmatter's relation is not removed here ...
    column(pilot, "related").focus()
    await pilot.press("minus")
    await settle(pilot)
    assert any("only hand-made relations" in n for n in notices(pilot, "warning"))
    # ... the hand-made one is.
    column(pilot, "deps").focus()
    await pilot.press("minus")
    await settle(pilot)
    assert any(n.startswith("removed: docs extends left") for n in notices(pilot))
    assert names(pilot, "deps") == []
    assert names(pilot, "related") == ["base"]
    assert library.dependencies("docs")[0].name == "base"


async def test_refused_relations_are_notified(pilot: Pilot[int], library: Library) -> None:
    for target, expected in (
        ("app", "would close a cycle: base -> app -> top -> left -> base"),
        ("ghost", "no skill named 'ghost'"),
        ("base", "cannot be related to itself"),
    ):
        await pilot.press("plus")
        await settle(pilot)
        pilot.app.screen.query_one(Input).value = target
        await pilot.press("enter")
        await settle(pilot)
        assert any(expected in n for n in notices(pilot, "error")), expected
    assert library.dependencies("base") == []
    assert centre(pilot) == "base"


async def test_other_screens_open_on_the_centred_skill(pilot: Pilot[int]) -> None:
    await pilot.press("i")
    await settle(pilot)
    skills = pilot.app.screen
    assert isinstance(skills, SkillsScreen)
    await pilot.press("4")
    await settle(pilot)
    assert centre(pilot) == "base"
    await pilot.press("l")
    await settle(pilot)
    assert pilot.app.screen.name == "lineage"


async def test_untrusted_text_is_shown_literally(pilot: Pilot[int]) -> None:
    await screen(pilot).show_skill("hostile")
    await settle(pilot)
    assert centre(pilot) == "hostile"
    card = screen(pilot).query_one(GraphCard)
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(card.renderable())
    assert f"Hostile {HOSTILE} description." in captured.get()
    await screen(pilot).show_skill("no-such-skill")
    await settle(pilot)
    assert centre(pilot) == "hostile"  # the old centre stays
    assert any("no skill named 'no-such-skill'" in n for n in notices(pilot, "error"))


async def test_an_empty_library_says_so(tmp_path: Path) -> None:
    with Library(tmp_path / "empty") as empty:
        app = make_app(empty, watch=False, warm=False, show_timings=False)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await pilot.press("4")
            await settle(pilot)
            graph = screen(pilot)
            assert graph.loaded
            assert graph.focus_shown is None
            assert "No skill to show yet" in str(graph.query_one(GraphCard).renderable())
            assert graph.check_action("relate", ()) is None
            await pilot.press("plus", "backspace", "slash", "escape")
            await settle(pilot)
            assert pilot.app.screen.name == "graph"
