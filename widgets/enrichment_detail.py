"""The enrichment detail pane of the review queue: why the skill is thin, the proposed
description, when to use, triggers and tags, and the diff approval would write into its
SKILL.md (frontmatter only; comments, key order and the body are kept).

Everything here comes from a skill file, an LLM or a transcript: it goes into `Text`, never
markup, after control characters are neutralised.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import Enrichment
from store.text import one_line
from widgets.hanging import hanging
from widgets.pattern_text import diff_text, section, when

EMPTY = "Select a proposal to read the rewrite it proposes."
FIELD_TITLES = (
    ("description", "Description"),
    ("when_to_use", "When to use"),
    ("triggers", "Triggers"),
    ("tags", "Tags"),
)


class EnrichmentDetailView(VerticalScroll, can_focus=True):
    """Shows one `Enrichment`; call `show`."""

    COMPONENT_CLASSES = {
        "enrichment-detail--label",
        "enrichment-detail--dim",
        "enrichment-detail--met",
        "enrichment-detail--unmet",
        "enrichment-detail--warning",
    }

    DEFAULT_CSS = """
    EnrichmentDetailView { padding: 0 1; background: $surface; }
    EnrichmentDetailView > Static { width: 1fr; }
    EnrichmentDetailView > .enrichment-detail--label { text-style: bold; }
    EnrichmentDetailView > .enrichment-detail--dim { color: $text-muted; }
    EnrichmentDetailView > .enrichment-detail--met { color: $text-success; }
    EnrichmentDetailView > .enrichment-detail--unmet { color: $text-error; }
    EnrichmentDetailView > .enrichment-detail--warning { color: $text-warning; text-style: bold; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._proposal: Enrichment | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="enrichment-detail-body")

    @property
    def proposal(self) -> Enrichment | None:
        return self._proposal

    def show(self, proposal: Enrichment | None) -> None:
        same = (
            proposal is not None
            and self._proposal is not None
            and proposal.proposal_id == self._proposal.proposal_id
        )
        self._proposal = proposal
        if self.is_mounted:
            self.query_one("#enrichment-detail-body", Static).update(hanging(self.renderable()))
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        e = self._proposal
        if e is None:
            return Text(EMPTY, style="dim")
        head = Text()
        tone = {"pending": "warning", "approved": "met", "rejected": "unmet"}.get(e.status, "dim")
        head.append(one_line(e.status, 20), self._style(tone) + Style(bold=True))
        head.append(" · ")
        head.append(one_line(e.skill_name, 80), Style(bold=True))
        head.append(f" v{e.version_no} · {one_line(e.proposal_id, 40)}", self._style("dim"))
        head.append(
            f"\nproposed {when(e.created_at)} by {one_line(e.created_by, 120) or 'unknown'}"
            f" from {one_line(e.source, 60)}",
            self._style("dim"),
        )
        if e.decided_at:
            head.append(
                f"\n{e.status} {when(e.decided_at)} by {one_line(e.decided_by, 120)}",
                self._style("dim"),
            )
        if e.reason:
            head.append(f"\nreason: {one_line(e.reason, 600)}", self._style("dim"))
        why = Text()
        for reason in e.reasons:
            why.append(f"• {one_line(reason, 300)}\n")
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style=self._style("label"), no_wrap=True, min_width=12)
        grid.add_column(ratio=1)
        for key, title in FIELD_TITLES:
            value = e.fields.get(key, "")
            grid.add_row(title, Text(one_line(value, 1200)) if value else Text("-", "dim"))
        return Group(
            head,
            section("Why it is proposed"),
            why,
            section("Proposed frontmatter (spec keys only: description, then metadata)"),
            grid,
            section("The diff approval writes (comments, key order and the body are kept)"),
            Padding(diff_text(e.diff, self._style), (0, 0, 0, 2)),
        )

    def _style(self, suffix: str) -> Style:
        if not suffix:
            return Style()
        return self.get_component_rich_style(f"enrichment-detail--{suffix}")
