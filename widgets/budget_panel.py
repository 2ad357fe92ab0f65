"""The Skills screen's budget panel: Claude Code's skill listing for the working folder against
its character budget — a gauge, every listed skill with what it costs and what happens to its
description, and what to do about it.

Skill names, paths and advice mention text from skill files: everything goes into `Text`."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models.listing import ListingReport
from store.text import home_relative, one_line

LOADING = "Reading Claude Code's settings and the skills it would list here…"
STATE_LABEL = {
    "full": ("listed", "green"),
    "dropped": ("name only", "bold red"),
    "name_only": ("name only*", "yellow"),
    "hidden": ("hidden", "dim"),
    "shadowed": ("shadowed", "dim"),
}
GAUGE_WIDTH = 40


class BudgetPanel(VerticalScroll, can_focus=True):
    """Shows a `ListingReport`; call `show` (None: loading)."""

    DEFAULT_CSS = """
    BudgetPanel { padding: 0 1; background: $surface; }
    BudgetPanel > Static { width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Static(Text(LOADING, style="dim"), id="budget-body")

    def show(self, report: ListingReport | None, error: str = "") -> None:
        body = self.query_one("#budget-body", Static)
        if error:
            body.update(
                Text(f"The budget could not be computed: {one_line(error, 300)}", style="red")
            )
        elif report is None:
            body.update(Text(LOADING, style="dim"))
        else:
            body.update(render_report(report))
        self.scroll_home(animate=False)


def gauge(used: int, needed: int, budget: int) -> Text:
    """`used` of `budget` as a bar, with what would be needed past its end."""
    scale = max(budget, needed, 1)
    fill = round(GAUGE_WIDTH * min(used, budget) / scale)
    mark = round(GAUGE_WIDTH * budget / scale)
    over = max(0, round(GAUGE_WIDTH * needed / scale) - mark)
    bar = Text("▕")
    bar.append("█" * fill, style="green" if needed <= budget else "yellow")
    bar.append("░" * max(0, mark - fill), style="dim")
    bar.append("▏", style="bold")
    bar.append("█" * over, style="red")
    return bar


def render_report(r: ListingReport) -> RenderableType:
    s = r.settings
    head = Text()
    head.append("Claude Code's skill listing", style="bold")
    head.append(f"  {home_relative(one_line(r.folder, 120))}\n", style="dim")
    head.append_text(gauge(r.used_chars, r.full_chars, s.char_budget))
    head.append(f"  {r.used_chars:,} of {s.char_budget:,} characters", style="bold")
    if r.full_chars > s.char_budget:
        head.append(f"; {r.full_chars:,} needed", style="red")
    head.append(
        f"\n{s.context_tokens:,} tokens × {s.fraction:g} × {s.chars_per_token:g} chars/token;"
        f" descriptions cut at {s.max_desc_chars:,}; usage from {r.sessions:,} sessions\n",
        style="dim",
    )
    parts: list[RenderableType] = [head, _advice(r), _table(r)]
    if r.unread:
        parts.append(
            Text("\n".join(f"not read: {one_line(u, 200)}" for u in r.unread), style="yellow")
        )
    return Group(*parts)


def _advice(r: ListingReport) -> Text:
    out = Text()
    for advice in r.advice:
        style = "bold red" if advice.kind == "over_budget" else ""
        out.append("• ", style="bold")
        out.append(one_line(advice.message, 600) + "\n", style=style)
    return out


def _table(r: ListingReport) -> Table:
    table = Table(box=None, expand=True, padding=(0, 1), show_edge=False)
    table.add_column("state", no_wrap=True)
    table.add_column("chars", justify="right")
    table.add_column("desc", justify="right")
    table.add_column("uses", justify="right")
    table.add_column("drop", justify="right")
    table.add_column("skill", ratio=1, no_wrap=True)
    for e in r.entries:
        label, style = STATE_LABEL[e.state]
        name = Text(one_line(e.name, 60))
        name.append(f" {e.scope}", style="dim")
        if e.lost_terms:
            name.append(f"  loses: {one_line(', '.join(e.lost_terms[:4]), 60)}", style="yellow")
        table.add_row(
            Text(label, style=style),
            f"{e.listed_chars:,}",
            f"{e.description_chars:,}" + ("+" if e.capped else ""),
            str(e.uses),
            str(e.drop_rank or "-"),
            name,
        )
    return table
