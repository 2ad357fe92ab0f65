"""The review queue's filter bar over the nodes: words, status, type and project.

It posts `NodeFilters.Changed` when what it asks for may have changed (typing is debounced:
each read of a long queue takes a while, and only the last one counts) and
`NodeFilters.Submitted` on Enter in the words field."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Select

from store.models import NODE_TYPES, Node

#: Seconds typing must pause before the list is read again.
FILTER_DELAY = 0.08
STATUSES: tuple[tuple[str, str], ...] = (
    ("pending", "pending"),
    ("suppressed", "suppressed"),
    ("approved", "approved"),
    ("rejected", "rejected"),
    ("forgotten", "forgotten"),
    ("any status", ""),
)
ALL = ""
#: Kept out of the queue by the knowledge bar (a reviewer can promote them to pending).
SUPPRESSED = "suppressed"


class NodeFilters(Horizontal):
    """Words, status, type and project of the nodes listed."""

    class Changed(Message):
        """A filter may have changed: read the list again if what it asks for did."""

    class Submitted(Message):
        """Enter in the words field."""

    def __init__(self) -> None:
        super().__init__(id="review-filters")
        self._projects: list[str] = []
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="/ filter summary and evidence", id="node-filter")
        yield Select(STATUSES, value="pending", allow_blank=False, id="status-filter", compact=True)
        yield Select(
            [("any type", ALL), *((t, t) for t in NODE_TYPES)],
            value=ALL,
            allow_blank=False,
            id="type-filter",
            compact=True,
        )
        yield Select(
            [("any project", ALL)], value=ALL, allow_blank=False, id="project-filter", compact=True
        )

    @property
    def words(self) -> Input:
        return self.query_one("#node-filter", Input)

    def chosen(self) -> dict[str, Any]:
        """What the filters ask for, as `nodes()` takes it."""

        def chosen(selector: str) -> str | None:
            value = self.query_one(selector, Select).value
            return value if isinstance(value, str) and value else None

        return {
            "status": chosen("#status-filter"),
            "type_": chosen("#type-filter"),
            "project": chosen("#project-filter"),
            "text": self.words.value,
        }

    def set_projects(self, projects: list[str]) -> None:
        select = self.query_one("#project-filter", Select)
        current = select.value
        self._projects = projects
        select.set_options([("any project", ALL), *((p, p) for p in projects)])
        if isinstance(current, str) and current in projects:
            select.value = current

    def cycle(self, selector: str, values: list[str]) -> None:
        select = self.query_one(selector, Select)
        current = select.value if select.value in values else values[0]
        select.value = values[(values.index(str(current)) + 1) % len(values)]

    def cycle_type(self) -> None:
        self.cycle("#type-filter", [ALL, *NODE_TYPES])

    def cycle_status(self) -> None:
        self.cycle("#status-filter", [value for _, value in STATUSES])

    def toggle_project(self, node: Node | None) -> None:
        """Only `node`'s project (again, or without a node: every project)."""
        select = self.query_one("#project-filter", Select)
        if select.value != ALL or node is None:
            select.value = ALL
        else:
            if node.project not in self._projects:
                self.set_projects(sorted([*self._projects, node.project]))
            select.value = node.project

    def toggle_suppressed(self) -> None:
        """The nodes the knowledge bar kept out (again: the pending ones)."""
        select = self.query_one("#status-filter", Select)
        select.value = "pending" if select.value == SUPPRESSED else SUPPRESSED

    def clear(self) -> bool:
        """Back to the pending nodes, any words, type and project; False when they were."""
        wanted = (("#type-filter", ALL), ("#project-filter", ALL), ("#status-filter", "pending"))
        changed = bool(self.words.value)
        self.words.value = ""
        for selector, value in wanted:
            select = self.query_one(selector, Select)
            changed = changed or select.value != value
            select.value = value
        return changed

    def widen_for(self, node: Node) -> None:
        """Filters that list `node`: no words, any type and project, its status."""
        self.words.value = ""
        self.query_one("#type-filter", Select).value = ALL
        self.query_one("#project-filter", Select).value = ALL
        status = node.status if node.status in {v for _, v in STATUSES} else ALL
        self.query_one("#status-filter", Select).value = status

    @on(Input.Changed, "#node-filter")
    def _words_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(FILTER_DELAY, lambda: self.post_message(self.Changed()))

    @on(Input.Submitted, "#node-filter")
    def _words_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted())

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.post_message(self.Changed())
