"""The Runbook screen's dialogs: start a run (the skill checked before the reason is asked),
step 5 and 7's inputs, a step's confirmation, and abandoning a run (what it leaves behind,
statuses put back or kept).

Every field that must not be empty says why on Enter instead of closing; skill names
complete from the catalog (tab or →).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label, Select, Static

from store.errors import LibrarianError
from store.library import Library
from store.lifecycle.runbook_abandon import describe
from store.models import LeftBehind, StepPlan
from store.text import one_line
from widgets.keys import bind

DIALOG_CSS = """
    align: center middle;
    #runbook-error { color: $error; }
"""


class CatalogNames(Suggester):
    """Completes a skill name from the catalog (the names are loaded once, off the UI)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=False)
        self.names: list[str] = []
        self._folded: list[tuple[str, str]] = []

    def load(self, library: Library) -> None:
        """Blocking: call it from a thread worker."""
        names = sorted({s.name for s in library.list_skills("")})
        self._folded = [(n.casefold(), n) for n in names]
        self.names = names

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        return next((name for folded, name in self._folded if folded.startswith(value)), None)

    def near(self, text: str) -> list[str]:
        """Names close to a mistyped one: those containing it, else the closest spellings."""
        folded = text.casefold()
        containing = [name for key, name in self._folded if folded in key]
        return containing[:3] or difflib.get_close_matches(text, self.names, n=3, cutoff=0.6)


class DialogError(Label):
    """Why Enter did not close the dialog (empty until something is wrong)."""

    said = ""

    def say(self, text: str) -> None:
        self.said = one_line(text, 300)
        self.update(Text(self.said, style="bold red"))

    def clear(self) -> None:
        self.said = ""
        self.update("")


@dataclass(frozen=True)
class RunChoice:
    """What the new-run dialog settled: a skill to start a run for, or its open run."""

    skill: str
    reason: str = ""
    open_run: str = ""  # the skill's open run, reopened instead of asking a reason


@dataclass
class SkillChecked(Message):
    text: str
    skill: str = ""  # the catalog's name for it; "" when there is none
    open_run: str = ""
    error: str = ""


class NewRunPrompt(ModalScreen[RunChoice | None]):
    """Retire which skill? The name is checked (and completed) first; a skill with an open
    run reopens it, any other asks why it is retired."""

    DEFAULT_CSS = f"NewRunPrompt {{ {DIALOG_CSS} }}"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="runbook.new.cancel", tooltip="Change nothing"),
    ]

    def __init__(self, library: Library, skill: str = "") -> None:
        super().__init__()
        self.library = library
        self.names = CatalogNames()
        self.skill = ""  # set once the name is checked: the dialog then asks the reason
        self._given = skill

    def compose(self) -> ComposeResult:
        with Vertical(id="runbook-inputs"):
            yield Label(Text("Retire which skill?", style="bold"), id="runbook-inputs-title")
            yield Input(
                value=self._given,
                placeholder="skill name (tab completes)",
                suggester=self.names,
                id="input-skill",
            )
            yield Input(
                placeholder="why is it retired? (recorded with every step)", id="input-reason"
            )
            yield DialogError(id="runbook-error")
            yield Label(
                Text("enter: check the name · escape: cancel", style="dim"),
                id="runbook-inputs-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#input-reason", Input).display = False
        self.query_one("#input-skill", Input).focus()
        self.load_names()
        if self._given:
            self.check(self._given)

    @work(thread=True, group="runbook-names", exit_on_error=False)
    def load_names(self) -> None:
        self.names.load(self.library)

    @work(thread=True, exclusive=True, group="runbook-check", exit_on_error=False)
    def check(self, text: str) -> None:
        """Is `text` a skill that can be retired? (its open run, if it has one)"""
        try:
            run = self.library.open_run(text)
            if run is not None:
                self.post_message(SkillChecked(text, run.skill_name, run.run_id))
                return
            summary = self.library.get_skill(text).summary
        except LibrarianError as exc:
            self.post_message(SkillChecked(text, error=str(exc)))
            return
        if summary.status == "uninstalled":
            error = f"{summary.name!r} is uninstalled: there is nothing to retire"
            self.post_message(SkillChecked(text, error=error))
        else:
            self.post_message(SkillChecked(text, summary.name))

    def on_skill_checked(self, message: SkillChecked) -> None:
        if message.open_run:
            self.dismiss(RunChoice(message.skill, open_run=message.open_run))
            return
        if message.error:
            near = self.names.near(message.text)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            self.query_one(DialogError).say(message.error + hint)
            self.query_one("#input-skill", Input).focus()
            return
        self.skill = message.skill
        self.query_one("#runbook-inputs-title", Label).update(
            Text(f"Why is {one_line(self.skill, 60)} being retired?", style="bold")
        )
        self.query_one("#input-skill", Input).display = False
        reason = self.query_one("#input-reason", Input)
        reason.display = True
        reason.focus()
        self.query_one(DialogError).clear()
        self.query_one("#runbook-inputs-hint", Label).update(
            Text("enter: start the run (step 1 is planned, not done) · escape: cancel", style="dim")
        )

    @on(Input.Submitted, "#input-skill")
    def _skill_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.query_one(DialogError).say("type a skill name: tab completes it from the catalog")
            return
        self.check(text)

    @on(Input.Submitted, "#input-reason")
    def _reason_submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            self.query_one(DialogError).say(
                "a run needs a reason: why is the skill being retired? (escape cancels)"
            )
            return
        self.dismiss(RunChoice(self.skill, reason))

    def action_cancel(self) -> None:
        self.dismiss(None)


#: Step 5's choices, and what the dialog says under each.
REPAIR_MODES = (
    ("Name a successor skill", "successor"),
    ("Use the repaired version (edit SKILL.md, rescan)", "repaired"),
    ("No replacement", "none"),
)
REPAIR_HINTS = {
    "successor": "the skill that replaces it (tab completes from the catalog)",
    "repaired": "edit its SKILL.md and rescan first: the plan checks there is a new version",
    "none": "retired for good: nothing replaces it, the demoted dependents stay deprecated",
}


class StepInputs(ModalScreen[dict[str, str] | None]):
    """The inputs of step 5 (repair or replace) or step 7 (the incident)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="runbook.inputs.cancel", tooltip="Change nothing"),
    ]

    def __init__(
        self, plan: StepPlan, defaults: dict[str, str], library: Library | None = None
    ) -> None:
        super().__init__()
        self.plan = plan
        self.defaults = defaults
        self.library = library
        self.names = CatalogNames()

    def compose(self) -> ComposeResult:
        with Vertical(id="runbook-inputs"):
            yield Label(
                Text(f"Step {self.plan.step}/7 · {self.plan.title}", style="bold"),
                id="runbook-inputs-title",
            )
            if self.plan.waiting:
                yield Label(Text(one_line(self.plan.waiting, 300), style="yellow"))
            if self.plan.name == "repair":
                yield Select(REPAIR_MODES, value="successor", allow_blank=False, id="repair-mode")
                yield Label(Text(REPAIR_HINTS["successor"], style="dim"), id="repair-hint")
                yield Input(
                    placeholder="successor skill name", suggester=self.names, id="input-successor"
                )
                yield Input(placeholder="note (optional)", id="input-note")
            else:
                yield Label(Text("cause", style="dim"))
                yield Input(value=self.defaults.get("cause", ""), id="input-cause")
                yield Label(Text("scope (empty: computed from the steps)", style="dim"))
                yield Input(value=self.defaults.get("scope", ""), id="input-scope")
                yield Label(Text("regression case to test for", style="dim"))
                yield Input(value=self.defaults.get("regression", ""), id="input-regression")
            yield DialogError(id="runbook-error")
            yield Label(
                Text("enter: plan it (then confirm) · escape: cancel", style="dim"),
                id="runbook-inputs-hint",
            )

    def on_mount(self) -> None:
        self.query(Input).first().focus()
        if self.plan.name == "repair" and self.library is not None:
            self.load_names()

    @work(thread=True, group="runbook-names", exit_on_error=False)
    def load_names(self) -> None:
        if self.library is not None:
            self.names.load(self.library)

    @on(Select.Changed, "#repair-mode")
    def _mode_changed(self, event: Select.Changed) -> None:
        mode = str(event.value)
        successor = self.query_one("#input-successor", Input)
        successor.display = mode == "successor"
        (successor if successor.display else self.query_one("#input-note", Input)).focus()
        self.query_one("#repair-hint", Label).update(Text(REPAIR_HINTS.get(mode, ""), style="dim"))
        self.query_one(DialogError).clear()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        values = {i.id.removeprefix("input-"): i.value.strip() for i in self.query(Input) if i.id}
        missing = self._missing(values)
        if missing:
            self.query_one(DialogError).say(missing)
            return
        if self.plan.name == "repair":
            mode = self.query_one("#repair-mode", Select).value
            if mode != "successor":
                values["successor"] = ""
                values["mode"] = str(mode)
        self.dismiss({k: v for k, v in values.items() if v})

    def _missing(self, values: dict[str, str]) -> str:
        """Why the inputs cannot be planned yet ("" when they can)."""
        if self.plan.name == "repair":
            mode = self.query_one("#repair-mode", Select).value
            if mode == "successor" and not values.get("successor"):
                self.query_one("#input-successor", Input).focus()
                return (
                    "name the successor skill (tab completes), or choose 'No replacement'"
                    " or the repaired version above"
                )
            return ""
        if not values.get("regression"):
            self.query_one("#input-regression", Input).focus()
            return "the incident needs its regression case: what would catch this next time?"
        return ""

    def action_cancel(self) -> None:
        self.dismiss(None)


class StepConfirm(ModalScreen[bool]):
    """What the step will do; y or enter does it, escape does not."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("yes", "confirm", "Do it", id="runbook.confirm.yes", tooltip="Do the step"),
        bind(
            "open",
            "confirm",
            "Do it",
            show=False,
            id="runbook.confirm.enter",
            tooltip="Do the step",
        ),
        bind("clear", "cancel", "Cancel", id="runbook.confirm.no", tooltip="Not now"),
    ]

    def __init__(self, plan: StepPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(f"Step {self.plan.step}/7 · {self.plan.title}\n\n", style="bold")
        for action in self.plan.actions:
            text.append("  will: ", style="dim")
            text.append(one_line(action, 300) + "\n")
        text.append("\nIt is recorded as an event. ", style="dim")
        text.append("y / enter: do it · escape: not now", style="bold")
        with Vertical(id="runbook-confirm"):
            yield Static(text)

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


@dataclass(frozen=True)
class AbandonChoice:
    reason: str
    restore: bool


class AbandonDialog(ModalScreen[AbandonChoice | None]):
    """Abandon an open run: what it leaves behind, statuses put back (default) or kept, and
    the reason (needed)."""

    DEFAULT_CSS = f"AbandonDialog {{ {DIALOG_CSS} }}"
    BINDINGS: ClassVar[list[BindingType]] = [
        bind("clear", "cancel", "Cancel", id="runbook.abandon.cancel", tooltip="Keep the run"),
    ]

    def __init__(self, found: LeftBehind) -> None:
        super().__init__()
        self.found = found

    def compose(self) -> ComposeResult:
        found = self.found
        title = f"Abandon {found.run_id} ({one_line(found.skill_name, 50)}, step {found.step}/7)"
        with Vertical(id="runbook-inputs"):
            yield Label(Text(title, style="bold"), id="runbook-inputs-title")
            yield Select(
                [
                    ("Put back the statuses the run changed", "restore"),
                    ("Keep them as the run left them", "keep"),
                ],
                value="restore",
                allow_blank=False,
                id="abandon-mode",
            )
            yield Static(self._left(restore=True), id="abandon-left")
            yield Input(placeholder="why is the run abandoned? (needed)", id="input-reason")
            yield DialogError(id="runbook-error")
            yield Label(
                Text("enter: abandon · escape: keep the run open", style="dim"),
                id="runbook-inputs-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#input-reason", Input).focus()

    def _left(self, *, restore: bool) -> Text:
        text = Text("Abandoning leaves:\n", style="bold")
        for line in describe(self.found, restore=restore):
            text.append("  • ", style="dim")
            text.append(one_line(line, 300) + "\n")
        return text

    @on(Select.Changed, "#abandon-mode")
    def _mode_changed(self, event: Select.Changed) -> None:
        restore = event.value == "restore"
        self.query_one("#abandon-left", Static).update(self._left(restore=restore))

    @on(Input.Submitted, "#input-reason")
    def _submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            self.query_one(DialogError).say("abandoning needs a reason (escape keeps the run)")
            return
        restore = self.query_one("#abandon-mode", Select).value == "restore"
        self.dismiss(AbandonChoice(reason, restore))

    def action_cancel(self) -> None:
        self.dismiss(None)
