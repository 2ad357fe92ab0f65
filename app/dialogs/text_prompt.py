"""One line of text in a modal: a reason, a new summary, a literal to keep."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from widgets.keys import bind


class TextPrompt(ModalScreen[str | None]):
    """One line of text: Enter returns it (possibly empty), Escape returns None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="prompt.cancel", tooltip="Close, change nothing"),
    ]

    def __init__(
        self, title: str, *, value: str = "", placeholder: str = "", hint: str = ""
    ) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(Text(self._title, style="bold"), id="prompt-title")
            yield Input(value=self._value, placeholder=self._placeholder, id="prompt-input")
            yield Label(Text(self._hint, style="dim"), id="prompt-hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
