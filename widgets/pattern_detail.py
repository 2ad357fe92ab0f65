"""The pattern detail pane: what the pattern says (and, for a pattern below the pattern bar,
why it is never served), the graduation checklist with its numbers, trigger / steps /
resolution with their evidence, and the drafted SKILL.md when there is one.

Every string from a pattern or a draft is untrusted: it goes into `Text` (never markup)
after its control characters are neutralised.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import PATTERN_KIND_LABELS, GraduationCheck, Pattern
from store.text import neutralise, one_line
from widgets.hanging import hanging
from widgets.pattern_text import (
    checklist,
    draft_body,
    draft_heading,
    lines,
    literal,
    pattern_state,
    retrieval_lines,
    section,
    when,
)

EMPTY = "Select a pattern to see its criteria, steps and draft."
POLARITY = {"key": "key pattern", "anti": "anti-pattern"}


class PatternDetailView(VerticalScroll, can_focus=True):
    """Shows one `Pattern` and its `GraduationCheck` (None while it loads); call `show`."""

    COMPONENT_CLASSES = {
        "pattern-detail--label",
        "pattern-detail--dim",
        "pattern-detail--met",
        "pattern-detail--unmet",
        "pattern-detail--warning",
        "pattern-detail--code",
        "pattern-detail--pitfall",
        "pattern-detail--strategy",
        "pattern-detail--insight",
    }

    DEFAULT_CSS = """
    PatternDetailView { padding: 0 1; background: $surface; }
    PatternDetailView > Static { width: 1fr; }
    PatternDetailView > .pattern-detail--label { text-style: bold; }
    PatternDetailView > .pattern-detail--dim { color: $text-muted; }
    PatternDetailView > .pattern-detail--met { color: $text-success; text-style: bold; }
    PatternDetailView > .pattern-detail--unmet { color: $text-error; text-style: bold; }
    PatternDetailView > .pattern-detail--warning { color: $text-warning; text-style: bold; }
    PatternDetailView > .pattern-detail--code { background: $boost; }
    PatternDetailView > .pattern-detail--pitfall { color: $text-error; text-style: bold; }
    PatternDetailView > .pattern-detail--strategy { color: $text-primary; text-style: bold; }
    PatternDetailView > .pattern-detail--insight { color: $text-accent; text-style: bold; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._pattern: Pattern | None = None
        self._check: GraduationCheck | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="pattern-detail-body")

    @property
    def pattern(self) -> Pattern | None:
        return self._pattern

    @property
    def check(self) -> GraduationCheck | None:
        """The shown pattern's graduation check; None while it is being loaded."""
        return self._check

    def show(self, pattern: Pattern | None, check: GraduationCheck | None = None) -> None:
        """Show `pattern` with its check (None: still loading). A check of another pattern is
        ignored."""
        if check is not None and (
            pattern is None or check.pattern.pattern_id != pattern.pattern_id
        ):
            check = None
        same = (
            pattern is not None
            and self._pattern is not None
            and pattern.pattern_id == self._pattern.pattern_id
        )
        self._pattern = check.pattern if check is not None else pattern
        self._check = check
        if self.is_mounted:
            self.query_one("#pattern-detail-body", Static).update(hanging(self.renderable()))
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        if self._pattern is None:
            return Text(EMPTY, style="dim")
        pattern = self._pattern
        return Group(
            self._title(pattern),
            self._fields(pattern),
            *self._criteria(pattern, self._check),
            *self._how(pattern),
            *self._draft(self._check),
        )

    # -- sections ------------------------------------------------------------------

    def _style(self, suffix: str) -> Style:
        return self.get_component_rich_style(f"pattern-detail--{suffix}")

    def _title(self, pattern: Pattern) -> Text:
        out = Text()
        label = PATTERN_KIND_LABELS.get(pattern.kind, one_line(pattern.kind, 24))
        out.append(label, self._style(pattern.kind) if pattern.kind in PATTERN_KIND_LABELS else "")
        if pattern.severity:
            out.append(f" · {one_line(pattern.severity, 10)} severity")
        if pattern.polarity in POLARITY:
            out.append(f" · {POLARITY[pattern.polarity]}")
        state = pattern_state(pattern, self._check)
        tone = {"eligible": "met", "graduated": "met", "draft": "warning", "re-validate": "warning"}
        out.append("  ")
        out.append(state, self._style(tone.get(state, "dim")))
        out.append("\n")
        out.append(neutralise(pattern.title, keep_newlines=False) or "(untitled)", "bold")
        if pattern.flaw:
            out.append("\nNot served: ", self._style("warning"))
            out.append(neutralise(pattern.flaw, keep_newlines=False), self._style("warning"))
        if pattern.summary and pattern.summary != pattern.title:
            out.append("\n")
            out.append(neutralise(pattern.summary, keep_newlines=False))
        out.append("\n")
        return out

    def _fields(self, pattern: Pattern) -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style=self._style("label"), no_wrap=True, min_width=10)
        grid.add_column(ratio=1)
        project = one_line(pattern.project, 300) or "every project"
        grid.add_row("Scope", Text(f"{one_line(pattern.scope, 20)} · {project}"))
        grid.add_row(
            "Evidence",
            Text(
                f"{pattern.members} node{'s' if pattern.members != 1 else ''} from"
                f" {pattern.sessions} session{'s' if pattern.sessions != 1 else ''} by"
                f" {pattern.developers} developer{'s' if pattern.developers != 1 else ''}"
            ),
        )
        grid.add_row(
            "Confidence",
            Text(
                f"{pattern.confidence:.2f} (base {pattern.base_confidence:.2f})"
                f" · classified by {one_line(pattern.classifier, 20)}"
            ),
        )
        retrieved = f"{pattern.retrieval_count}×"
        if pattern.last_retrieved_at:
            retrieved += f" (last {when(pattern.last_retrieved_at)})"
        grid.add_row("Retrieved", Text(retrieved))
        grid.add_row("Seen", Text(f"{when(pattern.first_seen)} → {when(pattern.last_seen)}"))
        if pattern.skill_name:
            grid.add_row("Skill", Text(one_line(pattern.skill_name, 120)))
        grid.add_row("Id", Text(one_line(pattern.pattern_id, 60), self._style("dim")))
        return grid

    def _criteria(self, pattern: Pattern, check: GraduationCheck | None) -> list[RenderableType]:
        parts: list[RenderableType] = [section("Graduation criteria")]
        if check is None:
            parts.append(Text("checking…", self._style("dim")))
            return parts
        return parts + checklist(pattern, check, self._style) + retrieval_lines(check, self._style)

    def _how(self, pattern: Pattern) -> list[RenderableType]:
        parts: list[RenderableType] = []
        if pattern.trigger:
            parts += [section("When"), literal(pattern.trigger)]
        if pattern.steps:
            parts.append(section("Steps"))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True, justify="right", style=self._style("label"))
            grid.add_column(ratio=1)
            for number, step in enumerate(pattern.steps, 1):
                text = Text(neutralise(step.text, keep_newlines=False))
                if step.node_id:
                    where = f"{one_line(step.file, 120)} {lines(step.line_start, step.line_end)}"
                    text.append(
                        f"\nnode {one_line(step.node_id, 40)} · {where}", self._style("dim")
                    )
                grid.add_row(f"{number}.", text)
            parts.append(grid)
        if pattern.resolution:
            parts += [section("Resolution"), literal(pattern.resolution)]
        return parts

    def _draft(self, check: GraduationCheck | None) -> list[RenderableType]:
        if check is None or check.draft is None:
            return []
        draft = check.draft
        return [
            section("Draft SKILL.md"),
            draft_heading(draft, self._style),
            *draft_body(draft, self._style),
        ]
