"""PatternTable and PatternMembers in tiny harness apps: rows grouped by kind, checks filled in
later, states, dimmed decayed rows, literal untrusted text, 10,000 rows, posted messages."""

from __future__ import annotations

from dataclasses import replace

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import Criterion, Draft, GraduationCheck, Node, Pattern
from widgets.pattern_members import PatternMembers
from widgets.pattern_table import PatternTable, matching

HOSTILE = "[bold red]x[/] [link=http://e]y[/link] \x1b[31mred \x1b]0;title\x07 \u202eevil\u202c"


def pattern(number: int, **changes: object) -> Pattern:
    row = Pattern(
        pattern_id=f"p_{number:05d}",
        kind="pitfall",
        polarity="anti",
        title=f"title {number:05d}",
        summary="summary",
        trigger="",
        steps=(),
        resolution="",
        severity="high",
        scope="PROJECT",
        project="/home/dev/payments-api",
        classifier="rules",
        base_confidence=0.6,
        confidence=0.55,
        members=4,
        sessions=3,
        developers=1,
        first_seen="2026-10-01T09:00:00+00:00",
        last_seen="2026-10-20T09:00:00+00:00",
        status="active",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def check(
    of: Pattern, met: int = 4, draft: Draft | None = None, **changes: object
) -> GraduationCheck:
    names = ("sessions", "retrieval", "ratified", "confidence")
    criteria = tuple(
        Criterion(name, i < met, 0.75 if name == "retrieval" else 1.0, 0.3, f"{name} detail")
        for i, name in enumerate(names)
    )
    found = GraduationCheck(of, criteria, met == 4 and draft is None, draft, False)
    return replace(found, **changes)  # type: ignore[arg-type]


def draft_of(of: Pattern, status: str = "pending") -> Draft:
    return Draft(
        draft_id=f"d_{of.pattern_id}",
        pattern_id=of.pattern_id,
        name="roll-back-first",
        content="---\nname: roll-back-first\n---\n",
        citations=(),
        status=status,
        created_at="2026-11-02T09:00:00+00:00",
        created_by="Dana",
    )


def node(number: int, **changes: object) -> Node:
    row = Node(
        node_id=f"n{number:05d}",
        session_id=f"s-{number}",
        project="/home/dev/payments-api",
        type="DEAD_END",
        summary=f"summary {number:05d}",
        evidence="Error: boom",
        file=f"s-{number}.jsonl",
        line_start=number,
        line_end=number,
        confidence=0.6,
        scope="PROJECT",
        tier="warm",
        status="approved",
        developer="dev <dev@example.com>",
        created_at="2026-11-02T09:00:00+00:00",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class Harness(App[None]):
    """Mounts a focused PatternTable above a PatternMembers and records what they post."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield PatternTable()
        yield PatternMembers()

    def on_mount(self) -> None:
        self.query_one(PatternTable).focus()

    def on_pattern_table_highlighted(self, message: PatternTable.Highlighted) -> None:
        self.messages.append(message)

    def on_pattern_table_selected(self, message: PatternTable.Selected) -> None:
        self.messages.append(message)

    def on_pattern_members_selected(self, message: PatternMembers.Selected) -> None:
        self.messages.append(message)


def lines(table: PatternTable | PatternMembers) -> list[str]:
    return [strip.text for strip in table.render_lines(Region(0, 0, *table.size))]


def test_matching_groups_by_kind_and_filters_words() -> None:
    rows = [
        pattern(1, kind="insight"),
        pattern(2, kind="strategy", trigger="When the pod never gets Ready"),
        pattern(3),
        pattern(4, kind="insight", resolution="Ready probes time out"),
    ]
    assert [p.pattern_id for p in matching(rows, None, "")] == [
        "p_00003",
        "p_00002",
        "p_00001",
        "p_00004",
    ]
    assert [p.pattern_id for p in matching(rows, "insight", "")] == ["p_00001", "p_00004"]
    assert [p.pattern_id for p in matching(rows, None, "  ready ")] == ["p_00002", "p_00004"]
    assert matching(rows, "pitfall", "ready") == []


async def test_checks_fill_the_columns_in_and_states_are_marked() -> None:
    app = Harness()
    async with app.run_test(size=(130, 10)) as pilot:
        table = app.query_one(PatternTable)
        rows = [
            pattern(1),
            pattern(2),
            pattern(3, status="graduated", skill_name="roll-back-first"),
            pattern(4, status="decayed", confidence=0.2),
        ]
        table.set_rows(rows)
        await pilot.pause()
        header, first, *_ = lines(table)
        assert header.split() == [
            "kind", "title", "nodes", "sess", "retr", "conf", "met", "state"
        ]  # fmt: skip
        assert first.split()[-4:] == ["…", "0.55", "…", "active"]  # no check yet

        table.set_checks(
            [
                check(rows[0]),
                check(rows[1], draft=draft_of(rows[1])),
                check(rows[2], revalidate=True),
                check(rows[3], met=2),
            ]
        )
        await pilot.pause()
        _, first, second, third, fourth, *_ = lines(table)
        assert first.startswith("✓")
        assert first.split()[-4:] == ["0.75", "0.55", "4/4", "eligible"]
        assert second.startswith("✎")
        assert second.rstrip().endswith("draft")
        assert third.startswith("!")
        assert third.rstrip().endswith("re-validate")
        assert fourth.startswith("·")
        assert fourth.split()[-2:] == ["2/4", "decayed"]
        for title, value in (("nodes", "4"), ("conf", "0.55"), ("state", "eligible")):
            assert header.index(title) + len(title) - len(value) <= first.index(value, 80) + 1

        dim = table.get_component_rich_style("pattern-table--dim")
        strip = table.render_row(rows[3], False, 120)
        assert {seg.style.color for seg in strip if seg.style} == {dim.color}


async def test_untrusted_titles_are_literal() -> None:
    app = Harness()
    async with app.run_test(size=(200, 6)) as pilot:
        table = app.query_one(PatternTable)
        table.set_rows([pattern(1, title=HOSTILE)])
        await pilot.pause()
        row = lines(table)[1]
        assert "[bold red]x[/] [link=http://e]y[/link] \\x1b[31mred \\x1b]0;title\\x07" in row
        assert "<U+202E>evil<U+202C>" in row
        assert not any(ch in row for ch in "\x1b\x07\u202e")


async def test_ten_thousand_rows_cursor_and_messages() -> None:
    app = Harness()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(PatternTable)
        table.set_rows([pattern(i) for i in range(1, 10_001)])
        await pilot.pause()
        await pilot.press("end")
        assert table.current is not None
        assert table.current.pattern_id == "p_10000"
        assert any("title 10000" in line for line in lines(table))
        await pilot.press("home", "j", "enter")
        highlighted = [
            m.pattern_id for m in app.messages if isinstance(m, PatternTable.Highlighted)
        ]
        assert highlighted == [None, "p_00001", "p_10000", "p_00001", "p_00002"]  # None: empty
        assert isinstance(app.messages[-1], PatternTable.Selected)
        assert app.messages[-1].pattern_id == "p_00002"

        # A fresh check of one pattern replaces the row (a draft was made meanwhile).
        fresh = replace(table.rows[1], confidence=0.61)
        table.update_check(check(fresh, draft=draft_of(fresh)))
        await pilot.pause()
        assert table.rows[1].confidence == 0.61
        assert table.state_of(table.rows[1]) == "draft"


async def test_members_list_nodes_and_enter_asks_for_the_graph() -> None:
    app = Harness()
    async with app.run_test(size=(100, 12)) as pilot:
        members = app.query_one(PatternMembers)
        members.set_rows([node(1), node(2, type="SOLUTION", summary=HOSTILE)])
        members.focus()
        await pilot.pause()
        header, first, second, *_ = lines(members)
        assert header.split() == ["type", "conf", "summary", "session"]
        assert first.split()[:4] == ["DEAD_END", "0.60", "summary", "00001"]
        assert "[bold red]x[/]" in second
        assert "\x1b" not in second
        await pilot.press("down", "enter")
        selected = [m for m in app.messages if isinstance(m, PatternMembers.Selected)]
        assert [m.node_id for m in selected] == ["n00002"]
