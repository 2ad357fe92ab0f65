"""Health and drift: every skill worst first (DRIFTING, DEGRADING, HEALTHY, IDLE) with its
runs, failure rate, weekly trend and flags; below, the highlighted skill's versions, flags
explained, its last runs and the thresholds.

Health is computed in a thread worker, in two steps on a big library: the verdicts first
(one grouped query over the window's outcomes), then the weekly trends and the cited-file
checks, which fill in the sparkline and flag columns. `a` applies the verdicts — demote the
drifting skills, promote the proven proposed ones — after a confirmation that lists every
change (computed first, nothing changed until then).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Select, Static
from textual.worker import get_current_worker

from app.dialogs.confirm_changes import ConfirmChanges
from app.messages import SkillScreenRequested
from app.screens.base import LibrarianScreen
from store.errors import LibrarianError
from store.library import Library
from store.models import HEALTH_VERDICTS, HealthChange, Outcome, SkillHealth
from store.text import one_line
from widgets.graph_style import verdict_style
from widgets.health_detail import HealthDetail
from widgets.health_table import HealthTable, matching, verdict_counts
from widgets.keys import bind

#: Seconds the cursor must rest on a skill before its recent runs are read.
DETAIL_DELAY = 0.06
#: Seconds between drawing the verdicts and counting the trends (the table answers first).
TREND_DELAY = 0.02
#: Seconds between drawing the worst rows and reading every row (the first paint goes first).
REST_DELAY = 0.1
#: Recent runs shown in the detail.
RECENT = 20
ANY = ""


@dataclass
class HealthLoaded(Message):
    """Every skill's health, without the weekly trends and the cited-file checks yet."""

    request: int
    rows: list[SkillHealth]
    settings: dict[str, float]
    totals: dict[str, int] | None = None  # set on the first look: only the worst rows, counts


@dataclass
class HealthExtrasLoaded(Message):
    """The weekly trends and the missing-file flags of the rows of `request`."""

    request: int
    trends: dict[int, tuple[float, ...]]
    flags: dict[int, tuple[str, ...]]


@dataclass
class OutcomesLoaded(Message):
    skill_id: int
    outcomes: list[Outcome]


@dataclass
class HealthPlanned(Message):
    """What `apply` would change now."""

    changes: list[HealthChange]


@dataclass
class HealthApplied(Message):
    """`apply` ran (`changes`: what changed; `error`: it failed, nothing half-done)."""

    changes: list[str]
    error: str = ""


class HealthScreen(LibrarianScreen):
    """Skills by health on top, the highlighted one's detail below.

    | Key | Action |
    | --- | --- |
    | /, f, esc | filter by words, cycle the verdict shown, clear (again: back to the table) |
    | a | apply: deprecate drifting skills, promote proven ones (asks first) |
    | g, l, R, i | the highlighted skill in the Graph, Lineage, Runbook, Skills |
    | d | to the detail |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "approve",
            "apply",
            "Apply",
            id="health.apply",
            tooltip="Deprecate drifting skills and promote proven proposed ones (asks first)",
        ),
        bind(
            "type",
            "cycle_verdict",
            "Verdict",
            id="health.verdict",
            tooltip="Show only DRIFTING, DEGRADING, HEALTHY or IDLE skills (again: the next)",
        ),
        bind(
            "filter",
            "focus_filter",
            "Filter",
            id="health.filter",
            tooltip="Filter by words in the name, status or flags",
        ),
        bind(
            "graph",
            "open('graph')",
            "Graph",
            id="health.graph",
            tooltip="The highlighted skill in the dependency graph (its blast radius)",
        ),
        bind(
            "lineage",
            "open('lineage')",
            "Lineage",
            id="health.lineage",
            tooltip="The highlighted skill's versions, history and provenance",
        ),
        bind(
            "runbook",
            "open('runbook')",
            "Runbook",
            show=False,
            id="health.runbook",
            tooltip="The retirement runbook for the highlighted skill",
        ),
        bind(
            "info",
            "open('skills')",
            "Skills",
            show=False,
            id="health.skills",
            tooltip="The highlighted skill on the Skills screen",
        ),
        bind(
            "detail",
            "focus_detail",
            "Detail",
            show=False,
            id="health.detail",
            tooltip="Scroll the versions, flags and runs",
        ),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="health.clear",
            tooltip="Clear the filter and the verdict (again: back to the table)",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="health")
        self.library = library
        self._rows: list[SkillHealth] = []
        self._settings: dict[str, float] = {}
        self._complete = False
        self._totals: dict[str, int] | None = None
        self._want: str | None = None  # put the cursor on this skill once it is listed
        self._detail_timer: Timer | None = None
        self._busy = False  # planning or applying
        self._asking = False  # a modal of ours is open: resuming is not a new visit
        self._request = 0  # the latest load asked for
        self._answered = 0  # the latest load whose rows are shown

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="health-body"):
            with Horizontal(id="health-filters"):
                yield Input(placeholder="/ filter names, statuses, flags", id="health-filter")
                yield Select(
                    [("any verdict", ANY), *((v, v) for v in HEALTH_VERDICTS)],
                    value=ANY,
                    allow_blank=False,
                    id="verdict-filter",
                    compact=True,
                )
            yield Static(id="health-counts")
            yield HealthTable(id="health-table")
            yield Static(id="health-status")
            yield HealthDetail(id="health-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Health & drift"
        table = self.query_one(HealthTable)
        table.empty_text = "Computing health…"
        table.focus()
        self._update_status()
        self.reload()

    def on_screen_resume(self) -> None:
        # Shown again: outcomes may have been recorded, statuses changed, meanwhile.
        if self._asking:
            self._asking = False
        elif self.loaded and self._answered == self._request and self._complete:
            self.reload()

    # -- workers (thread: the store blocks) ------------------------------------------

    def reload(self) -> None:
        """Read every skill's health again: the verdicts first, then the trends."""
        self._request += 1
        self.load_health(self._request)

    @work(thread=True, exclusive=True, group="health-load", exit_on_error=False)
    def load_health(self, request: int) -> None:
        settings = self.library.health_settings()
        worst, totals = self.library.health_first()
        if not get_current_worker().is_cancelled:
            self.post_message(HealthLoaded(request, worst, settings, totals))

    @work(thread=True, exclusive=True, group="health-load", exit_on_error=False)
    def load_all(self, request: int) -> None:
        settings = self.library.health_settings()
        rows, _ = self.library.health(trend=False)
        if not get_current_worker().is_cancelled:
            self.post_message(HealthLoaded(request, rows, settings))

    @work(thread=True, exclusive=True, group="health-extras", exit_on_error=False)
    def load_extras(self, request: int) -> None:
        trends = self.library.health_trends()
        flags = self.library.health_file_flags()
        if not get_current_worker().is_cancelled:
            self.post_message(HealthExtrasLoaded(request, trends, flags))

    @work(thread=True, exclusive=True, group="health-detail", exit_on_error=False)
    def load_outcomes(self, skill_id: int) -> None:
        try:
            found = self.library.outcomes(skill_id, RECENT)
        except LibrarianError:  # gone meanwhile: the next load says so
            return
        if not get_current_worker().is_cancelled:
            self.post_message(OutcomesLoaded(skill_id, found))

    @work(thread=True, exclusive=True, group="health-apply", exit_on_error=False)
    def plan(self) -> None:
        try:
            self.post_message(HealthPlanned(self.library.health_plan()))
        except Exception:
            self.post_message(HealthApplied([], "planning failed"))
            raise

    @work(thread=True, exclusive=True, group="health-apply", exit_on_error=False)
    def apply(self) -> None:
        try:
            _, changes = self.library.health(apply=True)
        except LibrarianError as exc:
            self.post_message(HealthApplied([], str(exc)))
            return
        except Exception:
            self.post_message(HealthApplied([], "apply failed"))
            raise
        self.post_message(HealthApplied(changes))

    # -- the table ---------------------------------------------------------------------

    def on_health_loaded(self, message: HealthLoaded) -> None:
        if message.request != self._request:
            return  # a newer load is on its way
        self._answered = message.request
        self._rows, self._settings = message.rows, message.settings
        self._totals = message.totals
        self._complete = False
        self.query_one(HealthTable).set_trends(None)
        self.loaded = True
        self._show_rows()
        request = message.request
        if message.totals is not None:
            # The worst rows only: every row follows once these are drawn (building them
            # would otherwise hold the GIL while this first look is being painted).
            self.set_timer(REST_DELAY, lambda: self._load_all(request))
            return
        self.set_timer(TREND_DELAY, lambda: self._load_extras(request))

    def _load_all(self, request: int) -> None:
        if request == self._request:
            self.load_all(request)

    def _load_extras(self, request: int) -> None:
        if request == self._request:
            self.load_extras(request)

    def on_health_extras_loaded(self, message: HealthExtrasLoaded) -> None:
        if message.request != self._answered or message.request != self._request:
            return
        if message.flags:
            flags = message.flags
            self._rows = [
                replace(h, flags=(*h.flags, *flags[h.skill_id])) if h.skill_id in flags else h
                for h in self._rows
            ]
        self._complete = True
        self.query_one(HealthTable).set_trends(message.trends)
        self._show_rows()

    def _verdict(self) -> str | None:
        value = self.query_one("#verdict-filter", Select).value
        return value if isinstance(value, str) and value else None

    def _show_rows(self) -> None:
        table = self.query_one(HealthTable)
        text = self.query_one("#health-filter", Input).value
        narrowed = bool(text.strip()) or self._verdict() is not None
        table.empty_text = "No skill matches the filters." if narrowed else "No skills."
        focus = None
        if self._want is not None:
            wanted = next((h.skill_id for h in self._rows if h.name == self._want), None)
            focus = wanted
        table.set_rows(matching(self._rows, self._verdict(), text), focus=focus)
        current = table.current
        if self._want is not None and current is not None and current.name == self._want:
            self._want = None
        self._show_current(0)
        self._update_status()

    @on(HealthTable.Highlighted)
    def _highlighted(self, event: HealthTable.Highlighted) -> None:
        shown = self.query_one(HealthDetail).health
        if shown is None or shown.skill_id != event.skill_id:
            self._show_current(DETAIL_DELAY)

    @on(HealthTable.Selected)
    def _selected(self) -> None:
        self.query_one(HealthDetail).focus()

    def _show_current(self, delay: float) -> None:
        """The skill under the cursor now; its recent runs after `delay`."""
        current = self.query_one(HealthTable).current
        detail = self.query_one(HealthDetail)
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        if current is None:
            detail.show(None)
            return
        shown = detail.health
        keep = detail.outcomes if shown is not None and shown.skill_id == current.skill_id else None
        trend = self.query_one(HealthTable).trend_of(current)
        detail.show(current, keep, self._settings, trend)
        skill_id = current.skill_id
        if delay:
            self._detail_timer = self.set_timer(delay, lambda: self.load_outcomes(skill_id))
        else:
            self.load_outcomes(skill_id)

    def on_outcomes_loaded(self, message: OutcomesLoaded) -> None:
        current = self.query_one(HealthTable).current
        if current is not None and current.skill_id == message.skill_id:
            trend = self.query_one(HealthTable).trend_of(current)
            self.query_one(HealthDetail).show(current, message.outcomes, self._settings, trend)

    # -- apply ---------------------------------------------------------------------------

    def action_apply(self) -> None:
        if self._busy or not self.loaded:
            self.app.bell()
            return
        self._busy = True
        self._update_status()
        self.plan()

    def on_health_planned(self, message: HealthPlanned) -> None:
        if not message.changes:
            self._busy = False
            self._update_status()
            self.notify("nothing to apply: no skill is drifting or proven", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.apply()
            else:
                self._busy = False
                self._update_status()

        self._asking = True
        self.app.push_screen(ConfirmChanges(message.changes), answered)

    def on_health_applied(self, message: HealthApplied) -> None:
        self._busy = False
        if message.error:
            self.notify(one_line(message.error, 300), severity="error", markup=False)
        elif message.changes:
            lines = "\n".join(one_line(c, 160) for c in message.changes[:8])
            more = f"\n… +{len(message.changes) - 8} more" if len(message.changes) > 8 else ""
            self.notify(
                f"applied {len(message.changes)} changes:\n{lines}{more}",
                timeout=8,
                markup=False,
            )
        else:
            self.notify("nothing changed", markup=False)
        self._update_status()
        self.reload()

    # -- filters and focus ---------------------------------------------------------------

    def action_cycle_verdict(self) -> None:
        select = self.query_one("#verdict-filter", Select)
        values = [ANY, *HEALTH_VERDICTS]
        current = select.value if select.value in values else ANY
        select.value = values[(values.index(str(current)) + 1) % len(values)]

    def action_focus_filter(self) -> None:
        self.query_one("#health-filter", Input).focus()

    def action_focus_detail(self) -> None:
        self.query_one(HealthDetail).focus()

    def action_focus_table(self) -> None:
        self.query_one(HealthTable).focus()

    def action_clear(self) -> None:
        """Clear the filter and the verdict; when there were none, back to the table."""
        field = self.query_one("#health-filter", Input)
        select = self.query_one("#verdict-filter", Select)
        if field.value or select.value != ANY:
            field.value = ""
            select.value = ANY
        else:
            self.action_focus_table()

    @on(Input.Changed, "#health-filter")
    def _filter_changed(self) -> None:
        if self.loaded:
            self._show_rows()

    @on(Input.Submitted, "#health-filter")
    def _filter_submitted(self) -> None:
        self.query_one(HealthTable).focus()

    @on(Select.Changed, "#verdict-filter")
    def _verdict_changed(self) -> None:
        if self.loaded:
            self._show_rows()

    def action_open(self, mode: str) -> None:
        current = self.query_one(HealthTable).current
        if current is None:
            self.app.bell()
            return
        self.post_message(SkillScreenRequested(mode, current.name))

    # -- for the app ---------------------------------------------------------------------

    async def show_skill(self, skill: str) -> None:
        """Put the cursor on a skill, clearing the filters when it is not listed."""
        table = self.query_one(HealthTable)
        table.focus()
        index = table.index_of_name(skill)
        if index is not None:
            table.cursor = index
            return
        self._want = skill
        self.query_one("#health-filter", Input).value = ""
        self.query_one("#verdict-filter", Select).value = ANY
        if self.loaded:
            self._show_rows()

    # -- header and status line ----------------------------------------------------------

    def _update_status(self) -> None:
        counts = Text()
        if not self.loaded and not self._rows:
            counts.append("computing health…", style="dim")
        else:
            totals = self._totals if self._totals is not None else verdict_counts(self._rows)
            counts.append(f"{sum(totals.values()):,} skills", style="bold")
            for verdict, count in totals.items():
                counts.append("  ·  ")
                counts.append(f"{count:,} {verdict}", style=verdict_style(verdict))
        self.query_one("#health-counts", Static).update(counts)
        status = Text()
        table = self.query_one(HealthTable)
        status.append(f"showing {len(table.rows):,}", style="dim")
        status.append(f" · verdict: {self._verdict() or 'any'}", style="dim")
        s = self._settings
        if s:
            status.append(
                f" · window {s['window_days']:g} days, warn > {s['warn']:.0%},"
                f" fail > {s['fail']:.0%}",
                style="dim",
            )
        if self._totals is not None:
            status.append("  ·  the worst first; every skill follows…", style="bold")
        elif self.loaded and not self._complete:
            status.append("  ·  counting trends…", style="bold")
        if self._busy:
            status.append("  ·  applying…", style="bold")
        self.query_one("#health-status", Static).update(status)
