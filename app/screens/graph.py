"""The dependency graph around one skill: the skill itself across the top (its blast radius
counted, the graph problems that touch it), then what it depends on (`requires`, `extends`)
over the skills merely related to it (complements, enables, often used with — in either
direction, as `librarian blast` has them) on the left, and everything that depends on it,
transitively, as a tree on the right. The lists share the width at every size.

Enter on any listed skill centres the graph on it (backspace goes back); `/` jumps to any
skill through a search that LIMITs its query; `+` / `-` add or remove a hand-made relation;
`h`, `l`, `R` open the Health, Lineage and Runbook screens on the centred skill, `i` the
Skills screen. Opened without a skill it centres on the deprecated skill with the largest
blast radius (else the first skill by name).

Each centre is read in a thread worker in two halves: what SQL answers at once (the skill,
its dependencies, its direct dependents) is drawn first, then the whole radius and the
graph's problems from the cached dependency graph. At most `FOCUS_LIMIT` dependents are
listed (nearest first); the counts are always exact.
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
from textual.widgets import Footer, Header, Static
from textual.worker import get_current_worker

from app.dialogs.relate import RelateModal
from app.dialogs.skill_picker import SkillPicker
from app.messages import SkillScreenRequested, SkillShowRequested
from app.screens.base import LibrarianScreen
from store.errors import LibrarianError
from store.library import Library
from store.models import GraphFocus
from store.text import one_line, plural
from widgets.graph_card import GraphCard, radius_summary
from widgets.graph_list import (
    GraphList,
    GraphRow,
    dependencies_of,
    dependency_rows,
    dependent_rows,
    related_rows,
)
from widgets.keys import bind

#: How many centres `backspace` can go back through.
HISTORY = 100
#: Seconds between drawing the first half of a centre and reading the whole radius, so the
#: first half reaches the terminal (and keys are answered) before the walk starts.
WHOLE_DELAY = 0.02


@dataclass
class GraphFocusLoaded(Message):
    """A centre was read (`focus` None: nothing to show; `error` says why it failed)."""

    request: int
    focus: GraphFocus | None
    error: str = ""


@dataclass
class RelationWritten(Message):
    """A hand-made relation was added or removed (`error`: refused, nothing written)."""

    text: str
    error: str = ""


class GraphScreen(LibrarianScreen):
    """The centred skill over its dependencies and related skills | its dependents.

    | Key | Action |
    | --- | --- |
    | up / down, left / right | move in a column, to the next column |
    | enter, backspace | centre on the highlighted skill, go back |
    | / | jump to any skill |
    | +, - (delete) | add a hand-made relation, remove the highlighted one |
    | h, l, R, i | the centred skill in Health, Lineage, Runbook, Skills |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("filter", "pick", "Jump", id="graph.pick", tooltip="Centre on any skill (search)"),
        bind(
            "back",
            "back",
            "Back",
            id="graph.back",
            tooltip="Back to the skill centred before",
        ),
        bind(
            "new",
            "relate",
            "Relate",
            id="graph.relate",
            tooltip="Add a hand-made relation from the centred skill (requires, extends, …)",
        ),
        bind(
            "remove",
            "unrelate",
            "Unrelate",
            id="graph.unrelate",
            tooltip="Remove the highlighted hand-made relation (depends on, related)",
        ),
        bind(
            "health",
            "open('health')",
            "Health",
            id="graph.health",
            tooltip="The centred skill's health (runs, failures, drift)",
        ),
        bind(
            "lineage",
            "open('lineage')",
            "Lineage",
            id="graph.lineage",
            tooltip="The centred skill's versions, history and provenance",
        ),
        bind(
            "runbook",
            "open('runbook')",
            "Runbook",
            show=False,
            id="graph.runbook",
            tooltip="The retirement runbook for the centred skill",
        ),
        bind(
            "info",
            "skills",
            "Skills",
            show=False,
            id="graph.skills",
            tooltip="Show the centred skill on the Skills screen",
        ),
        bind(
            "left",
            "column(-1)",
            "Column left",
            show=False,
            id="graph.left",
            tooltip="To the column on the left",
        ),
        bind(
            "right",
            "column(1)",
            "Column right",
            show=False,
            id="graph.right",
            tooltip="To the column on the right",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="graph")
        self.library = library
        self._focus: GraphFocus | None = None
        self._history: list[str] = []
        self._request = 0
        self._answered = 0  # the last request an answer came back for
        self._pushed = False  # the request in flight put the old centre on the history

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="graph-body"):
            yield GraphCard(id="graph-card")
            with Horizontal(id="graph-lists"):
                with Vertical(id="graph-left"):
                    yield GraphList(id="graph-deps")
                    yield GraphList(id="graph-related")
                yield GraphList(id="graph-dependents")
        yield Static(id="graph-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Dependency graph"
        for widget_id, title in (
            ("#graph-deps", "depends on"),
            ("#graph-related", "related"),
            ("#graph-dependents", "dependents · blast radius"),
        ):
            self.query_one(widget_id, GraphList).show(title, [], "…")
        self.query_one("#graph-status", Static).update(Text("loading the graph…", style="dim"))
        if self._request == 0:  # nobody asked for a skill yet: the default one
            self._centre(None, remember=False)

    def on_screen_resume(self) -> None:
        # Shown again: relations or statuses may have changed elsewhere (runbook, CLI).
        # Not when a modal closed with a new centre: that one is on its way.
        if self._focus is not None and self._answered == self._request:
            self._centre(self._focus.name, remember=False)

    # -- workers (thread: the store blocks) ------------------------------------------

    @work(thread=True, exclusive=True, group="graph-focus", exit_on_error=False)
    def load(self, request: int, key: str | None, whole: bool = False) -> None:
        """Read a centre: first (`whole` False) what SQL answers at once; once that is drawn
        the screen asks again for the whole radius and the problems (`whole` True)."""
        try:
            key = key or self.library.default_graph_skill()
            if key is None:
                self.post_message(GraphFocusLoaded(request, None))
                return
            found = self.library.graph_focus(key, whole=whole)
        except LibrarianError as exc:
            self.post_message(GraphFocusLoaded(request, None, str(exc)))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(GraphFocusLoaded(request, found))

    @work(thread=True, group="graph-write", exit_on_error=False)
    def write_relation(self, source: str, kind: str, target: str, remove: bool) -> None:
        try:
            text = self.library.relate(source, kind, target, remove=remove)
        except LibrarianError as exc:
            self.post_message(RelationWritten("", str(exc)))
            return
        self.post_message(RelationWritten(text))

    # -- centring ----------------------------------------------------------------------

    def _centre(self, key: str | None, *, remember: bool = True) -> None:
        """Read and show `key` (None: the default skill); `remember` the current centre for
        backspace."""
        self._pushed = False
        if remember and self._focus is not None and self._focus.name != key:
            self._history = [*self._history, self._focus.name][-HISTORY:]
            self._pushed = True
        self._request += 1
        self.load(self._request, key)
        self.refresh_bindings()

    def on_graph_focus_loaded(self, message: GraphFocusLoaded) -> None:
        if message.request != self._request:
            return  # superseded by a newer centre
        self._answered = message.request
        if message.error:
            self.notify(one_line(message.error, 300), severity="error", markup=False)
            if self._pushed and self._history:
                self._history.pop()  # the old centre stays: nothing to come back to
                self._pushed = False
        if message.focus is None:
            if self._focus is None:
                self._draw_nothing(message.error)
            return
        self._draw(message.focus)
        if not message.focus.complete:
            # The whole radius once this half is on screen (the walk holds the GIL a while).
            skill, request = str(message.focus.skill_id), message.request
            self.set_timer(WHOLE_DELAY, lambda: self._load_whole(request, skill))

    def _load_whole(self, request: int, skill: str) -> None:
        if request == self._request:  # still the centre asked for
            self.load(request, skill, True)

    def _draw(self, focus: GraphFocus) -> None:
        same = self._focus is not None and self._focus.skill_id == focus.skill_id
        self._focus = focus
        dependencies = dependency_rows(dependencies_of(focus))
        # As tall as its rows (the related skills take the rest), at most half the column.
        self.query_one("#graph-deps").styles.height = max(len(dependencies), 1) + 1
        self._fill(
            "#graph-deps",
            f"depends on · {len(dependencies)}",
            dependencies,
            "Depends on nothing.",
            same,
        )
        related = related_rows(focus)
        self._fill(
            "#graph-related",
            f"related · {len(related)} · → from it, ← to it",
            related,
            "No complements, enables or co-used skills around it.",
            same,
        )
        count = (
            plural(focus.dependent_count, "skill")
            if focus.complete
            else f"{focus.direct_count:,} direct, counting…"
        )
        self._fill(
            "#graph-dependents",
            f"dependents · blast radius {count}",
            dependent_rows(focus),
            "Nothing depends on it." if focus.complete else "…",
            same,
            alert=focus.dependent_count > 0,
        )
        self.query_one(GraphCard).show(focus, list(reversed(self._history)))
        self._update_status()
        if not self.loaded:
            self.loaded = True
        if not same or not any(g.has_focus for g in self.query(GraphList)):
            self._focus_first_column()
        self.refresh_bindings()

    def _fill(
        self,
        selector: str,
        title: str,
        rows: list[GraphRow],
        empty: str,
        same: bool,
        alert: bool = False,
    ) -> None:
        column = self.query_one(selector, GraphList)
        if same:  # the second half of the same centre: keep the cursor on its row
            column.title, column.empty_text, column.alert = title, empty, alert
            column.set_rows(rows)
        else:
            column.show(title, rows, empty, alert=alert)

    def _draw_nothing(self, error: str) -> None:
        self.query_one(GraphCard).show(None, waiting=one_line(error, 300) if error else "")
        for column in self.query(GraphList):
            column.show(column.title, [], "")
        self.query_one("#graph-status", Static).update(Text("no skills", style="dim"))
        self.loaded = True

    def _focus_first_column(self) -> None:
        for selector in ("#graph-dependents", "#graph-deps", "#graph-related"):
            column = self.query_one(selector, GraphList)
            if column.rows:
                column.focus()
                return
        self.query_one("#graph-dependents", GraphList).focus()

    def _update_status(self) -> None:
        focus = self._focus
        if focus is None:
            return
        text = Text(radius_summary(focus), style="bold")
        problems = focus.problems.count
        if problems:
            text.append(f"  ·  {plural(problems, 'graph problem')}", style="bold red")
        if self._history:
            text.append(f"  ·  {len(self._history)} back", style="dim")
        self.query_one("#graph-status", Static).update(text)

    # -- the columns -------------------------------------------------------------------

    @on(GraphList.Selected)
    def _selected(self, event: GraphList.Selected) -> None:
        row = event.row
        if row.more:
            self.app.bell()
            self.notify(
                "only the nearest dependents are listed; centre on one of them to go further",
                markup=False,
            )
        elif row.status == "missing":
            self.app.bell()
            self.notify(
                f"no skill named {one_line(row.name, 80)}: a dangling reference",
                severity="warning",
                markup=False,
            )
        else:
            self._centre(row.name)

    def _columns(self) -> list[GraphList]:
        return [
            self.query_one(selector, GraphList)
            for selector in ("#graph-deps", "#graph-related", "#graph-dependents")
        ]

    def action_column(self, step: int) -> None:
        columns = self._columns()
        current = next((i for i, c in enumerate(columns) if c.has_focus), 1)
        index = current + step
        while 0 <= index < len(columns):
            if columns[index].rows:
                columns[index].focus()
                return
            index += step
        self.app.bell()

    # -- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return bool(self._history) or None
        if action in ("relate", "unrelate", "open", "skills"):
            return self._focus is not None or None
        return True

    def action_back(self) -> None:
        if not self._history:
            self.app.bell()
            return
        *self._history, previous = self._history
        self._centre(previous, remember=False)

    def action_pick(self) -> None:
        def picked(skill: str | None) -> None:
            if skill is not None:
                self._centre(skill)

        self.app.push_screen(SkillPicker(self.library, "Centre the graph on…"), picked)

    def action_relate(self) -> None:
        focus = self._focus
        if focus is None:
            self.app.bell()
            return
        source = focus.name

        def answered(result: tuple[str, str] | None) -> None:
            if result is not None:
                self.write_relation(source, result[0], result[1], False)

        self.app.push_screen(RelateModal(source), answered)

    def action_unrelate(self) -> None:
        focus = self._focus
        deps, related = self._columns()[:2]
        row = (related if related.has_focus else deps).current
        if focus is None or row is None:
            self.app.bell()
            return
        if row.relation.startswith("← "):  # the other skill's relation, not the centre's
            self.app.bell()
            self.notify(
                f"{one_line(row.name, 60)} {row.relation[2:]} {one_line(focus.name, 60)} is"
                f" {one_line(row.name, 60)}'s relation: centre on it to remove it",
                severity="warning",
                markup=False,
            )
            return
        relation = row.relation.removeprefix("→ ")
        if row.note != "by hand":
            self.app.bell()
            self.notify(
                f"{one_line(focus.name, 60)} {relation} {one_line(row.name, 60)} comes from"
                " the SKILL.md: only hand-made relations are removed here",
                severity="warning",
                markup=False,
            )
            return
        self.write_relation(focus.name, relation, row.name, True)

    def on_relation_written(self, message: RelationWritten) -> None:
        if message.error:
            self.notify(one_line(message.error, 300), severity="error", timeout=8, markup=False)
            return
        self.notify(one_line(message.text, 300), markup=False)
        if self._focus is not None:
            self._centre(self._focus.name, remember=False)

    def action_open(self, mode: str) -> None:
        if self._focus is not None:
            self.post_message(SkillScreenRequested(mode, self._focus.name))

    def action_skills(self) -> None:
        if self._focus is not None:
            self.post_message(SkillShowRequested(self._focus.skill_id))

    # -- for the app -------------------------------------------------------------------

    async def show_skill(self, skill: str) -> None:
        """Centre on a skill by name (the current centre goes on the way back)."""
        self._centre(skill)

    @property
    def focus_shown(self) -> GraphFocus | None:
        return self._focus

    @property
    def history(self) -> list[str]:
        return list(self._history)
