"""The Skills screen: browse the catalog, inspect a skill, rank skills for a task."""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Static
from textual.worker import get_current_worker

from app.messages import (
    BudgetLoaded,
    CatalogChanged,
    DetailLoaded,
    ModelReady,
    OverlapsLoaded,
    SkillScreenRequested,
    SkillsLoaded,
    SuggestionsReady,
)
from app.screens.base import LibrarianScreen
from store.errors import LibrarianError
from store.library import Library
from store.text import one_line
from widgets.budget_panel import BudgetPanel
from widgets.keys import bind
from widgets.skill_detail import SkillDetailView
from widgets.skill_table import SkillTable
from widgets.suggestion_list import SuggestionList

#: Seconds the cursor must rest on a skill before its detail is loaded.
DETAIL_DELAY = 0.08


class SkillsScreen(LibrarianScreen):
    """Filterable skill list, detail pane, and a live suggestion box."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "filter",
            "focus_filter",
            "Filter",
            id="skills.filter",
            tooltip="Filter skills by name, status, root or description",
        ),
        bind(
            "task",
            "focus_task",
            "Task",
            id="skills.task",
            tooltip="Describe a task; skills are ranked as you type",
        ),
        bind(
            "graph",
            "open('graph')",
            "Graph",
            id="skills.graph",
            tooltip="The focused skill's dependencies, dependents and blast radius",
        ),
        bind(
            "lineage",
            "open('lineage')",
            "Lineage",
            id="skills.lineage",
            tooltip="The focused skill's versions, status history and provenance",
        ),
        bind(
            "health",
            "open('health')",
            "Health",
            show=False,  # the footer holds seven keys: `?` lists the others
            id="skills.health",
            tooltip="The focused skill's runs, failures and drift",
        ),
        bind(
            "runbook",
            "open('runbook')",
            "Runbook",
            show=False,
            id="skills.runbook",
            tooltip="Start (or reopen) the retirement runbook for the focused skill",
        ),
        bind(
            "budget",
            "toggle_budget",
            "Budget",
            id="skills.budget",
            tooltip="Claude Code's skill listing in this folder against its character budget",
        ),
        bind(
            "refresh", "rescan", "Rescan", id="skills.rescan", tooltip="Scan the skill roots again"
        ),
        bind(
            "detail",
            "focus_detail",
            "Detail",
            show=False,
            id="skills.detail",
            tooltip="Scroll the detail pane",
        ),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="skills.clear",
            tooltip="Clear the filter and the task (again: back to the list)",
        ),
    ]

    def __init__(
        self,
        library: Library,
        *,
        warm: bool = True,
        show_timings: bool = True,
        folder: Path | None = None,
    ) -> None:
        super().__init__(name="skills")
        self.library = library
        #: The folder whose Claude Code listing the budget panel shows: `budget.folder` in
        #: the config (the demo points it at its project), else where the app was started.
        configured = str(library.config.get("budget.folder") or "")
        self.folder = folder or (Path(configured).expanduser() if configured else Path.cwd())
        self._show_timings = show_timings
        self._model_state = "loading model…" if warm else "model loads on the first task"
        self._shown = 0
        self._total = 0
        self._listed = False
        self._detail_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="skills-body"):
            with Vertical(id="skills-left"):
                yield Input(placeholder="/ filter by name, status, root, description", id="filter")
                yield SkillTable(id="skill-table")
                yield Static(id="skills-status")
            with Vertical(id="skills-right"):
                yield Input(placeholder="t  describe a task to rank skills", id="task")
                yield SuggestionList(id="suggestions")
                yield SkillDetailView(id="detail")
                yield BudgetPanel(id="budget")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Skills"
        self.query_one(SkillTable).focus()
        self.load_skills("")

    def on_screen_resume(self) -> None:
        # Shown again: a draft approved in the review queue may have installed a skill, or
        # a status changed elsewhere. The first showing is on_mount's.
        if self._listed:
            self.load_skills(self.query_one("#filter", Input).value)
            current = self.query_one(SkillTable).current
            if current is not None:
                self.load_detail(current.skill_id)
            task = self.query_one("#task", Input).value
            if task.strip():  # a skill retired or drifting meanwhile ranks differently now
                self.run_suggest(task)

    # -- workers (thread: the store blocks) ------------------------------------------

    @work(thread=True, exclusive=True, group="skills-list", exit_on_error=False)
    def load_skills(self, text: str) -> None:
        rows = self.library.list_skills(text)
        total = self.library.skill_count() if text else len(rows)
        if not get_current_worker().is_cancelled:  # a newer filter won: drop stale rows
            self.post_message(SkillsLoaded(rows, total))

    @work(thread=True, exclusive=True, group="skills-detail", exit_on_error=False)
    def load_detail(self, skill_id: int) -> None:
        detail = self.library.get_skill(skill_id)
        if not get_current_worker().is_cancelled:
            self.post_message(DetailLoaded(detail))
            self.load_overlaps(skill_id)

    @work(thread=True, exclusive=True, group="skills-overlaps", exit_on_error=False)
    def load_overlaps(self, skill_id: int) -> None:
        pairs = self.library.overlaps(skill_id)
        if not get_current_worker().is_cancelled:
            self.post_message(OverlapsLoaded(skill_id, pairs))

    @work(thread=True, exclusive=True, group="skills-budget", exit_on_error=False)
    def load_budget(self) -> None:
        try:
            report = self.library.listing(self.folder)
        except (LibrarianError, OSError) as exc:
            self.post_message(BudgetLoaded(None, str(exc)))
            return
        self.post_message(BudgetLoaded(report))

    @work(thread=True, exclusive=True, group="skills-suggest", exit_on_error=False)
    def run_suggest(self, context: str) -> None:
        started = time.perf_counter()
        hits = self.library.suggest(context) if context.strip() else []
        if not get_current_worker().is_cancelled:
            self.post_message(SuggestionsReady(context, hits, time.perf_counter() - started))

    @work(thread=True, exclusive=True, group="skills-scan", exit_on_error=False)
    def rescan(self) -> None:
        self.post_message(CatalogChanged(self.library.scan()))

    # -- events ------------------------------------------------------------------------

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.load_skills(event.value)

    @on(Input.Changed, "#task")
    def _task_changed(self, event: Input.Changed) -> None:
        if not event.value.strip():
            self.query_one(SuggestionList).set_suggestions([])
            self.query_one(SkillDetailView).suggestion = None
        self.run_suggest(event.value)

    @on(Input.Submitted, "#task")
    def _task_submitted(self) -> None:
        suggestions = self.query_one(SuggestionList)
        if suggestions.option_count:
            suggestions.focus()
            if suggestions.highlighted is None:
                suggestions.highlighted = 0  # explain the best match in the detail pane

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one(SkillTable).focus()

    @on(SkillTable.Highlighted)
    def _highlighted(self, event: SkillTable.Highlighted) -> None:
        # Debounced: holding a key moves the cursor at full speed; the detail follows
        # once the cursor rests.
        if self._detail_timer is not None:
            self._detail_timer.stop()
        if event.skill_id is not None:
            skill_id = event.skill_id
            self._detail_timer = self.set_timer(DETAIL_DELAY, lambda: self.load_detail(skill_id))

    @on(SuggestionList.SuggestionHighlighted)
    def _suggestion_highlighted(self, event: SuggestionList.SuggestionHighlighted) -> None:
        self.query_one(SkillDetailView).suggestion = event.suggestion
        self.load_detail(event.suggestion.skill_id)

    def on_skills_loaded(self, message: SkillsLoaded) -> None:
        table = self.query_one(SkillTable)
        table.empty_text = (
            "No skill matches the filter."
            if message.total
            else "No skills yet. Press r to scan the usual folders (~/.claude/skills,"
            " ~/.agents/skills, project .claude/skills …) or run `librarian scan PATH`."
        )
        table.set_rows(message.rows)
        self._listed = True
        self._shown, self._total = len(message.rows), message.total
        self._update_status()

    def on_detail_loaded(self, message: DetailLoaded) -> None:
        self.query_one(SkillDetailView).detail = message.detail

    def on_overlaps_loaded(self, message: OverlapsLoaded) -> None:
        self.query_one(SkillDetailView).overlaps = (message.skill_id, tuple(message.pairs))

    def on_budget_loaded(self, message: BudgetLoaded) -> None:
        self.query_one(BudgetPanel).show(message.report, message.error)

    def on_suggestions_ready(self, message: SuggestionsReady) -> None:
        if message.context != self.query_one("#task", Input).value:
            return
        self.query_one(SuggestionList).set_suggestions(message.suggestions)
        self._model_state = f"{len(message.suggestions)} ranked for the task" + (
            f" in {message.seconds * 1000:.0f} ms" if self._show_timings else ""
        )
        self._update_status()

    def on_catalog_changed(self, message: CatalogChanged) -> None:
        report = message.report
        self.notify(
            f"scan: {report.installed} installed, {report.changed} changed,"
            f" {report.uninstalled} uninstalled, {len(report.skipped)} skipped",
            timeout=4,
        )
        self.load_skills(self.query_one("#filter", Input).value)
        current = self.query_one(SkillTable).current
        if current is not None:
            self.load_detail(current.skill_id)

    def on_model_ready(self, message: ModelReady) -> None:
        self._model_state = (
            "model ready" + (f" ({message.seconds:.1f}s)" if self._show_timings else "")
            if message.ok
            else f"model unavailable: {message.error} (lexical only)"
        )
        self._update_status()

    def _update_status(self) -> None:
        text = Text(f"{self._shown:,} of {self._total:,} skills", style="bold")
        text.append(f"  ·  {self._model_state}", style="dim")
        self.query_one("#skills-status", Static).update(text)

    # -- actions ------------------------------------------------------------------------

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_focus_task(self) -> None:
        self.query_one("#task", Input).focus()

    def action_focus_list(self) -> None:
        self.query_one(SkillTable).focus()

    def action_focus_detail(self) -> None:
        self.query_one(SkillDetailView).focus()

    def action_toggle_budget(self) -> None:
        """Show the budget panel in place of the detail pane (again: back to the detail)."""
        panel = self.query_one(BudgetPanel)
        detail = self.query_one(SkillDetailView)
        showing = not panel.display
        panel.display, detail.display = showing, not showing
        self.set_class(showing, "-budget")  # the panel's table wants the wider column
        if showing:
            panel.show(None)
            self.load_budget()
            panel.focus()
        else:
            self.query_one(SkillTable).focus()

    def action_rescan(self) -> None:
        self.notify("scanning…", timeout=2)
        self.rescan()

    def action_open(self, mode: str) -> None:
        """Another screen (graph, health, lineage, runbook) on the focused skill."""
        skill = self.focused_skill()
        if skill is None:
            self.notify("no skill highlighted", severity="warning")
            return
        self.post_message(SkillScreenRequested(mode, skill))

    def focused_skill(self) -> str | None:
        """The skill the go-to keys act on: the suggestion highlighted or the skill in the
        detail pane when either has the focus, else the list's cursor."""
        focused = self.focused
        suggestions = self.query_one(SuggestionList)
        detail = self.query_one(SkillDetailView)
        if focused is suggestions and suggestions.current is not None:
            return suggestions.current.name
        in_detail = focused is not None and detail in (focused, *focused.ancestors)
        if in_detail and detail.detail is not None:
            return detail.detail.summary.name
        current = self.query_one(SkillTable).current
        return current.name if current is not None else None

    def action_clear(self) -> None:
        """Clear the filter and the task; when both are empty, back to the list."""
        fields = [self.query_one(selector, Input) for selector in ("#filter", "#task")]
        if any(field.value for field in fields):
            for field in fields:
                field.value = ""
        else:
            self.action_focus_list()

    async def show_skill(self, skill: str) -> None:
        """Put the cursor on a skill by name (another screen asked for it)."""
        try:
            found = self.library.get_skill(skill)
        except LibrarianError as exc:
            self.notify(one_line(str(exc), 200), severity="warning", markup=False)
            return
        self.select_skill(found.summary.skill_id)

    def select_skill(self, skill_id: int) -> None:
        """Put the cursor on a skill (used by the command palette)."""
        table = self.query_one(SkillTable)
        if not table.move_to(skill_id):
            self.query_one("#filter", Input).value = ""
            self.load_detail(skill_id)
        table.focus()
