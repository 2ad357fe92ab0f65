"""Lineage: one skill's versions (newest first) beside the diff of the highlighted one with
the version before it, and below, in tabs, its status history, its provenance chain (sessions
→ nodes → pattern → draft → skill; enter on a node opens it in the Sessions DAG), its events
and its runbook runs and incidents.

Opened without a skill it shows the most recently graduated one (else the most recently
changed). `/` picks another (a search over the catalog, LIMITed, so it stays quick at 50,000
skills); `g` and `R` open the dependency graph and the runbook on the same skill. Everything
is read in thread workers: one lineage read per skill, one diff per highlighted version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Footer, Header, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from app.dialogs.skill_picker import SkillPicker
from app.messages import (
    NodeGraphRequested,
    PatternOpenRequested,
    SessionOpenRequested,
    SkillScreenRequested,
    SkillShowRequested,
)
from app.screens.base import LibrarianScreen, PaletteCommand
from store.errors import LibrarianError
from store.library import Library
from store.models import Event, Lineage
from store.text import home_relative, one_line
from widgets.keys import bind
from widgets.lineage_diff import LineageDiff
from widgets.lineage_events import LineageEvents
from widgets.lineage_panel import LineagePanel
from widgets.lineage_provenance import LineageProvenance
from widgets.lineage_text import history_table, runs_renderable
from widgets.lineage_versions import LineageVersions

#: Seconds the cursor must rest on a version before its diff is read.
DIFF_DELAY = 0.05
#: Events read per page.
EVENTS_PAGE = 100
#: Tab ids by the key that shows them.
TABS = {
    "history": "lineage-tab-history",
    "provenance": "lineage-tab-provenance",
    "events": "lineage-tab-events",
    "runs": "lineage-tab-runs",
}


@dataclass
class LineageLoaded(Message):
    """A skill's lineage (None: nothing to show, `error` says why when it is an error)."""

    request: int
    lineage: Lineage | None
    error: str = ""


@dataclass
class DiffLoaded(Message):
    skill_id: int
    version_no: int
    previous: int
    diff: str


@dataclass
class EventsPageLoaded(Message):
    skill_id: int
    events: list[Event]
    total: int


class LineageScreen(LibrarianScreen):
    """Versions on the left, the diff on the right, history / provenance / events / runs below.

    | Key | Action |
    | --- | --- |
    | / | choose another skill |
    | d, esc | to the diff, back to the versions |
    | ], [ | the next, previous tab: history, provenance, events, runs & incidents |
    | enter (provenance) | open the node in the Sessions DAG (or the session, pattern, skill) |
    | g, h, R, i | the skill in the dependency graph, health, runbook, the Skills screen |
    """

    #: From 100 columns the versions take three fifths of the upper half (up to their max
    #: width), so the status column shows a version's whole story; below, they share it evenly.
    HORIZONTAL_BREAKPOINTS = [
        (0, "-narrow"),
        (100, "-wide"),
    ]

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "filter",
            "pick",
            "Skill",
            id="lineage.pick",
            tooltip="Choose the skill whose lineage is shown",
        ),
        bind(
            "next_tab",
            "next_tab(1)",
            "Next tab",
            id="lineage.next_tab",
            tooltip="History → provenance → events → runs & incidents",
        ),
        bind(
            "previous_tab",
            "next_tab(-1)",
            "Prev tab",
            id="lineage.previous_tab",
            tooltip="Runs & incidents → events → provenance → history",
        ),
        bind(
            "graph",
            "graph",
            "Graph",
            id="lineage.graph",
            tooltip="The skill in the dependency graph, with its blast radius",
        ),
        bind(
            "health",
            "open('health')",
            "Health",
            id="lineage.health",
            tooltip="The skill's runs, failures and drift",
        ),
        bind(
            "runbook",
            "runbook",
            "Runbook",
            id="lineage.runbook",
            tooltip="The skill in the retirement runbook",
        ),
        bind(
            "info",
            "open('skills')",
            "Skills",
            show=False,
            id="lineage.skills",
            tooltip="The skill on the Skills screen",
        ),
        bind(
            "detail",
            "focus_diff",
            "Diff",
            show=False,
            id="lineage.diff",
            tooltip="Scroll the diff",
        ),
        bind(
            "clear",
            "focus_versions",
            "Versions",
            show=False,
            id="lineage.versions",
            tooltip="Back to the versions list",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="lineage")
        self.library = library
        self._key: str | int | None = None  # the skill asked for (None: the default one)
        self._request = 0
        self._lineage: Lineage | None = None
        self._diffs: dict[tuple[int, int], str] = {}
        self._diff_timer: Timer | None = None
        self._diff_for: tuple[int, int] | None = None  # (skill id, version) shown or loading
        self._paging = False

    @property
    def lineage(self) -> Lineage | None:
        """The lineage shown (None before the first load, or in an empty library)."""
        return self._lineage

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="lineage-body"):
            yield Static(Text("loading…", style="dim"), id="lineage-title")
            with Horizontal(id="lineage-upper"):
                yield LineageVersions(id="lineage-versions")
                yield LineageDiff(id="lineage-diff")
            with TabbedContent(id="lineage-tabs", initial=TABS["provenance"]):
                with TabPane("History", id=TABS["history"]):
                    yield LineagePanel("No status changes.", id="lineage-history")
                with TabPane("Provenance", id=TABS["provenance"]):
                    yield LineageProvenance(id="lineage-provenance")
                with TabPane("Events", id=TABS["events"]):
                    yield LineageEvents(id="lineage-events")
                with TabPane("Runs & incidents", id=TABS["runs"]):
                    yield LineagePanel("No runs.", id="lineage-runs")
            yield Static(id="lineage-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Lineage"
        versions = self.query_one(LineageVersions)
        versions.empty_text = "loading…"
        versions.focus()

    def on_screen_resume(self) -> None:
        # Shown (again): the skill may have changed meanwhile (a rescan, a runbook step).
        self._load(self._key)

    async def show_skill(self, skill: str) -> None:
        """Show the lineage of `skill` (a name, id or path)."""
        self._load(skill)

    # -- workers (thread: the store blocks) ------------------------------------------

    def _load(self, key: str | int | None) -> None:
        self._key = key
        self._request += 1
        self.load_lineage(key, self._request)

    @work(thread=True, exclusive=True, group="lineage-load", exit_on_error=False)
    def load_lineage(self, key: str | int | None, request: int) -> None:
        try:
            if key is None:
                key = self.library.lineage_default()
            found = None if key is None else self.library.lineage(key, events_limit=EVENTS_PAGE)
        except LibrarianError as exc:
            self.post_message(LineageLoaded(request, None, str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(LineageLoaded(request, found))

    @work(thread=True, exclusive=True, group="lineage-diff", exit_on_error=False)
    def load_diff(self, skill_id: int, version_no: int, previous: int) -> None:
        diff = self.library.version_diff(skill_id, previous, version_no)
        if not get_current_worker().is_cancelled:
            self.post_message(DiffLoaded(skill_id, version_no, previous, diff))

    @work(thread=True, exclusive=True, group="lineage-events", exit_on_error=False)
    def load_events(self, skill_id: int, offset: int) -> None:
        events: tuple[Event, ...] = ()
        total = -1  # unknown: the read failed (reported as a worker error)
        try:
            events, total = self.library.skill_events(skill_id, limit=EVENTS_PAGE, offset=offset)
        finally:
            self.post_message(EventsPageLoaded(skill_id, list(events), total))

    # -- the lineage -------------------------------------------------------------------

    def on_lineage_loaded(self, message: LineageLoaded) -> None:
        if message.request != self._request:
            return  # another skill was asked for meanwhile
        if message.error:
            self.notify(one_line(message.error, 300), severity="error", timeout=8, markup=False)
            if self._lineage is not None:
                self._key = self._lineage.skill_id  # keep showing what was shown
                self.loaded = True
                return
        found = message.lineage
        before = self._lineage.skill_id if self._lineage is not None else None
        same = found is not None and found.skill_id == before
        if not same:
            self._diffs.clear()
            self._diff_for = None
        self._lineage = found
        if found is not None:
            self._key = found.skill_id
        self._draw(found, same)
        self.refresh_bindings()  # graph, runbook and tabs apply now (check_action)
        self.loaded = True

    def _draw(self, found: Lineage | None, same: bool) -> None:
        versions = self.query_one(LineageVersions)
        versions.empty_text = "No skill yet: scan a skills folder first." if found is None else ""
        keep = versions.current.version_no if same and versions.current else None
        versions.set_rows(found.versions if found else [], focus=keep)
        self.query_one("#lineage-title", Static).update(self._title(found))
        self.query_one("#lineage-history", LineagePanel).show(
            history_table(found.history) if found else Text("")
        )
        self.query_one("#lineage-runs", LineagePanel).show(
            runs_renderable(found) if found else Text("")
        )
        self.query_one(LineageProvenance).show(found)
        events = self.query_one(LineageEvents)
        events.show(list(found.events) if found else [], found.event_total if found else 0)
        self._show_diff(0)
        self._update_status()

    def _title(self, found: Lineage | None) -> Text:
        if found is None:
            return Text("No skills in this library yet.", style="dim")
        text = Text()
        text.append(one_line(found.name, 80), style="bold")
        text.append(f"  {found.status}  v{found.current_version}  ")
        text.append(one_line(home_relative(found.fs_path), 160), style="dim")
        if found.superseded_by:
            text.append("\nsuperseded by ", style="bold yellow")
            text.append(", ".join(one_line(n, 60) for n in found.superseded_by))
        if found.supersedes:
            text.append("\nsupersedes ", style="bold")
            text.append(", ".join(one_line(n, 60) for n in found.supersedes))
        latest = found.candidates[0] if found.candidates else None
        if latest is not None and (latest.open or found.served_version != found.current_version):
            text.append(f"\nserving v{found.served_version}: ", style="bold")
            text.append(one_line(latest.describe(), 240))
        text.append("\n")
        text.append(one_line(found.provenance.note, 300), style="italic")
        return text

    # -- the diff ----------------------------------------------------------------------

    @on(LineageVersions.Highlighted)
    def _version_highlighted(self) -> None:
        self._show_diff(DIFF_DELAY)

    @on(LineageVersions.Selected)
    def _version_selected(self) -> None:
        self.query_one(LineageDiff).focus()

    def _show_diff(self, delay: float) -> None:
        """Show the highlighted version's diff now if it is known, else read it after
        `delay` (the cursor may move on before)."""
        versions = self.query_one(LineageVersions)
        current, found = versions.current, self._lineage
        view = self.query_one(LineageDiff)
        wanted = (found.skill_id, current.version_no) if found and current else None
        if wanted is not None and wanted == self._diff_for:
            return  # shown, or on its way
        if self._diff_timer is not None:
            self._diff_timer.stop()
            self._diff_timer = None
        self._diff_for = wanted
        if current is None or found is None:
            view.show("", None)
            return
        previous = versions.previous_of(current.version_no)
        title = (
            f"v{previous} → v{current.version_no}"
            if previous
            else f"v{current.version_no}: the first version"
        )
        cached = self._diffs.get((found.skill_id, current.version_no))
        view.show(title, cached)
        if cached is None:
            sid, number = found.skill_id, current.version_no
            if delay:
                self._diff_timer = self.set_timer(
                    delay, lambda: self.load_diff(sid, number, previous)
                )
            else:
                self.load_diff(sid, number, previous)

    def on_diff_loaded(self, message: DiffLoaded) -> None:
        self._diffs[(message.skill_id, message.version_no)] = message.diff
        current = self.query_one(LineageVersions).current
        if (
            self._lineage is not None
            and self._lineage.skill_id == message.skill_id
            and current is not None
            and current.version_no == message.version_no
        ):
            self.query_one(LineageDiff).show(self.query_one(LineageDiff).title, message.diff)
            self._update_status()

    # -- events and provenance ---------------------------------------------------------

    @on(LineageEvents.MoreWanted)
    def _more_events(self, message: LineageEvents.MoreWanted) -> None:
        if self._lineage is not None and not self._paging:
            self._paging = True
            self.load_events(self._lineage.skill_id, message.offset)

    def on_events_page_loaded(self, message: EventsPageLoaded) -> None:
        self._paging = False
        if message.total < 0:
            return
        if self._lineage is not None and self._lineage.skill_id == message.skill_id:
            self.query_one(LineageEvents).extend(message.events, message.total)
            self._update_status()

    @on(LineageProvenance.Chosen)
    def _provenance_chosen(self, message: LineageProvenance.Chosen) -> None:
        item = message.item
        if item.kind == "node" and item.node is not None:
            self.post_message(NodeGraphRequested(item.node))
        elif item.kind == "session":
            self.post_message(SessionOpenRequested(item.key))
        elif item.kind == "pattern":
            self.post_message(PatternOpenRequested(item.key))
        elif item.kind == "skill":
            self.post_message(SkillShowRequested(int(item.key)))
        else:
            self.app.bell()

    # -- actions -----------------------------------------------------------------------

    def action_pick(self) -> None:
        def picked(key: str | None) -> None:
            if key:
                self._load(int(key) if key.isdigit() else key)
                self.query_one(LineageVersions).focus()

        self.app.push_screen(SkillPicker(self.library), picked)

    def action_tab(self, tab: str) -> None:
        tabs = self.query_one(TabbedContent)
        tabs.active = TABS[tab]
        target = {
            "history": "#lineage-history",
            "provenance": "#lineage-provenance",
            "events": "#lineage-events",
            "runs": "#lineage-runs",
        }[tab]
        self.query_one(target).focus()

    def action_next_tab(self, step: int) -> None:
        """The tab `step` places after (or, negative, before) the shown one."""
        names = list(TABS)
        shown = self.query_one(TabbedContent).active
        index = next((i for i, name in enumerate(names) if TABS[name] == shown), 0)
        self.action_tab(names[(index + step) % len(names)])

    def palette_commands(self) -> list[PaletteCommand]:
        if self._lineage is None:
            return []
        return [(f"tab: {tab}", f"tab({tab!r})", f"The {tab} tab") for tab in TABS]

    def action_focus_versions(self) -> None:
        self.query_one(LineageVersions).focus()

    def action_focus_diff(self) -> None:
        self.query_one(LineageDiff).focus()

    def _other_screen(self, mode: str) -> None:
        if self._lineage is None:
            self.app.bell()
            return
        self.post_message(SkillScreenRequested(mode, self._lineage.name))

    def action_graph(self) -> None:
        self._other_screen("graph")

    def action_runbook(self) -> None:
        self._other_screen("runbook")

    def action_open(self, mode: str) -> None:
        self._other_screen(mode)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys the binding out instead of hiding it.
        if action in ("graph", "runbook", "open", "tab", "next_tab") and self._lineage is None:
            return None
        return True

    # -- status line -------------------------------------------------------------------

    def _update_status(self) -> None:
        found = self._lineage
        text = Text()
        if found is None:
            text.append("no skill", style="dim")
        else:
            events = self.query_one(LineageEvents)
            counts = [
                (len(found.versions), "version"),
                (len(found.history), "status event"),
                (found.event_total, "event"),
                (len(found.runs), "runbook run"),
                (len(found.incidents), "incident"),
            ]
            text.append(
                " · ".join(f"{n:,} {word}{'s' if n != 1 else ''}" for n, word in counts),
                style="bold",
            )
            if events.has_more:
                text.append(f"  ·  {len(events.rows):,} events loaded", style="dim")
            diff = self.query_one(LineageDiff).diff
            if diff:
                added, removed = _changed_lines(diff)
                text.append(f"  ·  +{added} −{removed} lines", style="dim")
        self.query_one("#lineage-status", Static).update(text)


def _changed_lines(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed
