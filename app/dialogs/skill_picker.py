"""A modal that picks any skill by name: a LIMITed search over the catalog as you type, so it
stays quick at 50,000 skills (used by the Lineage and Graph screens)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label
from textual.worker import get_current_worker

from store.library import Library
from store.models import SkillSummary
from widgets.keys import bind
from widgets.skill_table import SkillTable

#: Skills the picker lists at most.
PICK_LIMIT = 200


@dataclass
class PickerRows(Message):
    text: str
    rows: list[SkillSummary]


class SkillPicker(ModalScreen[str | None]):
    """Choose a skill by name: type to narrow the list, enter picks, escape cancels.

    Dismisses with the skill's id (as text), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="picker.cancel", tooltip="Close, change nothing"),
        bind(
            "down",
            "focus_list",
            "List",
            show=False,
            id="picker.list",
            tooltip="From the search field down into the list",
            key="down",
        ),
    ]

    def __init__(self, library: Library, title: str = "Show the lineage of…") -> None:
        super().__init__()
        self.library = library
        self._title = title

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Label(Text(self._title, style="bold"), id="picker-title")
            yield Input(placeholder="skill name, status, root or description", id="picker-input")
            yield SkillTable(id="picker-table")
            yield Label(
                Text("Enter picks · ↓ to the list · Escape cancels", style="dim"),
                id="picker-hint",
            )

    def on_mount(self) -> None:
        self.query_one(SkillTable).empty_text = "searching…"
        self.query_one(Input).focus()
        self.search("")

    @work(thread=True, exclusive=True, group="skill-pick", exit_on_error=False)
    def search(self, text: str) -> None:
        rows = self.library.list_skills(text, include_uninstalled=True, limit=PICK_LIMIT)
        if not get_current_worker().is_cancelled:
            self.post_message(PickerRows(text, rows))

    def on_picker_rows(self, message: PickerRows) -> None:
        if message.text != self.query_one(Input).value:
            return  # typed on meanwhile: a newer search follows
        table = self.query_one(SkillTable)
        table.empty_text = "No skill matches." if message.text.strip() else "No skills."
        table.set_rows(message.rows)

    @on(Input.Changed, "#picker-input")
    def _changed(self, event: Input.Changed) -> None:
        self.search(event.value)

    @on(Input.Submitted, "#picker-input")
    def _submitted(self) -> None:
        current = self.query_one(SkillTable).current
        if current is None:
            self.app.bell()
        else:
            self.dismiss(str(current.skill_id))

    @on(SkillTable.Selected)
    def _selected(self, event: SkillTable.Selected) -> None:
        self.dismiss(str(event.skill_id))

    def action_focus_list(self) -> None:
        self.query_one(SkillTable).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
