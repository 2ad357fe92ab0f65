"""The Skills screen, driven with Pilot through the app factory over a copy of the demo."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import Input, Static

from app.dialogs.keys_sheet import KeysSheet
from app.factory import make_app
from app.librarian_app import LibrarianApp
from app.screens.skills import SkillsScreen
from app.screenshots import settle
from store.library import Library, LibraryError
from widgets.skill_detail import SkillDetailView
from widgets.skill_table import SkillTable
from widgets.suggestion_list import SuggestionList

DEMO_SKILLS = 27  # the 26 shipped skills and the one the demo graduated


@pytest.fixture
async def pilot(demo_library: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(demo_library, watch=False, warm=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3")  # the demo has pending nodes, so the app opens on review
        await settle(pilot)
        yield pilot


def status(pilot: Pilot[int]) -> str:
    return str(pilot.app.screen.query_one("#skills-status", Static).content)


def detail_text(pilot: Pilot[int]) -> str:
    return str(pilot.app.screen.query_one("#detail-body", Static).content)


def table(pilot: Pilot[int]) -> SkillTable:
    return pilot.app.screen.query_one(SkillTable)


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


async def cursor_to(pilot: Pilot[int], name: str) -> None:
    """Move the cursor with keys: `end`, then up to the row."""
    rows = [r.name for r in table(pilot).rows]
    await pilot.press("end", *["up"] * (len(rows) - 1 - rows.index(name)))
    await settle(pilot)


async def test_skills_screen_lists_every_demo_skill(pilot: Pilot[int]) -> None:
    assert isinstance(pilot.app.screen, SkillsScreen)
    assert len(table(pilot).rows) == DEMO_SKILLS
    assert table(pilot).has_focus
    assert status(pilot).startswith(f"{DEMO_SKILLS} of {DEMO_SKILLS} skills")
    first = table(pilot).rows[0]
    assert detail_text(pilot).startswith(first.name)


async def test_slash_focuses_the_filter_and_typing_filters(
    pilot: Pilot[int], demo_library: Library
) -> None:
    await pilot.press("slash")
    field = pilot.app.screen.query_one("#filter", Input)
    assert field.has_focus
    await pilot.press(*"migration")
    await settle(pilot)
    expected = [r.name for r in demo_library.list_skills("migration")]
    assert 0 < len(expected) < DEMO_SKILLS
    assert [r.name for r in table(pilot).rows] == expected
    assert status(pilot).startswith(f"{len(expected)} of {DEMO_SKILLS} skills")

    await pilot.press("escape")  # clears the filter
    await settle(pilot)
    assert field.value == ""
    assert len(table(pilot).rows) == DEMO_SKILLS


async def test_moving_the_cursor_loads_the_detail(pilot: Pilot[int]) -> None:
    await cursor_to(pilot, "terraform-plan-review")
    detail = pilot.app.screen.query_one(SkillDetailView).detail
    assert detail is not None
    assert detail.summary.name == "terraform-plan-review"
    text = detail_text(pilot)
    assert text.startswith("terraform-plan-review  stable  v1")
    assert "Security findings (1)" in text
    assert "[high] pipe_to_shell SKILL.md:" in text

    await cursor_to(pilot, "sql-tuning")  # the folder is sql-query-tuning
    text = detail_text(pilot)
    assert "Spec warnings (1)" in text
    assert "name_mismatch: name 'sql-tuning' does not match its folder 'sql-query-tuning'" in text


@pytest.mark.model
async def test_typing_a_task_ranks_skills(pilot: Pilot[int]) -> None:
    await pilot.press("t")
    assert pilot.app.screen.query_one("#task", Input).has_focus
    await pilot.press(*"roll back a bad kubernetes deploy")
    await settle(pilot)
    ranked = pilot.app.screen.query_one(SuggestionList).suggestions
    names = [s.name for s in ranked]
    assert names[0] == "kubernetes-rollback"
    assert "k8s-rollback-v1" not in names  # retired by the demo's runbook: quarantined
    assert "kubernetes-rollout" in names  # drifting, but still stable until someone acts
    assert f"{len(ranked)} ranked for the task" in status(pilot)

    await pilot.press("enter")  # into the list: the best match is explained
    await settle(pilot)
    assert pilot.app.screen.query_one(SuggestionList).has_focus
    text = detail_text(pilot)
    assert text.startswith("kubernetes-rollback")
    assert "Why it was suggested" in text


async def test_number_key_keeps_you_on_skills(pilot: Pilot[int]) -> None:
    await pilot.press("3")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SkillsScreen)
    assert len(table(pilot).rows) == DEMO_SKILLS


async def test_question_mark_toggles_the_keys_sheet(pilot: Pilot[int]) -> None:
    await pilot.press("question_mark")
    await settle(pilot)
    assert isinstance(pilot.app.screen, KeysSheet)
    await pilot.press("question_mark")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SkillsScreen)


async def palette_titles(pilot: Pilot[int], query: str) -> list[str]:
    palette = pilot.app.screen
    assert isinstance(palette, CommandPalette)
    await pilot.press(*query)
    await settle(pilot)
    options = palette.query_one(CommandList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_palette_lists_views_and_skills(pilot: Pilot[int]) -> None:
    await pilot.press("ctrl+p")
    await settle(pilot)
    titles = await palette_titles(pilot, "view")
    assert any(t.startswith("view: skills") for t in titles)

    await pilot.press(*["backspace"] * 4)
    titles = await palette_titles(pilot, "skill: show terraform")
    assert any(t.startswith("skill: show terraform-plan-review") for t in titles)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, SkillsScreen)
    current = table(pilot).current
    assert current is not None
    assert current.name == "terraform-plan-review"
    assert detail_text(pilot).startswith("terraform-plan-review")


async def test_rescan_picks_up_an_edited_skill(pilot: Pilot[int], demo_library: Library) -> None:
    skill = demo_library.get_skill("feature-flags").summary
    assert skill.version_no == 1
    append(Path(skill.fs_path), "\n## Afterwards\n\nWrite down which flags were removed.\n")
    await cursor_to(pilot, "feature-flags")
    await pilot.press("r")
    await settle(pilot)
    row = table(pilot).current
    assert row is not None
    assert row.name == "feature-flags"
    assert row.version_no == 2
    assert "Versions (2)" in detail_text(pilot)
    messages = [n.message for n in pilot.app._notifications]
    assert any(m.startswith("scan: 0 installed, 1 changed") for m in messages)


async def test_a_failing_worker_becomes_a_notification(
    pilot: Pilot[int], demo_library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(key: str | int) -> None:
        raise LibraryError("the disk is on fire")

    monkeypatch.setattr(demo_library, "get_skill", broken)
    await pilot.press("down")
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    assert app.is_running
    errors = [n for n in app._notifications if n.severity == "error"]
    assert errors
    assert "the disk is on fire" in errors[-1].message


async def test_shown_again_the_list_has_what_changed_meanwhile(
    pilot: Pilot[int], demo_library: Library, tmp_path: Path
) -> None:
    """A skill installed while another screen was shown (a draft approved in the review
    queue, say) is listed when the Skills screen is shown again."""
    await pilot.press("1")
    await settle(pilot)
    root = tmp_path / "more"
    (root / "graduated-lesson").mkdir(parents=True)
    (root / "graduated-lesson" / "SKILL.md").write_text(
        "---\nname: graduated-lesson\ndescription: Learned the hard way.\nlicense: MIT\n---\n"
        "Steps.\n",
        encoding="utf-8",
    )
    demo_library.scan([root])
    await pilot.press("3")
    await settle(pilot)
    assert "graduated-lesson" in [r.name for r in table(pilot).rows]
    assert status(pilot).startswith(f"{DEMO_SKILLS + 1:,} of {DEMO_SKILLS + 1:,} skills")
