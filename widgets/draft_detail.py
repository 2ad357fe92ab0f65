"""The draft detail pane of the review queue: a drafted SKILL.md shown literally, its
citations, and the graduation checklist of the pattern it was drafted from.

SKILL.md text, names and criteria are untrusted: they go into `Text` (never markup) after
their control characters are neutralised.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import PATTERN_KIND_LABELS, Draft, GraduationCheck
from store.text import neutralise, one_line
from widgets.hanging import hanging
from widgets.pattern_text import (
    checklist,
    draft_body,
    draft_heading,
    retrieval_lines,
    section,
    write_gate,
)

EMPTY = "Select a draft to read its SKILL.md."


class DraftDetailView(VerticalScroll, can_focus=True):
    """Shows one `Draft` and its pattern's `GraduationCheck` (None: unknown); call `show`."""

    COMPONENT_CLASSES = {
        "draft-detail--label",
        "draft-detail--dim",
        "draft-detail--met",
        "draft-detail--unmet",
        "draft-detail--warning",
        "draft-detail--code",
    }

    DEFAULT_CSS = """
    DraftDetailView { padding: 0 1; background: $surface; }
    DraftDetailView > Static { width: 1fr; }
    DraftDetailView > .draft-detail--label { text-style: bold; }
    DraftDetailView > .draft-detail--dim { color: $text-muted; }
    DraftDetailView > .draft-detail--met { color: $text-success; text-style: bold; }
    DraftDetailView > .draft-detail--unmet { color: $text-error; text-style: bold; }
    DraftDetailView > .draft-detail--warning { color: $text-warning; text-style: bold; }
    DraftDetailView > .draft-detail--code { background: $boost; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._draft: Draft | None = None
        self._check: GraduationCheck | None = None
        self._diff = ""

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="draft-detail-body")

    @property
    def draft(self) -> Draft | None:
        return self._draft

    def show(
        self, draft: Draft | None, check: GraduationCheck | None = None, diff: str = ""
    ) -> None:
        """Show `draft`; `check` is its pattern's (ignored when it is another pattern's);
        `diff` shows what its parameters change (the draft as learned → as written)."""
        if check is not None and (draft is None or check.pattern.pattern_id != draft.pattern_id):
            check = None
        same = (
            draft is not None and self._draft is not None and draft.draft_id == self._draft.draft_id
        )
        self._draft = draft
        self._check = check
        self._diff = diff
        if self.is_mounted:
            self.query_one("#draft-detail-body", Static).update(hanging(self.renderable()))
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        if self._draft is None:
            return Text(EMPTY, style="dim")
        draft = self._draft
        return Group(
            draft_heading(draft, self._style),
            *self._pattern(draft, self._check),
            *write_gate(draft, self._style, self._diff),
            section("SKILL.md (as it will be written)"),
            *draft_body(draft, self._style),
        )

    def _style(self, suffix: str) -> Style:
        return self.get_component_rich_style(f"draft-detail--{suffix}")

    def _pattern(self, draft: Draft, check: GraduationCheck | None) -> list[RenderableType]:
        head = Text(f"from pattern {one_line(draft.pattern_id, 40)}", self._style("dim"))
        if check is None:
            return [head]
        pattern = check.pattern
        title = Text()
        title.append(PATTERN_KIND_LABELS.get(pattern.kind, one_line(pattern.kind, 24)), "bold")
        title.append(": ")
        title.append(neutralise(pattern.title, keep_newlines=False))
        title.append(
            f"  ({pattern.members} nodes, {pattern.sessions} sessions)", self._style("dim")
        )
        return [
            head,
            section("Graduation criteria"),
            title,
            *checklist(pattern, check, self._style),
            *retrieval_lines(check, self._style),
        ]
