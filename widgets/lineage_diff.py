"""The SKILL.md diff between a version and the one before it, coloured line by line (added,
removed, hunk headers) and shown literally: a skill's text is never parsed as markup."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.text import one_line
from widgets.lineage_text import diff_text

EMPTY = "Select a version to see what changed in it."
KINDS = ("header", "hunk", "added", "removed", "note")


class LineageDiff(VerticalScroll, can_focus=True):
    """A unified diff with a title line; call `show` (None: loading)."""

    COMPONENT_CLASSES = {f"lineage-diff--{kind}" for kind in (*KINDS, "title")}

    DEFAULT_CSS = """
    LineageDiff { padding: 0 1; background: $surface; }
    LineageDiff > Static { width: auto; min-width: 1fr; }
    LineageDiff:focus { background-tint: $foreground 4%; }
    LineageDiff > .lineage-diff--title { text-style: bold; }
    LineageDiff > .lineage-diff--header { color: $text-muted; text-style: bold; }
    LineageDiff > .lineage-diff--hunk { color: $text-accent; }
    LineageDiff > .lineage-diff--added { color: $text-success; }
    LineageDiff > .lineage-diff--removed { color: $text-error; }
    LineageDiff > .lineage-diff--note { color: $text-muted; text-style: italic; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._title = ""
        self._diff: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"))

    @property
    def diff(self) -> str | None:
        """The diff shown (None: none yet, or loading)."""
        return self._diff

    @property
    def title(self) -> str:
        return self._title

    def show(self, title: str, diff: str | None) -> None:
        """Show `diff` under `title`; None shows that it is loading."""
        same = title == self._title
        self._title, self._diff = title, diff
        if self.is_mounted:
            self.query_one(Static).update(self.renderable())
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        if not self._title:
            return Text(EMPTY, style="dim")
        heading = Text(
            one_line(self._title, 200), self.get_component_rich_style("lineage-diff--title")
        )
        if self._diff is None:
            return Group(heading, Text("loading…", style="dim"))
        if not self._diff:
            return Group(heading, Text("No change in SKILL.md (only other files changed).", "dim"))
        styles = {kind: self.get_component_rich_style(f"lineage-diff--{kind}") for kind in KINDS}
        return Group(heading, diff_text(self._diff, styles))
