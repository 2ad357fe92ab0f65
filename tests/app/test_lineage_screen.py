"""The Lineage screen (key 7), driven with Pilot through the app factory over a copy of the
demo to which the tests add a graduated skill (a pattern from three sessions, retrieved,
drafted and approved) that was then edited once, so it has two versions, a status history,
a full provenance chain and a diff."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot
from textual.widgets import Static, TabbedContent

from app.dialogs.skill_picker import SkillPicker
from app.factory import make_app
from app.screens.lineage import LineageScreen
from app.screens.sessions import SessionsScreen
from app.screenshots import paste, settle
from store.library import Library
from store.models import Draft, Lineage
from tests.app.test_patterns_screen import add_pattern, members_in_sessions, retrieve
from widgets.dag_view import DagView
from widgets.lineage_diff import LineageDiff
from widgets.lineage_events import LineageEvents
from widgets.lineage_panel import LineagePanel
from widgets.lineage_provenance import LineageProvenance
from widgets.lineage_versions import LineageVersions
from widgets.skill_table import SkillTable

PATTERN = "p_test_lineage"
ADDED = "Check the rollout history before rolling back (added after review)."
HOSTILE = "[bold]not bold[/] \x1b[31mred"


@pytest.fixture
def graduated(demo_library: Library) -> Draft:
    """A skill graduated from a pattern of three sessions, then edited (v2)."""
    library = demo_library
    add_pattern(
        library, PATTERN, "Roll back a stuck rollout first", members_in_sessions(library, 3)
    )
    retrieve(library, PATTERN, 3)
    draft = library.approve_draft(library.draft(PATTERN).draft_id)
    path = Path(draft.path)
    path.write_text(path.read_text(encoding="utf-8") + f"\n{ADDED}\n", encoding="utf-8")
    assert library.scan().changed == 1
    return draft


@pytest.fixture
async def pilot(demo_library: Library, graduated: Draft) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        yield pilot


def screen(pilot: Pilot[int]) -> LineageScreen:
    found = pilot.app.get_screen("lineage")
    assert isinstance(found, LineageScreen)
    return found


def shown(pilot: Pilot[int]) -> Lineage:
    found = screen(pilot).lineage
    assert found is not None
    return found


def versions(pilot: Pilot[int]) -> LineageVersions:
    return screen(pilot).query_one(LineageVersions)


def diff(pilot: Pilot[int]) -> LineageDiff:
    return screen(pilot).query_one(LineageDiff)


def tree(pilot: Pilot[int]) -> LineageProvenance:
    return screen(pilot).query_one(LineageProvenance)


def plain(renderable: RenderableType) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get()


def title(pilot: Pilot[int]) -> str:
    return str(screen(pilot).query_one("#lineage-title", Static).content)


def notices(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications]


async def test_opens_on_the_last_graduated_skill_with_its_versions_and_diff(
    pilot: Pilot[int], graduated: Draft
) -> None:
    assert pilot.app.screen is screen(pilot)
    assert screen(pilot).loaded
    lineage = screen(pilot).lineage
    assert lineage is not None
    assert lineage.name == graduated.name
    assert title(pilot).startswith(f"{graduated.name}  proposed  v2")
    assert f"graduated from pattern {PATTERN}" in title(pilot)
    assert versions(pilot).has_focus
    assert [v.version_no for v in versions(pilot).rows] == [2, 1]
    assert diff(pilot).title == "v1 → v2"
    shown = diff(pilot).diff
    assert shown is not None
    assert f"+{ADDED}" in shown.splitlines()
    assert f"+{ADDED}" in plain(diff(pilot).renderable())
    assert "+2 −0 lines" in str(screen(pilot).query_one("#lineage-status", Static).content)

    await pilot.press("down")  # the first version: everything is new
    await settle(pilot)
    current = versions(pilot).current
    assert current is not None
    assert current.version_no == 1
    assert diff(pilot).title == "v1: the first version"
    first = diff(pilot).diff
    assert first is not None
    assert first.startswith(f"--- /dev/null\n+++ {graduated.name} v1")
    assert f"+{ADDED}" not in first
    await pilot.press("enter")  # enter reads the diff
    assert diff(pilot).has_focus


async def test_history_and_provenance_tree(
    pilot: Pilot[int], demo_library: Library, graduated: Draft
) -> None:
    await pilot.press("left_square_bracket")
    await settle(pilot)
    tabs = screen(pilot).query_one(TabbedContent)
    assert tabs.active == "lineage-tab-history"
    history = plain(screen(pilot).query_one("#lineage-history", LineagePanel).renderable)
    assert "installed" in history
    assert "stable → proposed" in history
    assert f"graduated from pattern {PATTERN}" in history

    await pilot.press("right_square_bracket")
    await settle(pilot)
    assert tabs.active == "lineage-tab-provenance"
    assert tree(pilot).has_focus
    items = tree(pilot).items()
    kinds = [i.kind for i in items]
    assert kinds[:3] == ["skill", "draft", "pattern"]
    assert items[1].key == graduated.draft_id
    assert items[2].key == PATTERN
    members = {n.node_id: n.session_id for n in demo_library.pattern_nodes(PATTERN)}
    assert {i.key for i in items if i.kind == "node"} >= set(members)
    assert {i.key for i in items if i.kind == "session"} >= set(members.values())


async def test_enter_on_a_node_opens_it_in_the_sessions_dag(
    pilot: Pilot[int], demo_library: Library
) -> None:
    target = demo_library.pattern_nodes(PATTERN)[0]
    await pilot.press("left_square_bracket", "right_square_bracket")
    await settle(pilot)
    assert tree(pilot).move_to("node", target.node_id)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SessionsScreen)
    dag = pilot.app.screen.query_one(DagView)
    assert dag.current is not None
    assert dag.current.node_id == target.node_id

    await pilot.press("7")  # back: the same skill, the tree where it was
    await settle(pilot)
    assert shown(pilot).provenance.pattern is not None


async def test_enter_on_the_pattern_opens_the_patterns_screen(pilot: Pilot[int]) -> None:
    await pilot.press("left_square_bracket", "right_square_bracket")
    await settle(pilot)
    assert tree(pilot).move_to("pattern", PATTERN)
    await pilot.press("enter")
    await settle(pilot)
    assert pilot.app.screen.name == "patterns"


async def test_pick_another_skill(pilot: Pilot[int], demo_library: Library) -> None:
    await pilot.press("slash")
    await settle(pilot)
    picker = pilot.app.screen
    assert isinstance(picker, SkillPicker)
    await paste(pilot, "k8s-rollback-v1")
    await settle(pilot)
    rows = picker.query_one(SkillTable).rows
    assert [r.name for r in rows][:1] == ["k8s-rollback-v1"]
    await pilot.press("enter")
    await settle(pilot)
    lineage = screen(pilot).lineage
    assert pilot.app.screen is screen(pilot)
    assert lineage is not None
    assert lineage.name == "k8s-rollback-v1"
    assert [i.kind for i in tree(pilot).items()][:1] == ["skill"]
    assert lineage.provenance.origin == "installed"
    assert "installed from" in title(pilot)

    await pilot.press("slash")  # escape changes nothing
    await settle(pilot)
    await pilot.press("escape")
    await settle(pilot)
    assert shown(pilot).name == "k8s-rollback-v1"


async def test_other_screens_open_it_by_name_and_it_opens_the_runbook(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("3")
    await settle(pilot)
    await pilot.app.open_skill_screen("lineage", "kubernetes-rollout")  # type: ignore[attr-defined]
    await settle(pilot)
    assert pilot.app.screen is screen(pilot)
    assert shown(pilot).name == "kubernetes-rollout"
    expected = demo_library.lineage("kubernetes-rollout").versions
    assert versions(pilot).rows == list(expected)
    await pilot.press("R")
    await settle(pilot)
    assert "runbook" in [s.name for s in pilot.app.screen_stack]  # (it may ask for a reason)


async def test_untrusted_text_is_shown_literally_and_events_page(
    pilot: Pilot[int], demo_library: Library
) -> None:
    demo_library.change_status("kubernetes-rollout", "skill.deprecated", HOSTILE)
    for number in range(120):
        demo_library.record_outcome("kubernetes-rollout", number % 3 != 0, detail=f"run {number}")
    await screen(pilot).show_skill("kubernetes-rollout")
    await settle(pilot)
    history = plain(screen(pilot).query_one("#lineage-history", LineagePanel).renderable)
    assert "[bold]not bold[/] \\x1b[31mred" in history
    assert "\x1b" not in history
    assert not errors(pilot)

    await pilot.press("right_square_bracket")
    await settle(pilot)
    events = screen(pilot).query_one(LineageEvents)
    assert events.has_focus
    total = events.total
    assert total == demo_library.skill_events("kubernetes-rollout", limit=0)[1] > 120
    assert len(events.rows) == 100
    assert "run 119" in events.render_line(1).text
    await pilot.press("end")  # the last row loaded: the next page comes
    await settle(pilot)
    assert len(events.rows) == total
    assert events.rows[-1].type == "skill.installed"
    assert [e.seq for e in events.rows] == sorted((e.seq for e in events.rows), reverse=True)


async def test_an_unknown_skill_is_a_notice_and_the_shown_one_stays(
    pilot: Pilot[int], graduated: Draft
) -> None:
    await screen(pilot).show_skill("no-such-skill")
    await settle(pilot)
    assert "no skill named 'no-such-skill'" in notices(pilot)
    assert shown(pilot).name == graduated.name


def errors(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications if n.severity == "error"]


async def test_an_empty_library_says_so(tmp_path: Path, demo_library: Library) -> None:
    empty = Library(tmp_path / "empty", embedder=demo_library.embedder)
    app = make_app(empty, watch=False, warm=False, show_timings=False)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            await pilot.press("7")
            await settle(pilot)
            lineage = pilot.app.screen
            assert isinstance(lineage, LineageScreen)
            assert lineage.loaded
            assert lineage.lineage is None
            assert "No skills in this library yet." in str(
                lineage.query_one("#lineage-title", Static).content
            )
            assert lineage.check_action("graph", ()) is None
    finally:
        await asyncio.to_thread(empty.close)
