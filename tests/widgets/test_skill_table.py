"""SkillTable in a tiny harness app: keys move the cursor, messages carry the right skill."""

from __future__ import annotations

from dataclasses import replace

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import SkillSummary
from widgets.skill_table import SkillTable

HOSTILE = {
    "markup": "[bold red]x[/]",
    "link": "[link=http://e]x[/link]",
    "csi": "\x1b[31mred",
    "osc": "\x1b]0;title\x07",
    "bidi": "\u202eevil\u202c",
}


def summary(skill_id: int, name: str | None = None, **changes: object) -> SkillSummary:
    row = SkillSummary(
        skill_id=skill_id,
        name=name or f"skill-{skill_id:05d}",
        status="stable",
        root="/skills",
        scope="user",
        description="",
        warning_count=0,
        finding_count=0,
        max_severity="",
        version_no=1,
        shadowed=False,
        fs_path=f"/skills/{skill_id}/SKILL.md",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class TableApp(App[None]):
    """Mounts one focused SkillTable and records what it posts."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield SkillTable()

    def on_mount(self) -> None:
        self.query_one(SkillTable).focus()

    def on_skill_table_highlighted(self, message: SkillTable.Highlighted) -> None:
        self.messages.append(message)

    def on_skill_table_selected(self, message: SkillTable.Selected) -> None:
        self.messages.append(message)

    def highlighted(self) -> list[int | None]:
        return [m.skill_id for m in self.messages if isinstance(m, SkillTable.Highlighted)]


def screen_lines(table: SkillTable) -> list[str]:
    return [strip.text for strip in table.render_lines(Region(0, 0, *table.size))]


async def test_ten_thousand_rows_and_cursor_keys() -> None:
    app = TableApp()
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(SkillTable)
        table.set_rows([summary(i) for i in range(1, 10_001)])
        await pilot.pause()
        assert table.current is not None
        assert table.current.skill_id == 1
        assert app.highlighted()[-1] == 1

        await pilot.press("down")
        assert app.highlighted()[-1] == 2

        await pilot.press("pagedown")
        page = table.size.height - 2
        assert table.cursor == 1 + page
        assert app.highlighted()[-1] == 2 + page

        await pilot.press("end")
        assert app.highlighted()[-1] == 10_000
        assert table.scroll_offset.y > 9_900  # the last row is on screen
        assert any("skill-10000" in line for line in screen_lines(table))

        await pilot.press("home", "j", "j", "k")
        assert app.highlighted()[-1] == 2


async def test_enter_selects_the_skill_under_the_cursor() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        app.query_one(SkillTable).set_rows([summary(7), summary(8)])
        await pilot.press("down", "enter")
        selected = [m for m in app.messages if isinstance(m, SkillTable.Selected)]
        assert [m.skill_id for m in selected] == [8]


async def test_set_rows_keeps_the_cursor_on_the_same_skill() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(SkillTable)
        table.set_rows([summary(i) for i in range(1, 11)])
        await pilot.press("down", "down", "down")
        assert table.current is not None
        assert table.current.skill_id == 4

        table.set_rows([summary(i) for i in (9, 4, 2)])  # filtered and reordered
        await pilot.pause()
        assert table.cursor == 1
        assert table.current is not None
        assert table.current.skill_id == 4
        assert app.highlighted()[-1] == 4

        table.set_rows([summary(i) for i in (9, 2)])  # gone: back to the top
        await pilot.pause()
        assert table.current is not None
        assert table.current.skill_id == 9


async def test_empty_table_highlights_nothing() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(SkillTable)
        table.set_rows([summary(1)])
        table.set_rows([])
        await pilot.press("down", "end", "enter")
        assert table.current is None
        assert app.highlighted()[-1] is None
        assert not [m for m in app.messages if isinstance(m, SkillTable.Selected)]


async def test_untrusted_names_and_roots_render_literally() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 12)) as pilot:
        table = app.query_one(SkillTable)
        table.set_rows(
            [summary(i, text, root=f"/r/{text}") for i, text in enumerate(HOSTILE.values(), 1)]
        )
        await pilot.pause()
        text = "\n".join(screen_lines(table))
        assert "[bold red]x[/]" in text
        assert "[link=http://e]x[/link]" in text
        assert "\\x1b[31mred" in text  # visible as an escape, not as colour
        assert "<U+202E>evil" in text
        assert "\x1b" not in text
        assert "\x07" not in text
        assert "\u202e" not in text


async def test_severity_marker_and_flags() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 8)) as pilot:
        table = app.query_one(SkillTable)
        table.set_rows(
            [
                summary(1, "plain"),
                summary(2, "risky", finding_count=2, max_severity="high", warning_count=3),
                summary(3, "old", status="deprecated", shadowed=True),
            ]
        )
        await pilot.pause()
        lines = screen_lines(table)
        assert lines[0].split()[:3] == ["name", "status", "ver"]
        assert lines[2].startswith("!! risky")
        assert "3" in lines[2].split()
        assert "2H" in lines[2].split()
        assert "deprecated*" in lines[3]  # shadowed is marked
