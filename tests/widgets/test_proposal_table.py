"""ProposalTable and ProposalDetailView in a tiny harness app: columns, warned statuses,
literal untrusted names and prompts, busy rows, posted messages."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import RelationProposal, SharedSession
from widgets.proposal_detail import ProposalDetailView
from widgets.proposal_table import ProposalTable

HOSTILE = "[bold red]x[/] \x1b[31mred \x1b]0;title\x07 \u202eevil\u202c"


def proposal(number: int, **changes: object) -> RelationProposal:
    row = RelationProposal(
        source_name=f"skill-{number:05d}",
        target_name=f"zeta-{number:05d}",
        shared=3 + number % 5,
        sessions=("s-1", "s-2", "s-3"),
        status="pending",
        reason="",
        proposed_at="2026-11-02T09:00:00+00:00",
        source_status="stable",
        target_status="stable",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class Harness(App[None]):
    """A focused ProposalTable above a ProposalDetailView; records what the table posts."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield ProposalTable()
        yield ProposalDetailView()

    def on_mount(self) -> None:
        self.query_one(ProposalTable).focus()

    def on_proposal_table_highlighted(self, message: ProposalTable.Highlighted) -> None:
        self.messages.append(message)

    def on_proposal_table_selected(self, message: ProposalTable.Selected) -> None:
        self.messages.append(message)


def lines(table: ProposalTable) -> list[str]:
    return [strip.text for strip in table.render_lines(Region(0, 0, *table.size))]


def plain(view: ProposalDetailView) -> str:
    console = Console(file=io.StringIO(), width=300, color_system=None)
    with console.capture() as captured:
        console.print(view.renderable())
    return captured.get()


async def test_rows_show_the_pair_shared_sessions_statuses_and_date() -> None:
    app = Harness()
    async with app.run_test(size=(120, 12)) as pilot:
        table = app.query_one(ProposalTable)
        table.set_rows([proposal(1, target_status="deprecated"), proposal(2)])
        await pilot.pause()
        header, first, second = lines(table)[:3]
        assert header.split() == ["often", "used", "together", "shared", "statuses", "proposed"]
        assert "skill-00001 ↔ zeta-00001" in first
        assert "stable · deprecated" in first
        assert "2026-11-02 09:00" in first
        assert " 5 " in second
        await pilot.press("j", "enter")
        keys = [m.pair for m in app.messages if isinstance(m, ProposalTable.Highlighted)]
        assert keys[-1] == ("skill-00002", "zeta-00002")
        assert isinstance(app.messages[-1], ProposalTable.Selected)
        table.set_busy(("skill-00002", "zeta-00002"))
        assert table.busy == {("skill-00002", "zeta-00002")}
        table.set_rows([proposal(1)])  # decided rows leave with their busy flag
        assert table.busy == frozenset()


async def test_untrusted_names_and_prompts_are_literal() -> None:
    app = Harness()
    async with app.run_test(size=(200, 8)) as pilot:
        table = app.query_one(ProposalTable)
        hostile = proposal(1, source_name=HOSTILE)
        table.set_rows([hostile])
        await pilot.pause()
        row = lines(table)[1]
        assert "[bold red]x[/] \\x1b[31mred \\x1b]0;title\\x07 <U+202E>evil<U+202C>" in row
        assert not any(ch in row for ch in "\x1b\x07\u202e")

        view = app.query_one(ProposalDetailView)
        view.show(hostile)
        assert "loading the sessions" in plain(view)
        shared = SharedSession("s-1", "/work/api", "main", "2026-10-20T10:01:00+00:00", HOSTILE)
        view.show(hostile, [shared])
        text = plain(view)
        assert "Used together in 4 sessions" in text
        assert "2026-10-20 10:01 /work/api @ main  s-1" in text
        assert "[bold red]x[/] \\x1b[31mred" in text
        assert "… and 3 more" in text
        assert not any(ch in text for ch in "\x1b\x07\u202e")
        view.show(replace(hostile, status="rejected", reason="chance", decided_by="Dana"), [])
        text = plain(view)
        assert "rejected" in text
        assert "reason: chance" in text
        assert "none of them is in the library any more" in text
