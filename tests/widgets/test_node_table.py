"""NodeTable in a tiny harness app: cursor, marks, decided rows leaving, busy rows, literal text."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from itertools import groupby

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import ERASED, Node
from widgets.node_table import NodeTable, age, group_title

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
        table.set_rows(
            [
                node(1, informativeness=0.72),
                node(2, type="INVESTIGATION", confidence=0.35, status="approved"),
            ]
        )
        await pilot.pause()
        header, first, second, *_ = screen_lines(table)
        assert header.split() == ["type", "conf", "info", "summary", "project", "session", "age"]
        assert first.split()[:5] == ["DEAD_END", "0.60", "0.72", "summary", "00001"]
        assert second.split()[:4] == ["✓", "INVESTIGATION", "0.35", "0.00"]  # decided: says so
        for title, value in (
            ("type", "DEAD_END"),
            ("conf", "0.60"),
            ("info", "0.72"),
            ("summary", "summary"),
            ("project", "…/payments-api"),  # the folder all rows share is left out
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


async def test_a_suppressed_row_shows_its_reason_literally_and_its_informativeness() -> None:
    app = TableApp()
    async with app.run_test(size=(180, 6)) as pilot:
        table = app.query_one(NodeTable)
        reason = "narration [bold]of[/bold] intent \x1b[31m"
        table.set_rows(
            [
                node(1, status="suppressed", informativeness=0.08, suppressed_reason=reason),
                node(2, informativeness=0.9),
            ]
        )
        await pilot.press("down")  # the reason keeps its own colour off the cursor
        header, first, second, *_ = screen_lines(table)
        assert first.split()[:4] == ["⊘", "DEAD_END", "0.60", "0.08"]
        assert "summary 00001" in first
        assert "— narration [bold]of[/bold] intent \\x1b[31m" in first  # literal, escaped
        assert "\x1b" not in first
        assert first.index("summary 00001") < first.index("— narration") < header.index("project")
        assert "⊘" not in second
        (reason_cell,) = [seg for seg in table.render_line(1) if "— narration" in seg.text]
        assert reason_cell.style is not None
        assert reason_cell.style.italic


def session_rows() -> list[Node]:
    """Three sessions' rows, each session's together (as the store gives them grouped)."""
    return [
        node(i, session_id=session, project=f"/work/{session}")
        for i, session in enumerate(["s-b", "s-b", "s-a", "s-c", "s-c", "s-c"], 1)
    ]


STARTS = {"s-a": "2026-10-01T08:00:00Z", "s-b": "2026-10-21T08:05:00.000Z"}


async def test_grouped_rows_sit_under_one_header_per_session() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 14)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(session_rows())
        table.group_by_session(STARTS)
        await pilot.pause()
        assert table.grouped
        lines = screen_lines(table)[1:10]
        assert lines[0].startswith("▾ session s-b · /work/s-b · 2026-10-21 08:05 · 2 nodes")
        assert [line.split()[3] for line in lines[1:3]] == ["summary", "summary"]
        assert lines[3].startswith("▾ session s-a · /work/s-a · 2026-10-01 08:00 · 1 node ")
        assert lines[5].startswith("▾ session s-c · /work/s-c · 3 nodes")  # start unknown
        assert "summary 00006" in lines[8]
        assert current_id(table) == "n00001"

        # the cursor moves over rows only: the headers are stepped over
        await pilot.press("down", "down")
        assert current_id(table) == "n00003"
        await pilot.press("down")
        assert current_id(table) == "n00004"
        assert app.highlighted()[-3:] == ["n00002", "n00003", "n00004"]

        # a click on a header selects nothing; on a row, that row
        await pilot.click(NodeTable, offset=(5, 1))
        assert current_id(table) == "n00004"
        await pilot.click(NodeTable, offset=(5, 5))
        assert current_id(table) == "n00003"

        # a session whose rows all went loses its header; the counts follow
        table.update_nodes([node(3, session_id="s-a", status="approved")], keep_status="pending")
        await pilot.pause()
        lines = screen_lines(table)[1:8]
        assert [line.startswith("▾") for line in lines] == [
            True, False, False, True, False, False, False,
        ]  # fmt: skip
        assert current_id(table) == "n00004"

        table.group_by_session(None)  # one plain list again
        await pilot.pause()
        assert not table.grouped
        assert not any(line.startswith("▾") for line in screen_lines(table))


async def test_ten_thousand_grouped_rows_scroll_to_the_cursor_with_its_header() -> None:
    app = TableApp()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(NodeTable)
        rows = [node(i, session_id=f"s-{(i - 1) // 7:04d}") for i in range(1, 10_001)]
        table.set_rows(rows)
        table.group_by_session({})
        await pilot.pause()
        sessions = len([k for k, _ in groupby(rows, key=lambda n: n.session_id)])
        assert table.virtual_size.height == 10_000 + sessions + 1

        await pilot.press("end")
        assert current_id(table) == "n10000"
        lines = screen_lines(table)
        assert "summary 10000" in lines[-1]
        assert lines[-5].startswith("▾ session s-1428 ")  # 9,997..10,000: the last session

        # up to the first row of a session: its header comes into view above it
        table.move_to("n00071")
        await pilot.pause()
        lines = screen_lines(table)
        assert lines[1].startswith("▾ session s-0010 ")
        assert "summary 00071" in lines[2]
        await pilot.press("up")  # the last row of the session before: right above the header
        assert "summary 00070" in screen_lines(table)[1]

        await pilot.press("home")
        assert screen_lines(table)[1].startswith("▾ session s-0000 ")


async def test_rows_removed_above_the_screen_keep_grouped_rows_in_place() -> None:
    app = TableApp()
    async with app.run_test(size=(100, 12)) as pilot:
        table = app.query_one(NodeTable)
        table.set_rows([node(i, session_id=f"s-{(i - 1) // 5:03d}") for i in range(1, 201)])
        table.group_by_session({})
        await pilot.pause()
        table.move_to("n00150")
        await pilot.pause()
        before = screen_lines(table)[1:]
        assert "summary 00150" in before[-1]
        table.update_nodes([node(i, status="approved") for i in (3, 4, 5)], "pending")
        await pilot.pause()
        assert screen_lines(table)[1:] == before
        assert current_id(table) == "n00150"


async def test_next_pending_can_look_for_suppressed_rows_too() -> None:
    app = TableApp()
    async with app.run_test() as pilot:
        table = app.query_one(NodeTable)
        table.set_rows(
            [node(1, status="suppressed"), node(2, status="approved"), node(3, status="suppressed")]
        )
        await pilot.pause()
        assert table.next_pending() is None
        assert table.move_to_next_pending(("pending", "suppressed"))
        assert current_id(table) == "n00003"


def test_group_title_is_one_literal_line() -> None:
    hostile = node(1, session_id="s\x1b[31m-1", project="/p/[bold]x[/bold]\n")
    title = group_title(hostile, "not a time", 1)
    assert title.startswith("▾ session s\\x1b[3")
    assert "[bold]x[/bold]" in title
    assert "\n" not in title
    assert "\x1b" not in title
    assert title.endswith(" · 1 node")
