"""The Skills screen's catalog health (issue 15): the budget panel (`b`), the overlap flag
in the skill detail, and findings shown with their file, line and context."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from app.factory import make_app
from app.screens.skills import SkillsScreen
from app.screenshots import settle
from store.library import Library
from tests.store.conftest import write_skill
from widgets.budget_panel import BudgetPanel
from widgets.skill_detail import SkillDetailView
from widgets.skill_table import SkillTable

NOTES = "Write customer-facing release notes from a changelog and merged pull requests."


@pytest.fixture
async def pilot(tmp_path: Path, _embedder: object) -> AsyncIterator[Pilot[int]]:
    personal = Path.home() / ".claude" / "skills"  # the test's own home
    write_skill(personal, "release-notes", NOTES, body="# Notes\n\nGroup changes by feature.\n")
    write_skill(
        personal, "notes-from-changelog", NOTES, body="# Notes\n\nGroup changes by feature.\n"
    )
    write_skill(
        personal,
        "guard",
        "Blocks destructive shell commands before an agent runs them.",
        body="# Guard\n\n## Attack examples\n\n```bash\nrm -rf /\n```\n",
    )
    for i in range(30):
        write_skill(
            personal, f"tool-{i:02d}", f"Runs tool number {i} against the staging API. " * 6
        )
    library = Library(tmp_path / "lib", embedder=_embedder)  # type: ignore[arg-type]
    library.scan([personal])
    library.config.set("budget.folder", f'"{tmp_path}"')
    app = make_app(library, watch=False, warm=False, show_timings=False)
    try:
        async with app.run_test(size=(140, 44)) as pilot:
            await settle(pilot)
            yield pilot
    finally:
        library.close()


def body(pilot: Pilot[int], selector: str) -> str:
    """The text a Static shows, whatever renderable it holds."""
    console = Console(record=True, width=140, file=io.StringIO())
    console.print(pilot.app.screen.query_one(selector, Static).content)
    return console.export_text()


async def cursor_to(pilot: Pilot[int], name: str) -> None:
    rows = [r.name for r in pilot.app.screen.query_one(SkillTable).rows]
    await pilot.press("home", *["down"] * rows.index(name))
    await settle(pilot)


async def test_b_shows_the_listing_budget_and_b_again_the_detail(pilot: Pilot[int]) -> None:
    assert isinstance(pilot.app.screen, SkillsScreen)
    await pilot.press("b")
    await settle(pilot)
    panel = pilot.app.screen.query_one(BudgetPanel)
    assert panel.display
    assert not pilot.app.screen.query_one(SkillDetailView).display
    text = body(pilot, "#budget-body")
    assert "Claude Code's skill listing" in text
    assert "of 8,000 characters" in text
    assert "needed" in text  # 33 skills with long descriptions overflow the default budget
    assert "name only" in text
    assert "listed by name only" in text  # the advice
    await pilot.press("b")
    await settle(pilot)
    assert not panel.display
    assert pilot.app.screen.query_one(SkillDetailView).display


async def test_the_detail_flags_an_exact_duplicate(pilot: Pilot[int]) -> None:
    await cursor_to(pilot, "release-notes")
    text = body(pilot, "#detail-body")
    assert "exact duplicate of notes-from-changelog — retire one" in text
    await cursor_to(pilot, "guard")
    text = body(pilot, "#detail-body")
    assert "exact duplicate" not in text
    assert "[low] destructive_command (illustrative) SKILL.md:12" in text


async def test_budget_footer_binding_is_listed(pilot: Pilot[int]) -> None:
    shown = {b.binding.id: b.binding for b in pilot.app.screen.active_bindings.values()}
    budget = shown["skills.budget"]
    assert (budget.key, budget.show, budget.description) == ("b", True, "Budget")
    assert budget.tooltip
    assert sum(1 for b in shown.values() if b.show) <= 7
