"""The base of the review queue's panes: one list of things waiting for a decision (nodes,
SKILL.md drafts, relation proposals, enrichment proposals), with its table, its detail view,
its workers, and the decisions approve / reject stand for in it.

The screen keeps the keys (so they work with the focus on the detail too) and asks the shown
pane: `can(action)` for the footer, `run(action)` to act, `status()` for the status line and
`palette_commands()` for the command palette. A pane's table sits inside the pane; its detail
view and the status line sit on the screen (between the lists and the details), so the pane
finds its detail by selector and tells the screen through `changed` when its counts moved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual.widget import Widget
from textual.worker import Worker

from app.dialogs.text_prompt import TextPrompt
from app.screens.base import PaletteCommand, key_for, report_worker_error
from store.library import Library
from store.text import one_line
from widgets.decision_table import DecisionTable

RowT = TypeVar("RowT")
KeyT = TypeVar("KeyT")


class DecisionPane(Widget):
    """One of the review queue's lists. Subclasses give MODE, SUBTITLE, the table they
    compose and the actions they answer (see `can` and `run`)."""

    DEFAULT_CSS = """
    DecisionPane { height: 1fr; layout: vertical; }
    """

    #: The screen's name for this list (its class `-{MODE}` shows the pane).
    MODE: ClassVar[str] = ""
    #: The screen's sub-title while this list is shown.
    SUBTITLE: ClassVar[str] = "Review queue"
    #: Actions this pane answers besides approve and reject (others are greyed out).
    ACTIONS: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, library: Library, changed: Callable[[], None], *, id: str) -> None:
        super().__init__(id=id)
        self.library = library
        self._changed = changed
        #: True while the screen shows this pane.
        self.shown = False

    # -- for the screen --------------------------------------------------------------

    def can(self, action: str) -> bool | None:
        """True: the action applies now; None: greyed out in the footer (it waits for a
        selection); False: hidden (this list has no use for it)."""
        return action in self.ACTIONS

    def run(self, action: str) -> None:
        """Run approve, reject or one of ACTIONS (by the name the screen's keys use)."""
        getattr(self, f"action_{action}")()

    def show(self) -> None:
        """The pane was switched to: draw its current row and read the list again."""
        self.list_widget().focus()

    def reload(self) -> None:
        """Read the list again (the screen was shown again: it may have changed)."""

    def subtitle(self) -> str:
        """The screen's sub-title while this list is shown."""
        return self.SUBTITLE

    def status(self) -> Text:
        """The status line while this pane is shown."""
        return Text()

    def palette_commands(self) -> list[PaletteCommand]:
        return []

    def list_widget(self) -> Widget:
        raise NotImplementedError

    def detail_widget(self) -> Widget:
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------------

    def key_for(self, binding_id: str) -> str:
        return key_for(self.screen, binding_id)

    def changed(self) -> None:
        """Counts or the selection moved: the screen redraws its status line."""
        self._changed()

    def ask(self, prompt: TextPrompt, then: Callable[[str], None]) -> None:
        def answered(value: str | None) -> None:
            if value is not None:
                then(value)

        self.app.push_screen(prompt, answered)

    def ask_reason(self, title: str, then: Callable[[str], None]) -> None:
        self.ask(
            TextPrompt(
                title, placeholder="reason (required)", hint="Enter rejects · Escape cancels"
            ),
            then,
        )

    def tell_failure(self, action: str, error: str) -> None:
        if error:
            self.notify(
                one_line(f"{action} failed: {error}", 300),
                severity="error",
                timeout=8,
                markup=False,  # the message quotes names: untrusted
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)


class ListPane(DecisionPane, Generic[RowT, KeyT]):
    """A pane over one `DecisionTable` of proposals (drafts, relations, enrichments): the rows
    as loaded, the detail of the one under the cursor, and decisions written one at a time
    (the row stays dimmed until the reload drops it)."""

    #: "draft" → "3 drafts waiting" (NOUN, STATE).
    NOUN: ClassVar[str] = ""
    STATE: ClassVar[str] = "waiting"
    #: The binding id of the key that switches to this pane and back.
    TOGGLE: ClassVar[str] = ""
    #: The status line's way back names how many nodes are pending.
    BACK_COUNTS: ClassVar[bool] = True

    def __init__(self, library: Library, changed: Callable[[], None], *, id: str) -> None:
        super().__init__(library, changed, id=id)
        self.items: Sequence[RowT] = []
        #: Pending nodes, for the status line's way back (set by the screen).
        self.pending: int | None = None

    def table(self) -> DecisionTable[RowT, KeyT]:
        raise NotImplementedError

    def list_widget(self) -> Widget:
        return self.table()

    def target(self) -> RowT | None:
        """The row under the cursor, unless a decision on it is being written."""
        table = self.table()
        row = table.current
        return row if row is not None and table.row_key(row) not in table.busy else None

    def can(self, action: str) -> bool | None:
        if action in ("approve", "reject"):
            return True if self.target() is not None else None
        return super().can(action)

    def set_items(self, items: Sequence[RowT]) -> None:
        self.items = items
        self.table().set_rows(items)
        self.show_current()
        self.changed()
        if self.shown:
            self.screen.refresh_bindings()

    def show_current(self) -> None:
        """Draw the row under the cursor in the detail view."""

    def show(self) -> None:
        super().show()
        self.show_current()
        self.reload()

    def busy(self, key: KeyT, busy: bool = True) -> None:
        self.table().set_busy(key, busy)
        self.screen.refresh_bindings()

    def highlighted(self) -> None:
        self.show_current()
        self.screen.refresh_bindings()

    def status(self) -> Text:
        count = len(self.items)
        text = Text()
        text.append(f"{count:,} {self.NOUN}{'s' if count != 1 else ''} {self.STATE}", style="bold")
        key = self.key_for(self.TOGGLE)
        if self.shown:
            counted = self.BACK_COUNTS and self.pending is not None
            pending = f"{self.pending:,} pending " if counted else ""
            back = f"{key}: back to the {pending}nodes" if key else f"back to the {pending}nodes"
            text.append(f"  ·  {back}", style="dim")
        elif key:
            text.append(f" ({key})", style="dim")
        return text
