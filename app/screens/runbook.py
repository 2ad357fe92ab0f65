"""The retirement runbook: runs on the left (open ones first), the selected run's seven steps
with progress, and the highlighted step's record or plan below them.

`r` does the run's next step: the step's plan (what it will do, from the library as it is
now) is shown in a confirmation first; steps 5 and 7 ask their inputs (a successor or "no
replacement"; cause, scope and the regression case) and are planned again with them before
the confirmation. Every step is done in a worker, as one transaction with its event, so
closing the app (or a crash) leaves the run before or after a step; it resumes here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from app.messages import SkillScreenRequested
from app.screens.base import LibrarianScreen
from app.screens.runbook_dialogs import (
    AbandonChoice,
    AbandonDialog,
    NewRunPrompt,
    RunChoice,
    StepConfirm,
    StepInputs,
)
from store.errors import LibrarianError
from store.library import Library
from store.models import Incident, LeftBehind, Run, StepPlan
from store.models.events import EventType
from store.text import one_line
from widgets.hanging import Hanging, hanging
from widgets.keys import bind
from widgets.runbook_text import RUN_STYLE, run_header, step_detail, step_line


@dataclass
class RunsLoaded(Message):
    runs: list[Run]
    select: str | None


@dataclass
class RunLoaded(Message):
    run: Run
    plan: StepPlan | None
    incident: Incident | None


@dataclass
class StepPlanned(Message):
    """A plan made with the step's inputs, ready for confirmation."""

    plan: StepPlan
    inputs: dict[str, str]


@dataclass
class RunbookFailed(Message):
    error: str
    select: str | None = None  # reload the runs, keeping this one selected


@dataclass
class LeftBehindLoaded(Message):
    """What abandoning the run would leave: the abandon dialog opens on it."""

    found: LeftBehind


@dataclass
class RunChanged(Message):
    """A step, a start or an abandon was written: reload, selecting `run_id`."""

    run_id: str
    done: str = ""  # what to tell the user


#: A step's wrapped summary lines up under its title (" ✓ 1 Quarantine").
STEP_HANG = 4


class RunbookScreen(LibrarianScreen):
    """Runbook runs and the selected run's steps.

    | Key | Action |
    | --- | --- |
    | a | do the next step (shows what it will do first) |
    | + | start a run for a skill (the name is checked and completes first; an open run reopens) |
    | A | abandon the open run: what it leaves, statuses put back (default) or kept, a reason |
    | S, esc | open runs only / all runs; all runs again (again: back to the runs) |
    | g, l, h, i | the skill's dependency graph, lineage, health; the Skills screen |
    | tab | between the runs and the steps (the highlighted step's record shows below) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "approve",
            "do_step",
            "Do step",
            id=EventType.RUNBOOK_STEP,
            tooltip="Show what the next step will do, then do it",
        ),
        bind(
            "new",
            "new_run",
            "New run",
            id="runbook.new",
            tooltip="Start the retirement runbook for a skill (or reopen its open run)",
        ),
        bind("abandon", "abandon", "Abandon", id="runbook.abandon", tooltip="Abandon the open run"),
        bind("status", "toggle_all", "All runs", id="runbook.all", tooltip="Open runs only / all"),
        bind("graph", "open('graph')", "Graph", id="runbook.graph", tooltip="The skill's graph"),
        bind("lineage", "open('lineage')", "Lineage", id="runbook.lineage", tooltip="Its lineage"),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="runbook.clear",
            tooltip="All runs again (again: back to the runs)",
        ),
        bind(
            "health",
            "open('health')",
            "Health",
            show=False,
            id="runbook.health",
            tooltip="The skill's runs, failures and drift",
        ),
        bind(
            "info",
            "open('skills')",
            "Skills",
            show=False,
            id="runbook.skills",
            tooltip="The skill on the Skills screen",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="runbook")
        self.library = library
        self.show_all = True
        self.runs: list[Run] = []
        self.run: Run | None = None
        self.plan: StepPlan | None = None
        self.incident: Incident | None = None
        self._busy = False
        self._wanted = ""  # the run last asked for: a late answer about another is dropped

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="runbook-body"):
            with Vertical(id="runbook-left"):
                yield DataTable(id="run-table", cursor_type="row", zebra_stripes=True)
                yield Static(id="runbook-status")
            with Vertical(id="runbook-right"):
                yield Static(id="run-head")
                yield OptionList(id="run-steps")
                with VerticalScroll(id="run-detail-box"):
                    yield Static(id="run-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Retirement runbook"
        table = self.query_one("#run-table", DataTable)
        table.add_columns("status", "skill", "step", "updated")
        table.focus()
        self.load_runs()

    def on_screen_resume(self) -> None:
        if self.loaded:
            self.load_runs(self.run.run_id if self.run else None)

    # -- workers -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="runbook-list", exit_on_error=False)
    def load_runs(self, select: str | None = None) -> None:
        runs = self.library.runs(status=None if self.show_all else "open")
        if not get_current_worker().is_cancelled:
            self.post_message(RunsLoaded(runs, select))

    @work(thread=True, exclusive=True, group="runbook-run", exit_on_error=False)
    def load_run(self, run_id: str) -> None:
        run = self.library.run(run_id)
        plan = self.library.plan_step(run_id) if run.next_step is not None else None
        incident = next(
            (i for i in self.library.incidents(run.skill_name) if i.run_id == run_id), None
        )
        if not get_current_worker().is_cancelled:
            self.post_message(RunLoaded(run, plan, incident))

    @work(thread=True, group="runbook-write", exit_on_error=False)
    def plan_with(self, run_id: str, inputs: dict[str, str]) -> None:
        try:
            plan = self.library.plan_step(run_id, **inputs)
        except LibrarianError as exc:
            self.post_message(RunbookFailed(str(exc)))
            return
        self.post_message(StepPlanned(plan, inputs))

    @work(thread=True, group="runbook-write", exit_on_error=False)
    def execute(self, run_id: str, step: int, inputs: dict[str, str]) -> None:
        try:
            run = self.library.run_step(run_id, step, **inputs)
        except LibrarianError as exc:
            self.post_message(RunbookFailed(str(exc), run_id))
            return
        self.post_message(RunChanged(run_id, f"step {step} done: {run.steps[step - 1].summary}"))

    @work(thread=True, group="runbook-write", exit_on_error=False)
    def start(self, skill: str, reason: str) -> None:
        try:
            run = self.library.open_run(skill) or self.library.start_run(skill, reason)
        except LibrarianError as exc:
            self.post_message(RunbookFailed(str(exc)))
            return
        self.post_message(RunChanged(run.run_id, f"{run.run_id}: runbook for {run.skill_name}"))

    @work(thread=True, group="runbook-write", exit_on_error=False)
    def load_left_behind(self, run_id: str) -> None:
        try:
            found = self.library.left_behind(run_id)
        except LibrarianError as exc:
            self.post_message(RunbookFailed(str(exc), run_id))
            return
        self.post_message(LeftBehindLoaded(found))

    @work(thread=True, group="runbook-write", exit_on_error=False)
    def abandon(self, found: LeftBehind, choice: AbandonChoice) -> None:
        run_id = found.run_id
        try:
            self.library.abandon_run(run_id, choice.reason, restore=choice.restore)
        except LibrarianError as exc:
            self.post_message(RunbookFailed(str(exc), run_id))
            return
        back = len(found.restorable) if choice.restore else 0
        done = f"abandoned {run_id}: " + (
            f"{back} status{'es' if back != 1 else ''} put back"
            if choice.restore
            else "statuses kept as the run left them"
        )
        self.post_message(RunChanged(run_id, done))

    # -- messages ----------------------------------------------------------------------

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        self.runs = message.runs
        table = self.query_one("#run-table", DataTable)
        table.clear()
        for run in self.runs:
            table.add_row(
                Text(run.status, style=RUN_STYLE.get(run.status, "")),
                Text(one_line(run.skill_name, 40)),
                f"{run.step}/7",
                run.updated_at[:10],
                key=run.run_id,
            )
        status = self.query_one("#runbook-status", Static)
        open_runs = sum(1 for r in self.runs if r.status == "open")
        status.update(
            Text(
                f"{len(self.runs)} run{'' if len(self.runs) == 1 else 's'}, {open_runs} open"
                + (
                    ""
                    if self.show_all
                    else f" (open only: {self.key_for('runbook.all')} shows all)"
                )
            )
        )
        if not self.runs:
            self.run = None
            self.refresh_bindings()
            self.query_one("#run-head", Static).update(
                Text(
                    f"No runbook runs. Press {self.key_for('runbook.new') or '+'} to retire a"
                    " skill, or R on the Health or Graph screen.",
                    style="dim",
                )
            )
            self.query_one("#run-steps", OptionList).clear_options()
            self.query_one("#run-detail", Static).update("")
            self.loaded = True
            return
        wanted = message.select or (self.run.run_id if self.run else None)
        index = next((i for i, r in enumerate(self.runs) if r.run_id == wanted), 0)
        table.move_cursor(row=index)
        self._request_run(self.runs[index].run_id)

    def _request_run(self, run_id: str) -> None:
        """Load a run into the right pane (the latest request wins)."""
        if run_id != self._wanted:
            self.query_one("#run-steps", OptionList).highlighted = None
        self._wanted = run_id
        self.load_run(run_id)

    def on_run_loaded(self, message: RunLoaded) -> None:
        if message.run.run_id != self._wanted:
            return  # an answer about a run the screen has moved away from
        same = self.run is not None and self.run.run_id == message.run.run_id
        self.run, self.plan, self.incident = message.run, message.plan, message.incident
        run = message.run
        self.query_one("#run-head", Static).update(hanging(run_header(run, message.incident)))
        steps = self.query_one("#run-steps", OptionList)
        highlighted = steps.highlighted if same else None
        steps.clear_options()
        steps.add_options(
            [
                Option(Hanging(step_line(run, s, message.plan), STEP_HANG), id=str(s.step))
                for s in run.steps
            ]
        )
        target = (run.next_step or 7) - 1 if highlighted is None else highlighted
        steps.highlighted = target
        self._show_step(target)
        self.sub_title = f"Retirement runbook · {one_line(run.skill_name, 60)}"
        self.loaded = True
        self.refresh_bindings()

    def on_step_planned(self, message: StepPlanned) -> None:
        if message.plan.waiting:
            self.notify(one_line(message.plan.waiting, 300), severity="warning", markup=False)
            return
        self.app.push_screen(
            StepConfirm(message.plan),
            lambda ok: self._confirmed(bool(ok), message.plan, message.inputs),
        )

    def on_runbook_failed(self, message: RunbookFailed) -> None:
        self.notify(one_line(message.error, 300), severity="error", markup=False, timeout=8)
        if message.select:
            self.load_runs(message.select)

    def on_run_changed(self, message: RunChanged) -> None:
        if message.done:
            self.notify(one_line(message.done, 300), markup=False, timeout=6)
        self.query_one("#run-steps", OptionList).highlighted = None
        self.load_runs(message.run_id)

    @on(DataTable.RowHighlighted, "#run-table")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row != event.data_table.cursor_row:
            return  # a highlight from before the rows were reloaded (the cursor moved on)
        key = event.row_key.value if event.row_key is not None else None
        if key and key != self._wanted and (self.run is None or self.run.run_id != key):
            self._request_run(str(key))

    @on(OptionList.OptionHighlighted, "#run-steps")
    def _step_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != event.option_list.highlighted:
            return  # a late event from the run shown before (its last step): not this one's
        self._show_step(event.option_index)

    def _show_step(self, index: int) -> None:
        if self.run is None or not 0 <= index < 7:
            return
        detail = step_detail(self.run, self.run.steps[index], self.plan, self.incident)
        self.query_one("#run-detail", Static).update(hanging(detail))

    # -- actions -----------------------------------------------------------------------

    def action_do_step(self) -> None:
        run, plan = self.run, self.plan
        if run is None or plan is None or run.next_step is None:
            self.notify("no step to do: choose an open run", severity="warning")
            return
        if plan.name in ("repair", "incident"):
            defaults = {"cause": run.reason}
            regression = next(
                (a for a in plan.actions if a.startswith("regression case: ")), ""
            ).removeprefix("regression case: ")
            defaults["regression"] = regression
            self.app.push_screen(StepInputs(plan, defaults, self.library), self._inputs_given)
            return
        self.plan_with(run.run_id, {})

    def _inputs_given(self, inputs: dict[str, str] | None) -> None:
        if inputs is not None and self.run is not None:
            self.plan_with(self.run.run_id, inputs)

    def _confirmed(self, ok: bool, plan: StepPlan, inputs: dict[str, str]) -> None:
        if ok:
            self.execute(plan.run_id, plan.step, inputs)

    def action_new_run(self) -> None:
        self.app.push_screen(NewRunPrompt(self.library), self._run_chosen)

    def _run_chosen(self, choice: RunChoice | None) -> None:
        if choice is None:
            return
        if choice.open_run:
            self.notify(
                one_line(f"{choice.skill} has an open run: {choice.open_run} reopened", 200),
                markup=False,
            )
            self.load_runs(choice.open_run)
        else:
            self.start(choice.skill, choice.reason)

    def action_abandon(self) -> None:
        run = self.run
        if run is None or run.status != "open":
            self.notify("only an open run can be abandoned", severity="warning")
            return
        self.load_left_behind(run.run_id)

    def on_left_behind_loaded(self, message: LeftBehindLoaded) -> None:
        found = message.found
        self.app.push_screen(
            AbandonDialog(found), lambda choice: self._abandon_chosen(found, choice)
        )

    def _abandon_chosen(self, found: LeftBehind, choice: AbandonChoice | None) -> None:
        if choice is not None:
            self.abandon(found, choice)

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self.load_runs(self.run.run_id if self.run else None)

    def action_clear(self) -> None:
        """Every run again (the filter cleared); when it was, back to the runs."""
        if not self.show_all:
            self.action_toggle_all()
        else:
            self.query_one("#run-table", DataTable).focus()

    def action_open(self, mode: str) -> None:
        """Another screen (graph, lineage, health, skills) on the run's skill."""
        if self.run is not None:
            self.post_message(SkillScreenRequested(mode, self.run.skill_name))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys out a key that waits for a run (or an open one).
        run = self.run
        if action == "open":
            return run is not None or None
        if action == "do_step":
            return (run is not None and run.next_step is not None) or None
        if action == "abandon":
            return (run is not None and run.status == "open") or None
        return True

    async def show_skill(self, skill: str) -> None:
        """The skill's open (or latest) run; with none, ask why and start one."""
        found = [r for r in self.runs if r.skill_name == skill]
        if not found:
            found = await self._runs_of(skill)
        if found:
            self.load_runs(found[0].run_id)
        else:
            self.app.push_screen(NewRunPrompt(self.library, skill), self._run_chosen)

    async def _runs_of(self, skill: str) -> list[Run]:
        worker = self.run_worker(
            lambda: self.library.runs(skill=skill), thread=True, exit_on_error=False
        )
        result = await worker.wait()
        return list(result or [])
