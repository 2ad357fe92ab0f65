"""Patterns & graduation: consolidated patterns by kind, the highlighted one's graduation
checklist, steps and draft, its member nodes (enter shows one in its session's DAG).

The list arrives in two steps: the patterns (one query) and then every pattern's graduation
check (a few queries per pattern), so a big library shows rows at once and fills the
retrieval and criteria columns in after. The highlighted pattern's check and members are
read fresh, when the cursor rests on it.
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Select, Static
from textual.worker import get_current_worker

from app.dialogs.text_prompt import TextPrompt
from app.messages import (
    Consolidated,
    DraftFailed,
    DraftWritten,
    NodeGraphRequested,
    PatternChecksLoaded,
    PatternDetailLoaded,
    PatternsLoaded,
)
from app.screens.base import LibrarianScreen, PaletteCommand, decide_draft
from store.errors import LibrarianError
from store.library import Library
from store.models import PATTERN_KIND_LABELS, PATTERN_KINDS, GraduationCheck, Pattern
from store.text import one_line
from widgets.keys import bind
from widgets.pattern_detail import PatternDetailView
from widgets.pattern_members import PatternMembers
from widgets.pattern_table import PatternTable, matching
from widgets.pattern_text import verdict

#: Seconds the cursor must rest on a pattern before its check and members are read.
DETAIL_DELAY = 0.06
ALL = ""
KIND_PLURALS = {"pitfall": "pitfalls", "strategy": "strategies", "insight": "insights"}


class PatternsScreen(LibrarianScreen):
    """Patterns on top; the highlighted one's checklist and draft, and its members, below.

    | Key | Action |
    | --- | --- |
    | a | graduate: draft a SKILL.md for an eligible pattern, or approve its pending draft |
    | x | reject the pending draft (asks for a reason) |
    | c | consolidate the approved nodes into patterns again |
    | f, / | filter by kind, by words |
    | M, d | to the members (enter: show in the DAG), the detail |
    | esc | clear the filter and the kind (again: back to the list) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "approve",
            "graduate",
            "Graduate",
            id="patterns.graduate",
            tooltip="Draft a SKILL.md for an eligible pattern, or approve its pending draft",
        ),
        bind(
            "reject",
            "reject_draft",
            "Reject draft",
            id="patterns.reject",
            tooltip="Reject the pattern's pending draft (asks for a reason)",
        ),
        bind(
            "consolidate",
            "consolidate",
            "Consolidate",
            id="patterns.consolidate",
            tooltip="Cluster the approved nodes into patterns again",
        ),
        bind(
            "type",
            "cycle_kind",
            "Kind",
            id="patterns.kind",
            tooltip="Show only pitfalls, strategies or insights (again: the next kind, then all)",
        ),
        bind(
            "members",
            "focus_members",
            "Members",
            id="patterns.members",
            tooltip="To the member nodes; enter shows one in its session's graph",
        ),
        bind(
            "filter",
            "focus_filter",
            "Filter",
            show=False,
            id="patterns.filter",
            tooltip="Filter by words in the title, summary, trigger or resolution",
        ),
        bind(
            "detail",
            "focus_detail",
            "Detail",
            show=False,
            id="patterns.detail",
            tooltip="Scroll the checklist, steps and draft",
        ),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="patterns.clear",
            tooltip="Clear the filter and the kind (again: back to the list)",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="patterns")
        self.library = library
        self._patterns: list[Pattern] = []
        self._loaded = False
        self._checked = False
        self._consolidating = False
        self._writing: dict[str, str] = {}  # the key of each write in flight → its pattern id
        self._members_of: str | None = None
        self._want: str | None = None  # put the cursor on this pattern once it is listed
        self._detail_timer: Timer | None = None
        self._states: Counter[str] = Counter()  # patterns by state, once the checks are in
        self._can: tuple[object, ...] = ()  # what the keys could do when last drawn

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="patterns-body"):
            with Horizontal(id="patterns-filters"):
                yield Input(
                    placeholder="/ filter titles, summaries, triggers, resolutions",
                    id="pattern-filter",
                )
                yield Select(
                    [("any kind", ALL), *((PATTERN_KIND_LABELS[k], k) for k in PATTERN_KINDS)],
                    value=ALL,
                    allow_blank=False,
                    id="kind-filter",
                    compact=True,
                )
            yield PatternTable(id="pattern-table")
            yield Static(id="patterns-status")
            with Horizontal(id="patterns-lower"):
                yield PatternDetailView(id="pattern-detail")
                yield PatternMembers(id="pattern-members")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Patterns & graduation"
        table = self.query_one(PatternTable)
        table.empty_text = "Loading patterns…"
        table.focus()
        self.query_one(PatternMembers).empty_text = ""

    def on_screen_resume(self) -> None:
        # Shown (again): drafts may have been decided in the review queue meanwhile.
        self.load_patterns()

    # -- workers (thread: the store blocks) ------------------------------------------

    @work(thread=True, exclusive=True, group="patterns-list", exit_on_error=False)
    def load_patterns(self) -> None:
        worker = get_current_worker()
        patterns = self.library.patterns()
        if worker.is_cancelled:
            return
        self.post_message(PatternsLoaded(patterns))
        checks = self.library.graduation(include_all=True)
        if not worker.is_cancelled:
            self.post_message(PatternChecksLoaded(checks))

    @work(thread=True, exclusive=True, group="patterns-detail", exit_on_error=False)
    def load_detail(self, pattern_id: str) -> None:
        try:
            check = self.library.graduation_check(pattern_id)
            nodes = self.library.pattern_nodes(pattern_id)
        except LibrarianError:  # gone (a consolidation dissolved it): the list reload follows
            return
        if not get_current_worker().is_cancelled:
            self.post_message(PatternDetailLoaded(check, nodes))

    @work(thread=True, group="patterns-write", exit_on_error=False)
    def write_draft(self, action: str, key: str, reason: str = "") -> None:
        # Not exclusive: every decision is written (the store serialises them).
        try:
            self.post_message(decide_draft(self.library, action, key, reason))
        except Exception:
            self.post_message(DraftFailed(action, key, ""))  # reported as a worker error
            raise

    @work(thread=True, exclusive=True, group="patterns-consolidate", exit_on_error=False)
    def consolidate(self) -> None:
        report = None
        try:
            report = self.library.consolidate()
        finally:  # a failure is reported as a worker error; the screen still calms down
            self.post_message(Consolidated(report))

    # -- the list --------------------------------------------------------------------

    def _kind(self) -> str | None:
        value = self.query_one("#kind-filter", Select).value
        return value if isinstance(value, str) and value else None

    def _show_rows(self) -> None:
        table = self.query_one(PatternTable)
        text = self.query_one("#pattern-filter", Input).value
        narrowed = bool(text.strip()) or self._kind() is not None
        if narrowed:
            table.empty_text = "No pattern matches the filters."
        else:
            table.empty_text = (
                "No patterns yet. Approve nodes in the review queue, then consolidate."
            )
        table.set_rows(matching(self._patterns, self._kind(), text), focus=self._want)
        if self._want and table.current and table.current.pattern_id == self._want:
            self._want = None
        self._show_current(0)
        self._update_status()

    def on_patterns_loaded(self, message: PatternsLoaded) -> None:
        self._patterns = message.patterns
        self._loaded = True
        self._count_states()
        self._show_rows()

    def _count_states(self) -> None:
        table = self.query_one(PatternTable)
        if self._checked:
            self._states = Counter(table.state_of(p) for p in self._patterns)

    def on_pattern_checks_loaded(self, message: PatternChecksLoaded) -> None:
        table = self.query_one(PatternTable)
        table.set_checks(message.checks)
        self._checked = True
        self._count_states()
        detail = self.query_one(PatternDetailView)
        if detail.pattern is not None and detail.check is None:
            detail.show(detail.pattern, table.check_of(detail.pattern.pattern_id))
        self._update_status()
        self._bindings_follow()

    @on(PatternTable.Highlighted)
    def _highlighted(self, event: PatternTable.Highlighted) -> None:
        shown = self.query_one(PatternDetailView).pattern
        if shown is None or shown.pattern_id != event.pattern_id:
            self._show_current(DETAIL_DELAY)

    @on(PatternTable.Selected)
    def _selected(self) -> None:
        self.query_one(PatternMembers).focus()

    # -- the detail and the members ----------------------------------------------------

    def _show_current(self, delay: float) -> None:
        """Show the pattern under the cursor now; its fresh check and members after `delay`."""
        pattern = self.query_one(PatternTable).current
        detail = self.query_one(PatternDetailView)
        members = self.query_one(PatternMembers)
        if self._detail_timer is not None:
            self._detail_timer.stop()
            self._detail_timer = None
        if pattern is None:
            detail.show(None)
            self._members_of = None
            members.empty_text = ""
            members.set_rows([])
            self._bindings_follow()
            return
        detail.show(pattern, self.query_one(PatternTable).check_of(pattern.pattern_id))
        if self._members_of != pattern.pattern_id:
            self._members_of = None
            members.empty_text = "loading…"
            members.set_rows([])
        pattern_id = pattern.pattern_id
        if delay:
            self._detail_timer = self.set_timer(delay, lambda: self.load_detail(pattern_id))
        else:
            self.load_detail(pattern_id)
        self._bindings_follow()

    def on_pattern_detail_loaded(self, message: PatternDetailLoaded) -> None:
        check = message.check
        pattern_id = check.pattern.pattern_id
        table = self.query_one(PatternTable)
        before = table.state_of(check.pattern)
        table.update_check(check)
        if table.state_of(check.pattern) != before:  # e.g. drafted elsewhere meanwhile
            self._count_states()
            self._update_status()
        current = table.current
        if current is None or current.pattern_id != pattern_id:
            return
        self.query_one(PatternDetailView).show(check.pattern, check)
        members = self.query_one(PatternMembers)
        members.empty_text = "No member nodes."
        members.set_rows(message.nodes, focus=None)
        self._members_of = pattern_id
        self._bindings_follow()

    @on(PatternMembers.Selected)
    def _member_selected(self, event: PatternMembers.Selected) -> None:
        members = self.query_one(PatternMembers)
        index = members.index_of(event.node_id)
        if index is not None:
            self.post_message(NodeGraphRequested(members.rows[index]))

    # -- graduation --------------------------------------------------------------------

    def _current(self) -> tuple[Pattern | None, GraduationCheck | None]:
        """The pattern under the cursor and its freshest known check."""
        table = self.query_one(PatternTable)
        pattern = table.current
        if pattern is None:
            return None, None
        detail = self.query_one(PatternDetailView)
        if detail.check is not None and detail.check.pattern.pattern_id == pattern.pattern_id:
            return pattern, detail.check
        return pattern, table.check_of(pattern.pattern_id)

    def _pending_draft_id(self, check: GraduationCheck | None) -> str | None:
        if check is None or check.draft is None or check.draft.status != "pending":
            return None
        return check.draft.draft_id

    def _write(self, action: str, key: str, pattern_id: str, reason: str = "") -> None:
        self._writing[key] = pattern_id
        self._bindings_follow()
        self.write_draft(action, key, reason)

    def _busy(self, pattern_id: str) -> bool:
        return pattern_id in self._writing.values()

    def on_draft_written(self, message: DraftWritten) -> None:
        key = message.draft.pattern_id if message.action == "draft" else message.draft.draft_id
        self._writing.pop(key, None)
        self.tell_draft(message)
        self.load_patterns()  # statuses changed (graduated, draft waiting)
        self._show_current(0)

    def on_draft_failed(self, message: DraftFailed) -> None:
        self._writing.pop(message.draft_id, None)
        self.tell_draft(message)
        self._bindings_follow()

    def on_consolidated(self, message: Consolidated) -> None:
        self._consolidating = False
        report = message.report
        if report is not None:
            self.notify(
                f"consolidated {report.nodes:,} approved nodes into {report.patterns:,}"
                f" patterns: {report.created} new, {report.changed} changed,"
                f" {report.dissolved} dissolved",
                timeout=6,
                markup=False,
            )
        self.load_patterns()
        self._update_status()
        self._bindings_follow()

    # -- actions -----------------------------------------------------------------------

    def _bindings_follow(self) -> None:
        """Redraw the footer only when a key became available or unavailable (redrawing it
        on every cursor move would slow the cursor down)."""
        can = tuple(self.check_action(a, ()) for a in ("graduate", "reject_draft", "consolidate"))
        if can != self._can:
            self._can = can
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys the binding out in the footer instead of hiding it.
        if action in ("graduate", "reject_draft"):
            pattern, check = self._current()
            if pattern is None or check is None or self._busy(pattern.pattern_id):
                return None
            drafted = self._pending_draft_id(check) is not None
            return True if drafted or (action == "graduate" and check.eligible) else None
        if action == "consolidate":
            return None if self._consolidating else True
        return True

    def action_graduate(self) -> None:
        pattern, check = self._current()
        if pattern is None or check is None or self._busy(pattern.pattern_id):
            self.app.bell()
            return
        draft_id = self._pending_draft_id(check)
        if draft_id is not None:
            self._write("approve", draft_id, pattern.pattern_id)
        elif check.eligible:
            self._write("draft", pattern.pattern_id, pattern.pattern_id)
        else:
            self.app.bell()
            self.notify(verdict(pattern, check), timeout=5, markup=False)

    def action_reject_draft(self) -> None:
        pattern, check = self._current()
        draft_id = self._pending_draft_id(check)
        if pattern is None or check is None or draft_id is None or self._busy(pattern.pattern_id):
            self.app.bell()
            return
        name = one_line(check.draft.name if check.draft else "", 60)
        pattern_id = pattern.pattern_id

        def answered(reason: str | None) -> None:
            if reason is not None:
                self._write("reject", draft_id, pattern_id, reason)

        self.app.push_screen(
            TextPrompt(
                f"Reject the draft {name}",
                placeholder="reason (required)",
                hint="Enter rejects · Escape cancels",
            ),
            answered,
        )

    def action_consolidate(self) -> None:
        if self._consolidating:
            self.app.bell()
            return
        self._consolidating = True
        self._update_status()
        self._bindings_follow()
        self.consolidate()

    def action_cycle_kind(self) -> None:
        select = self.query_one("#kind-filter", Select)
        values = [ALL, *PATTERN_KINDS]
        current = select.value if select.value in values else ALL
        select.value = values[(values.index(str(current)) + 1) % len(values)]

    def action_focus_filter(self) -> None:
        self.query_one("#pattern-filter", Input).focus()

    def action_focus_members(self) -> None:
        self.query_one(PatternMembers).focus()

    def action_focus_detail(self) -> None:
        self.query_one(PatternDetailView).focus()

    def action_focus_list(self) -> None:
        self.query_one(PatternTable).focus()

    def action_clear(self) -> None:
        """Clear the filter and the kind; when there were none, back to the list."""
        field = self.query_one("#pattern-filter", Input)
        select = self.query_one("#kind-filter", Select)
        if field.value or select.value != ALL:
            field.value = ""
            select.value = ALL
        else:
            self.action_focus_list()

    @on(Input.Changed, "#pattern-filter")
    def _filter_changed(self) -> None:
        if self._loaded:  # in memory: no need to debounce
            self._show_rows()

    @on(Input.Submitted, "#pattern-filter")
    def _filter_submitted(self) -> None:
        self.query_one(PatternTable).focus()

    @on(Select.Changed, "#kind-filter")
    def _kind_changed(self) -> None:
        if self._loaded:
            self._show_rows()

    # -- for the app and the command palette -------------------------------------------

    def show_pattern(self, pattern_id: str) -> None:
        """Put the cursor on a pattern, clearing the filters when it is not listed."""
        table = self.query_one(PatternTable)
        table.focus()
        if table.move_to(pattern_id):
            return
        self._want = pattern_id
        self.query_one("#pattern-filter", Input).value = ""
        self.query_one("#kind-filter", Select).value = ALL
        if self._loaded:
            self._show_rows()

    def selection(self) -> tuple[Pattern | None, GraduationCheck | None]:
        """(the pattern under the cursor, its check)."""
        return self._current()

    def palette_commands(self) -> list[PaletteCommand]:
        """Graduation of the highlighted pattern."""
        commands: list[PaletteCommand] = [
            ("patterns: next kind", "cycle_kind", "Pitfalls, strategies, insights, all")
        ]
        pattern, check = self._current()
        if pattern is None or check is None:
            return commands
        about = escape(one_line(pattern.title, 80))
        draft = check.draft if check.draft and check.draft.status == "pending" else None
        if draft is not None:
            name = one_line(draft.name, 60)
            commands += [
                (f"draft: approve {name}", "graduate", about),
                (f"draft: reject {name}…", "reject_draft", about),
            ]
        elif check.eligible:
            commands.append(("pattern: graduate (draft a SKILL.md)", "graduate", about))
        return commands

    # -- status line -------------------------------------------------------------------

    def _update_status(self) -> None:
        table = self.query_one(PatternTable)
        text = Text()
        if not self._loaded:
            text.append("loading patterns…", style="dim")
        else:
            text.append(f"{len(self._patterns):,} patterns", style="bold")
            counts = [(sum(p.kind == k for p in self._patterns), k) for k in PATTERN_KINDS]
            by_kind = [f"{n:,} {k if n == 1 else KIND_PLURALS[k]}" for n, k in counts]
            text.append(": " + " · ".join(by_kind))
            if self._checked:
                for state, one, many in (
                    ("eligible", "eligible", "eligible"),
                    ("draft", "draft waiting", "drafts waiting"),
                    ("re-validate", "to re-validate", "to re-validate"),
                ):
                    count = self._states[state]
                    if count:
                        label = one if count == 1 else many
                        text.append(f"  ·  {count:,} {label}", style="bold")
            text.append(f"  ·  showing {len(table.rows):,}", style="dim")
            kind = self._kind()
            text.append(f" · kind: {KIND_PLURALS[kind] if kind else 'all'}", style="dim")
        if self._consolidating:
            text.append("  ·  consolidating…", style="bold")
        self.query_one("#patterns-status", Static).update(text)
