"""A scrolling pane that shows one renderable (a skill's status history, its runs and
incidents); the screen hands it what to show."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class LineagePanel(VerticalScroll, can_focus=True):
    """One renderable, scrolled with the arrow and page keys; call `show`."""

    DEFAULT_CSS = """
    LineagePanel { padding: 0 1; background: $surface; }
    LineagePanel > Static { width: 1fr; }
    LineagePanel:focus { background-tint: $foreground 4%; }
    """

    def __init__(
        self,
        empty: str = "",
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._renderable: RenderableType = Text(empty, style="dim")

    def compose(self) -> ComposeResult:
        yield Static(self._renderable)

    @property
    def renderable(self) -> RenderableType:
        return self._renderable

    def show(self, renderable: RenderableType, *, home: bool = True) -> None:
        """Show `renderable` (built from `Text`, never from markup strings)."""
        self._renderable = renderable
        if self.is_mounted:
            self.query_one(Static).update(renderable)
            if home:
                self.scroll_home(animate=False, immediate=True)
