"""The Graph screen's modal for a hand-made relation: the relation type and the other skill.

It only asks; the screen calls `Library.relate` (checked there: unknown skills,
self-relations and dependency cycles are refused with a message)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select

from store.models import RELATION_TYPES
from store.text import one_line
from widgets.keys import bind


class RelateModal(ModalScreen[tuple[str, str] | None]):
    """`SOURCE <type> <target>`: Enter in the target field adds it, Escape cancels.

    Dismisses with (relation type, target name), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="relate.cancel", tooltip="Close, change nothing"),
    ]

    def __init__(self, source: str, kind: str = "requires", target: str = "") -> None:
        super().__init__()
        self._source = source
        self._kind = kind if kind in RELATION_TYPES else "requires"
        self._target = target

    def compose(self) -> ComposeResult:
        with Vertical(id="relate-box"):
            yield Label(
                Text.assemble("Relate ", (one_line(self._source, 60), "bold"), " to a skill"),
                id="relate-title",
            )
            yield Select(
                [(kind, kind) for kind in RELATION_TYPES],
                value=self._kind,
                allow_blank=False,
                id="relate-type",
            )
            yield Input(
                value=self._target, placeholder="the other skill's name", id="relate-target"
            )
            yield Label(
                Text(
                    "requires / extends make it depend on the other skill (no cycles);"
                    " Enter adds · Escape cancels",
                    style="dim",
                ),
                id="relate-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#relate-target", Input).focus()

    @on(Input.Submitted, "#relate-target")
    def _submitted(self, event: Input.Submitted) -> None:
        target = event.value.strip()
        if not target:
            self.app.bell()
            return
        kind = self.query_one("#relate-type", Select).value
        self.dismiss((str(kind), target))

    def action_cancel(self) -> None:
        self.dismiss(None)
