"""The `?` sheet: the current screen's keys, grouped by purpose as the key grammar groups
them (`widgets.keys`), with what each does; greyed keys wait for a selection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from widgets.keys import bind

#: The sheet's last line.
HINT = "greyed: waits for a selection · ctrl+p finds any action by name · esc or ? closes"


@dataclass(frozen=True)
class SheetLine:
    """One line of the sheet: its group, the keys, what they do, and whether they work now."""

    group: str
    keys: str
    text: str
    enabled: bool = True


class KeysSheet(ModalScreen[None]):
    """This screen's keys by group. Escape or `?` closes it.

    | Key | Action |
    | --- | --- |
    | esc, ? | close |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "dismiss", "Close", id="keys.close", tooltip="Close the sheet"),
        bind("keys", "dismiss", "Close", id="keys.toggle", tooltip="Close the sheet"),
    ]

    DEFAULT_CSS = """
    KeysSheet { align: center middle; }
    KeysSheet > #keys-box {
        width: 90; max-width: 95%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    KeysSheet #keys-body { height: auto; max-height: 100%; }
    KeysSheet #keys-hint { color: $text-muted; }
    """

    def __init__(self, title: str, lines: Sequence[SheetLine]) -> None:
        super().__init__()
        self._title = title
        self._lines = list(lines)

    def compose(self) -> ComposeResult:
        with Vertical(id="keys-box"):
            yield Label(Text(self._title, style="bold"), id="keys-title")
            with VerticalScroll(id="keys-body"):
                yield Static(self._table(), id="keys-table")
            yield Label(HINT, id="keys-hint")

    def _table(self) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(no_wrap=True, min_width=10)
        table.add_column(ratio=1)
        group = ""
        for line in self._lines:
            if line.group != group:
                if group:
                    table.add_row("", "")
                group = line.group
                table.add_row(Text(group, style="bold underline"), "")
            style = "" if line.enabled else "dim"
            table.add_row(Text(line.keys, style=f"bold {style}".strip()), Text(line.text, style))
        return table

    @property
    def lines(self) -> list[SheetLine]:
        return list(self._lines)
