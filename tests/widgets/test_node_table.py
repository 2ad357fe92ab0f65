"""NodeTable in a tiny harness app: cursor, marks, decided rows leaving, busy rows, literal text."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import ERASED, Node
from widgets.node_table import NodeTable, age

NOW = "2026-11-03T09:00:00+00:00"
HOSTILE = {
    "markup": "[bold red]x[/]",
    "link": "[link=http://e]x[/link]",
    "csi": "\x1b[31mred",
    "osc": "\x1b]0;title\x07",
    "bidi": "\u202eevil\u202c",
}


def node(number: int, **changes: object) -> Node:
    row = Node(
        node_id=f"n{number:05d}",
        session_id="s-1",
        project="/home/dev/payments-api",
        type="DEAD_END",
        summary=f"summary {number:05d}",
        evidence="Error: boom",
        file="s-1.jsonl",
        line_start=number,
        line_end=number,
        confidence=0.6,
        scope="PROJECT",
        tier="warm",
        status="pending",
        developer="dev <dev@example.com>",
        created_at="2026-11-02T09:00:00+00:00",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def nodes(count: int) -> list[Node]:
    return [node(i) for i in range(1, count + 1)]


class TableApp(App[None]):
    """Mounts one focused NodeTable and records what it posts."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield NodeTable()

    def on_mount(self) -> None:
        table = self.query_one(NodeTable)
        table.set_now(NOW)
        table.focus()

    def on_node_table_highlighted(self, message: NodeTable.Highlighted) -> None:
        self.messages.append(message)

    def on_node_table_selected(self, message: NodeTable.Selected) -> None:
        self.messages.append(message)

    def on_node_table_marks_changed(self, message: NodeTable.MarksChanged) -> None:
        self.messages.append(message)

    def highlighted(self) -> list[str | None]:
        return [m.node_id for m in self.messages if isinstance(m, NodeTable.Highlighted)]

    def mark_counts(self) -> list[int]:
        return [m.count for m in self.messages if isinstance(m, NodeTable.MarksChanged)]


def screen_lines(table: NodeTable) -> list[str]:
    return [strip.text for strip in table.render_lines(Region(0, 0, *table.size))]


def current_id(table: NodeTable) -> str | None:
    return table.current.node_id if table.current else None


async def test_ten_thousand_rows_and_cursor_keys() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(10_000))
        await pilot.pause()
        assert current_id(table) == "n00001"
        assert app.highlighted()[-1] == "n00001"

        await pilot.press("down")
        assert app.highlighted()[-1] == "n00002"

        await pilot.press("pagedown")
        page = table.size.height - 2
        assert table.cursor == 1 + page

        await pilot.press("end")
        assert app.highlighted()[-1] == "n10000"
        assert table.scroll_offset.y > 9_900
        assert any("summary 10000" in line for line in screen_lines(table))

        await pilot.press("home", "j", "j", "k")
        assert app.highlighted()[-1] == "n00002"


async def test_columns_line_up() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 6)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows([node(1), node(2, type="INVESTIGATION", confidence=0.35, status="approved")])
        await pilot.pause()
        header, first, second, *_ = screen_lines(table)
        assert header.split() == ["type", "conf", "summary", "project", "session", "age"]
        assert first.split()[:4] == ["DEAD_END", "0.60", "summary", "00001"]
        assert second.split()[:3] == ["✓", "INVESTIGATION", "0.35"]  # decided rows say so
        for title, value in (
            ("type", "DEAD_END"),
            ("conf", "0.60"),
            ("summary", "summary"),
            ("project", "…/dev/payments-api"),
            ("session", "s-1"),
            ("age", "1d"),
        ):
            assert header.index(title) == first.index(value)


async def test_mark_moves_down_and_marks_collect_in_row_order() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(5))
        await pilot.press("down", "down", "m", "up", "up", "up", "m")
        assert table.marked == ("n00001", "n00003")
        assert current_id(table) == "n00002"  # marking moved down
        assert app.mark_counts() == [1, 2]
        lines = screen_lines(table)
        assert lines[1].startswith("●")
        assert lines[3].startswith("●")
        assert not lines[2].startswith("●")

        await pilot.press("m")
        assert table.marked == ("n00001", "n00002", "n00003")
        await pilot.press("up", "m")  # again on the same node: unmarks it
        assert table.marked == ("n00001", "n00003")


async def test_ctrl_a_marks_every_row_then_none() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(10_000))
        await pilot.press("ctrl+a")
        assert len(table.marked) == 10_000
        await pilot.press("ctrl+a")
        assert table.marked == ()
        assert app.mark_counts() == [10_000, 0]


async def test_decided_rows_leave_and_the_cursor_stays_on_its_node() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(6))
        await pilot.press("down", "down", "down")  # on n00004
        table.update_nodes(
            [node(2, status="approved"), node(5, status="rejected")], keep_status="pending"
        )
        await pilot.pause()
        assert [n.node_id for n in table.rows] == ["n00001", "n00003", "n00004", "n00006"]
        assert current_id(table) == "n00004"

        table.update_nodes([node(4, status="approved")], keep_status="pending")
        await pilot.pause()
        assert current_id(table) == "n00006"  # the row that took its place
        assert app.highlighted()[-1] == "n00006"

        table.update_nodes([node(6, status="approved")], keep_status="pending")
        await pilot.pause()
        assert current_id(table) == "n00003"  # the last row went: the one above


async def test_decided_rows_stay_when_every_status_is_listed() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(3))
        table.update_nodes([node(1, status="approved", summary="new words")], keep_status=None)
        await pilot.pause()
        assert [n.node_id for n in table.rows] == ["n00001", "n00002", "n00003"]
        assert table.rows[0].summary == "new words"
        assert screen_lines(table)[1].split()[:2] == ["✓", "DEAD_END"]


async def test_busy_rows_are_skipped_by_next_pending() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows([node(1), node(2, status="approved"), node(3), node(4)])
        table.set_busy(["n00001", "n00003"])
        await pilot.pause()
        assert screen_lines(table)[1].startswith(" …")
        assert table.move_to_next_pending()
        assert current_id(table) == "n00004"  # n00002 is decided, n00003 busy

        table.set_busy(["n00004"])
        assert not table.move_to_next_pending()  # nothing pending is left free
        table.set_busy(["n00001"], busy=False)
        assert table.move_to_next_pending()  # wraps back to the top
        assert current_id(table) == "n00001"


async def test_rows_removed_above_the_screen_do_not_move_the_rows_on_it() -> None:
    app = TableApp()
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(200))
        await pilot.pause()
        table.move_to("n00150")
        await pilot.pause()
        before = screen_lines(table)[1:]
        assert "summary 00150" in before[-1]
        table.update_nodes([node(i, status="approved") for i in (3, 4, 5)], "pending")
        await pilot.pause()
        assert screen_lines(table)[1:] == before
        assert current_id(table) == "n00150"


async def test_set_rows_keeps_the_cursor_and_drops_marks_on_gone_nodes() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(10))
        await pilot.press("m", "m", "m")  # marks 1, 2, 3; cursor on 4
        table.set_rows([node(i) for i in (9, 4, 2)])
        await pilot.pause()
        assert current_id(table) == "n00004"
        assert table.marked == ("n00002",)

        table.set_rows(nodes(10), focus="n00007")
        assert current_id(table) == "n00007"


async def test_enter_selects_and_an_empty_table_highlights_nothing() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(nodes(2))
        await pilot.press("down", "enter")
        selected = [m for m in app.messages if isinstance(m, NodeTable.Selected)]
        assert [m.node_id for m in selected] == ["n00002"]

        table.empty_text = "Nothing to review."
        table.set_rows([])
        await pilot.press("down", "end", "enter", "m", "ctrl+a")
        assert table.current is None
        assert app.highlighted()[-1] is None
        assert len([m for m in app.messages if isinstance(m, NodeTable.Selected)]) == 1
        assert "Nothing to review." in screen_lines(table)[1]


async def test_untrusted_text_renders_literally() -> None:
    app = TableApp()
    async with app.run_test(size=(140, 12)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(
            [
                node(i, summary=text, project=f"/p/{text}", type=text[:12])
                for i, text in enumerate(HOSTILE.values(), 1)
            ]
        )
        await pilot.pause()
        text = "\n".join(screen_lines(table))
        assert "[bold red]x[/]" in text
        assert "[link=http://e]x[/link]" in text
        assert "\\x1b[31mred" in text  # visible as an escape, not as colour
        assert "<U+202E>evil" in text
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in text


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("2026-11-03T08:59:30+00:00", "30s"),
        ("2026-11-03T08:15:00+00:00", "45m"),
        ("2026-11-02T21:00:00+00:00", "12h"),
        ("2026-10-27T09:00:00+00:00", "7d"),
        ("2026-09-01T09:00:00+00:00", "9w"),
        ("2023-11-03T09:00:00+00:00", "3y"),
        ("2026-11-04T09:00:00+00:00", "0s"),  # clocks disagree: never negative
        ("yesterday", "?"),
        ("2026-11-02T09:00:00", "?"),  # no zone: cannot be compared
    ],
)
def test_age(stamp: str, expected: str) -> None:
    assert age(stamp, datetime(2026, 11, 3, 9, tzinfo=UTC)) == expected


async def test_a_forgotten_row_is_marked_and_shows_no_text() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows([node(1), node(2, status="forgotten", summary=ERASED, evidence=ERASED)])
        await pilot.pause()
        assert screen_lines(table)[2].split()[:2] == ["⌫", "DEAD_END"]
        assert ERASED in screen_lines(table)[2]
