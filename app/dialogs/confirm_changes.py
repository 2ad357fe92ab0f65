"""The Health screen's confirmation: what `apply` will change, before it changes anything."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from store.models import HealthChange
from store.models.events import EventType
from store.text import one_line
from widgets.keys import bind


class ConfirmChanges(ModalScreen[bool]):
    """Lists the planned status changes; `y` / enter applies them, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("yes", "answer(True)", "Apply", id="confirm.yes", tooltip="Make the changes"),
        bind(
            "open",
            "answer(True)",
            "Apply",
            show=False,
            id="confirm.enter",
            tooltip="Make the changes",
        ),
        bind("clear", "answer(False)", "Cancel", id="confirm.no", tooltip="Change nothing"),
    ]

    def __init__(self, changes: Sequence[HealthChange]) -> None:
        super().__init__()
        self._changes = list(changes)

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Label(
                Text(f"Apply {len(self._changes)} status changes?", style="bold"),
                id="confirm-title",
            )
            with VerticalScroll(id="confirm-list"):
                yield Static(self._list())
            yield Label(
                Text(
                    "Each is an event with its reason; a drift alert is reversible"
                    " (promote it back). y / Enter applies · n / Escape cancels",
                    style="dim",
                ),
                id="confirm-hint",
            )

    def _list(self) -> Text:
        text = Text()
        for change in self._changes:
            demote = change.event_type == EventType.SKILL_DEPRECATED
            text.append("▼ " if demote else "▲ ", "bold red" if demote else "bold green")
            text.append(one_line(change.name, 60), "bold")
            text.append(f"  {change.status} → {change.target}\n")
            text.append(f"    {one_line(change.reason, 200)}\n", "dim")
        return text

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
