"""Issue 14, "One key grammar": every key means one thing on every screen (the table in
`widgets.keys`, written out in the README), footers show the keys that work now, `?` opens a
sheet of the screen's keys by purpose, the palette lists the screen's actions, Escape clears
filters then goes back to the list, and the go-to keys act on what has the focus."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.widgets import Footer, Input, Select
from textual.widgets._footer import FooterKey

import app.dialogs
import app.screens
import widgets
from app.commands import key_commands
from app.dialogs.keys_sheet import KeysSheet
from app.factory import make_app
from app.screens.base import CURSOR_VERBS, screen_keys
from app.screens.graph import GraphScreen
from app.screens.health import HealthScreen
from app.screens.review import ReviewScreen
from app.screens.sessions import SessionsScreen
from app.screens.skills import SkillsScreen
from app.screenshots import settle
from store.library import Library
from widgets.keys import GRAMMAR, GROUPS, VERB_OF_ID, VERBS, markdown_table
from widgets.skill_detail import SkillDetailView
from widgets.skill_table import SkillTable
from widgets.suggestion_list import SuggestionList

README = Path(__file__).resolve().parents[2] / "README.md"


def our_classes() -> Iterator[type[DOMNode]]:
    """Every screen, dialog, widget and the app class of the project (each module imported)."""
    importlib.import_module("app.librarian_app")
    for package in (app.screens, app.dialogs, widgets):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(info.name)
    seen: set[type[DOMNode]] = set()
    stack: list[type[DOMNode]] = [DOMNode]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                stack.append(sub)
    yield from (c for c in seen if c.__module__.split(".")[0] in ("app", "widgets"))


def own_bindings(cls: type[DOMNode]) -> list[Binding]:
    return [b for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]


def test_every_binding_is_built_from_the_grammar() -> None:
    checked = 0
    for cls in our_classes():
        for binding in own_bindings(cls):
            where = f"{cls.__module__}.{cls.__name__} {binding.id}"
            assert binding.id, f"{where}: no id (users remap keys by id)"
            verb = VERB_OF_ID.get(binding.id)
            assert verb is not None, f"{where}: not built with widgets.keys.bind"
            keys = set(binding.key.split(","))
            assert keys <= set(VERBS[verb].keys), f"{where}: {keys} are not {verb}'s keys"
            checked += 1
    assert checked > 100


def test_no_key_means_two_verbs_across_screens() -> None:
    verbs_of_key: dict[str, set[str]] = defaultdict(set)
    for cls in our_classes():
        for binding in own_bindings(cls):
            for key in binding.key.split(","):
                verbs_of_key[key].add(VERB_OF_ID[binding.id or ""])
    clashes = {key: verbs for key, verbs in verbs_of_key.items() if len(verbs) > 1}
    assert clashes == {}
    in_table = [key for verb in GRAMMAR for key in verb.keys]
    assert len(in_table) == len(set(in_table)), "the table gives one key two verbs"


@pytest.mark.parametrize(
    ("screen", "verbs"),
    [
        (ReviewScreen, {"approve", "reject", "edit", "scope", "promote", "undo", "skip"}),
        (SkillsScreen, {"graph", "health", "lineage", "runbook", "filter", "clear"}),
        (GraphScreen, {"health", "lineage", "runbook", "info", "new", "remove", "filter"}),
        (HealthScreen, {"approve", "graph", "lineage", "runbook", "type", "filter", "clear"}),
    ],
)
def test_screens_use_the_shared_verbs(screen: type[DOMNode], verbs: set[str]) -> None:
    assert {VERB_OF_ID[b.id or ""] for b in own_bindings(screen)} >= verbs


def test_the_readme_has_the_grammar_table() -> None:
    assert markdown_table() in README.read_text(encoding="utf-8")


# -- the app ---------------------------------------------------------------------------


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        yield pilot


async def view(pilot: Pilot[int], key: str) -> None:
    await pilot.press(key)
    await settle(pilot)


def active_keys(pilot: Pilot[int]) -> dict[str, bool]:
    """The keys the footer can show now (shown or not), and whether each works."""
    return {k: a.enabled for k, a in pilot.app.screen.active_bindings.items()}


async def test_review_footer_follows_the_list_shown(pilot: Pilot[int]) -> None:
    await view(pilot, "1")
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    keys = active_keys(pilot)
    for key in "axesun":  # the decisions on a node work
        assert keys[key] is True, key
    shown = {b.key for b in review.BINDINGS if isinstance(b, Binding) and b.show}
    assert {"a", "x", "e", "s", "p", "u"} <= shown
    await view(pilot, "D")  # the drafts: editing a summary or its scope means nothing here
    keys = active_keys(pilot)
    assert "e" not in keys
    assert "s" not in keys
    assert "n" not in keys
    assert "K" in keys  # keep a literal: a drafts key
    await view(pilot, "D")
    assert "K" not in active_keys(pilot)
    assert "e" in active_keys(pilot)


async def test_every_footer_shows_at_most_seven_keys(pilot: Pilot[int]) -> None:
    for number in "123456789":
        await view(pilot, number)
        shown = {
            a.binding.id or a.binding.action
            for a in pilot.app.screen.active_bindings.values()
            if a.binding.show
        }
        assert "app.help" in shown, number
        assert len(shown) <= 7, (number, shown)


async def test_every_footer_fits_80_columns_with_its_keys_key(demo_library: Library) -> None:
    app = make_app(demo_library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for number in "123456789":
            await view(pilot, number)
            footer = pilot.app.screen.query_one(Footer)
            assert not footer.show_command_palette, number
            keys = list(footer.query(FooterKey))
            assert keys, number
            assert keys[-1].key_display == "?", number
            assert max(k.region.right for k in keys) <= 80, number
        await pilot.resize_terminal(140, 40)
        await settle(pilot)
        assert pilot.app.screen.query_one(Footer).show_command_palette


async def test_question_mark_opens_the_keys_sheet_by_purpose(pilot: Pilot[int]) -> None:
    await view(pilot, "1")
    await view(pilot, "question_mark")
    sheet = pilot.app.screen
    assert isinstance(sheet, KeysSheet)
    groups = [line.group for line in sheet.lines]
    assert groups == sorted(groups, key=GROUPS.index)
    decide = {line.keys for line in sheet.lines if line.group == "Decide"}
    assert {"a", "x", "e", "s", "u", "n"} <= decide
    show = {line.keys for line in sheet.lines if line.group == "Show"}
    assert {"/", "f", "S", "P", "o", "G", "D", "C", "E"} <= show
    await view(pilot, "question_mark")  # again: closed
    assert isinstance(pilot.app.screen, ReviewScreen)
    await view(pilot, "3")
    await view(pilot, "question_mark")
    skills_sheet = pilot.app.screen
    assert isinstance(skills_sheet, KeysSheet)
    go_to = {line.keys for line in skills_sheet.lines if line.group == "Go to"}
    assert go_to == {"g", "h", "l", "R"}
    await view(pilot, "escape")
    assert isinstance(pilot.app.screen, SkillsScreen)


async def palette_titles(pilot: Pilot[int], query: str) -> list[str]:
    await view(pilot, "ctrl+p")
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await pilot.press(*query)
    await settle(pilot)
    options = palette.query_one(CommandList)
    return [
        str(options.get_option_at_index(i).prompt).split("\n")[0]
        for i in range(options.option_count)
    ]


async def test_palette_lists_every_action_of_the_screen(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await view(pilot, "1")
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    node, _ = review.selection()
    assert node is not None
    titles = await palette_titles(pilot, "approve")
    assert any("approve" in t for t in titles), titles
    await view(pilot, "enter")
    assert demo_library.node(node.node_id).status == "approved"
    # Every key that works on the screen is in the palette, by what it does.
    await view(pilot, "5")
    titles = await palette_titles(pilot, "verdict")
    assert "health: verdict (f)" in titles
    await view(pilot, "enter")
    health = pilot.app.screen
    assert isinstance(health, HealthScreen)
    assert health.query_one("#verdict-filter", Select).value == "DRIFTING"
    offered = {action for _, action, _, _ in key_commands(health, set())}
    wanted = {
        row.binding.action
        for row in screen_keys(health)
        if row.enabled and row.verb not in CURSOR_VERBS
    }
    assert wanted <= offered
    assert {"apply", "cycle_verdict", "focus_filter", "open('graph')", "clear"} <= wanted


async def test_escape_clears_filters_then_goes_back_to_the_list(pilot: Pilot[int]) -> None:
    await view(pilot, "5")
    health = pilot.app.screen
    assert isinstance(health, HealthScreen)
    await view(pilot, "f")  # a verdict: the filter is on, the focus stays on the table
    verdict = health.query_one("#verdict-filter", Select)
    assert verdict.value == "DRIFTING"
    await view(pilot, "d")  # the detail has the focus
    await view(pilot, "escape")
    assert verdict.value != "DRIFTING"
    assert not health.query_one("#health-table").has_focus
    await view(pilot, "escape")  # nothing to clear: back to the list
    assert health.query_one("#health-table").has_focus

    await view(pilot, "2")
    sessions = pilot.app.screen
    assert isinstance(sessions, SessionsScreen)
    field = sessions.query_one("#session-filter", Input)
    field.value = "zzz"
    await settle(pilot)
    await view(pilot, "d")
    await view(pilot, "escape")
    assert field.value == ""
    await view(pilot, "escape")
    assert sessions.query_one("#session-list").has_focus

    await view(pilot, "1")
    review = pilot.app.screen
    assert isinstance(review, ReviewScreen)
    await view(pilot, "f")
    await view(pilot, "S")
    assert review.query_one("#type-filter", Select).value != ""
    await view(pilot, "d")
    await view(pilot, "escape")
    assert review.query_one("#type-filter", Select).value == ""
    assert review.query_one("#status-filter", Select).value == "pending"
    await view(pilot, "escape")
    assert review.query_one("#node-table").has_focus


async def test_go_to_keys_act_on_the_focused_suggestion(pilot: Pilot[int]) -> None:
    await view(pilot, "3")
    skills = pilot.app.screen
    assert isinstance(skills, SkillsScreen)
    cursor = skills.query_one(SkillTable).current
    assert cursor is not None
    await view(pilot, "t")
    await pilot.press(*"roll back a bad kubernetes deploy")
    await settle(pilot)
    await view(pilot, "enter")  # into the suggestions
    suggestions = skills.query_one(SuggestionList)
    assert suggestions.has_focus
    while suggestions.current is not None and suggestions.current.name == cursor.name:
        await view(pilot, "down")
    chosen = suggestions.current
    assert chosen is not None
    assert chosen.name != cursor.name
    # The detail pane shows the suggestion: `l` there is its lineage.
    await view(pilot, "d")
    detail = skills.query_one(SkillDetailView)
    assert detail.has_focus
    assert detail.detail is not None
    assert detail.detail.summary.name == chosen.name
    await view(pilot, "l")
    assert pilot.app.screen.name == "lineage"
    shown = getattr(pilot.app.screen, "_lineage", None)
    assert shown is not None
    assert shown.name == chosen.name

    await view(pilot, "3")
    suggestions.focus()  # the ranking was read again: highlight the same suggestion
    for _ in range(suggestions.option_count):
        if suggestions.current is not None and suggestions.current.name == chosen.name:
            break
        await view(pilot, "down")
    assert suggestions.current is not None
    assert suggestions.current.name == chosen.name
    await view(pilot, "g")
    graph = pilot.app.screen
    assert isinstance(graph, GraphScreen)
    assert graph.focus_shown is not None
    assert graph.focus_shown.name == chosen.name  # not the list's cursor

    # From the list, the list's cursor.
    await view(pilot, "3")
    skills.query_one(SkillTable).focus()
    await settle(pilot)
    await view(pilot, "h")
    assert pilot.app.screen.name == "health"


async def test_escape_clears_the_kind_of_patterns_and_the_open_runs_filter(
    pilot: Pilot[int],
) -> None:
    await view(pilot, "6")
    patterns = pilot.app.screen
    kind = patterns.query_one("#kind-filter", Select)
    await view(pilot, "f")
    assert kind.value != ""
    await view(pilot, "escape")
    assert kind.value == ""
    await view(pilot, "8")
    runbook = pilot.app.screen
    assert getattr(runbook, "show_all", None) is True
    await view(pilot, "S")  # open runs only
    assert getattr(runbook, "show_all", None) is False
    await view(pilot, "escape")
    assert getattr(runbook, "show_all", None) is True


async def test_escape_clears_the_skills_filter_and_task_from_the_list(pilot: Pilot[int]) -> None:
    await view(pilot, "3")
    skills = pilot.app.screen
    assert isinstance(skills, SkillsScreen)
    await view(pilot, "slash")
    await pilot.press(*"kube")
    await view(pilot, "enter")  # the filter is applied, the list has the focus
    table = skills.query_one(SkillTable)
    assert table.has_focus
    narrowed = len(table.rows)
    await view(pilot, "escape")  # from the list: the filter is cleared all the same
    assert skills.query_one("#filter", Input).value == ""
    assert len(table.rows) > narrowed


async def test_a_remapped_go_to_key_keeps_working(pilot: Pilot[int]) -> None:
    pilot.app.set_keymap({"skills.lineage": "L"})
    await view(pilot, "3")
    await view(pilot, "l")  # no longer bound
    assert isinstance(pilot.app.screen, SkillsScreen)
    await view(pilot, "L")
    assert pilot.app.screen.name == "lineage"
    await view(pilot, "3")
    await view(pilot, "question_mark")
    sheet = pilot.app.screen
    assert isinstance(sheet, KeysSheet)
    assert "L" in {line.keys for line in sheet.lines if line.group == "Go to"}
