"""The reading half of the review queue's nodes pane: the rows for the filters (a first page
at once, the rest once it is drawn), the queue's counts, the projects, and the transcript
around the node under the cursor (after the cursor rests; the next node's is prefetched).
`NodesPane` adds the decisions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.timer import Timer
from textual.worker import get_current_worker

from app.messages import (
    DecisionFailed,
    DecisionUndone,
    NodeContextLoaded,
    NodesDecided,
    NodesLoaded,
    ProjectsLoaded,
    QueueCountsLoaded,
)
from app.screens.review.filters import SUPPRESSED, NodeFilters
from app.screens.review.pane import DecisionPane
from store.errors import LibrarianError
from store.library import Library
from store.models import ContextMessage, Node, QueueCounts
from store.team.connection import warm
from store.team.review import TeamQueue
from widgets.node_detail import NodeDetailView
from widgets.node_table import NodeTable

#: Seconds the cursor must rest on a node before its transcript is loaded.
CONTEXT_DELAY = 0.06
#: Rows fetched at most; the status line says when there are more.
MAX_ROWS = 50_000
#: Rows fetched first, so the table fills at once however long the queue is.
FIRST_PAGE = 200
#: Transcript excerpts kept in memory (a decision then shows the next one at once).
CONTEXT_CACHE = 256
ORDERS: tuple[str, ...] = ("best", "oldest", "newest", "confidence", "type", "session")
NO_SUPPRESSED = "Nothing was kept out: every node passed the knowledge bar."


class NodeList(DecisionPane):
    """The nodes for the filters, in a table, with the detail of the one under the cursor."""

    def __init__(self, library: Library, changed: Callable[[], None]) -> None:
        super().__init__(library, changed, id="nodes-pane")
        self._order = ORDERS[0]
        self._by_session = False
        self._requested: dict[str, Any] | None = None
        self._want_focus: str | None = None
        self.counts: QueueCounts | None = None
        self._total = 0
        self._contexts: dict[str, list[ContextMessage]] = {}
        self._requested_context: list[str] = []
        self._context_timer: Timer | None = None
        self._had_node = True
        self._could_promote = False
        self._projects_asked = False
        #: The team hub's queue while the source is "team" (None: this library's own).
        self._team: TeamQueue | None = None

    @property
    def source(self) -> Library | TeamQueue:
        """Where the node list is read and decided: this library, or the team hub."""
        return self._team if self._team is not None else self.library

    def compose(self) -> ComposeResult:
        yield NodeTable(id="node-table")

    def on_mount(self) -> None:
        table = self.table()
        table.set_now(self.library.clock())
        table.focus()

    def start(self) -> None:
        """The screen is mounted: read the first rows and the counts."""
        self.reload()
        self.load_counts()
        if self.library.config.get("team.hub"):
            self.warm_team()

    def table(self) -> NodeTable:
        return self.query_one(NodeTable)

    def list_widget(self) -> NodeTable:
        return self.table()

    def detail_widget(self) -> NodeDetailView:
        return self.screen.query_one(NodeDetailView)

    @work(thread=True, exclusive=True, group="review-team-warm", exit_on_error=False)
    def warm_team(self) -> None:
        """Team mode is set up: load its driver now, so the switch (T) answers at once."""
        warm()

    @work(thread=True, exclusive=True, group="review-list", exit_on_error=False)
    def load_nodes(self, filters: dict[str, Any], focus: str | None, first_page: bool) -> None:
        """The rows for `filters`. With `first_page` (the table is empty) only a first page
        is read; the screen asks for the rest once it is drawn (10,000 rows take ~0.1-0.3 s
        to read, and the reading thread would slow that first frame down)."""
        worker = get_current_worker()
        rows = self.source.nodes(**filters, limit=FIRST_PAGE if first_page else MAX_ROWS)
        complete = len(rows) < (FIRST_PAGE if first_page else MAX_ROWS)
        total = len(rows)
        if not complete:
            counted = {k: v for k, v in filters.items() if k not in ("order", "by_session")}
            total = self.source.node_count(**counted)
        starts = self.source.session_starts()
        sessions = starts if filters["by_session"] else None
        if worker.is_cancelled:  # a newer filter won: drop stale rows
            return
        done = complete or not first_page
        self.post_message(
            NodesLoaded(rows, total, focus, complete=done, sessions=sessions, starts=starts)
        )
        if first_page and rows:  # the cursor starts on the first row: its transcript too
            first = rows[0]
            self.post_message(NodeContextLoaded(first.node_id, self.source.node_context(first)))

    @work(thread=True, exclusive=True, group="review-context", exit_on_error=False)
    def load_context(self, nodes: list[Node]) -> None:
        """The transcript around each node (the first is shown, the rest are prefetched)."""
        for node in nodes:
            messages = self.source.node_context(node)
            if get_current_worker().is_cancelled:
                return
            self.post_message(NodeContextLoaded(node.node_id, messages))

    @work(thread=True, exclusive=True, group="review-counts", exit_on_error=False)
    def load_counts(self) -> None:
        counts = self.source.queue_counts()
        if not get_current_worker().is_cancelled:
            self.post_message(QueueCountsLoaded(counts))

    @work(thread=True, exclusive=True, group="review-projects", exit_on_error=False)
    def load_projects(self) -> None:
        self.post_message(ProjectsLoaded(self.source.projects()))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_decision(self, action: str, node_ids: list[str], values: dict[str, str]) -> None:
        # Not exclusive: every decision is written (the store serialises them).
        try:
            nodes = self.source.review(action, node_ids, **values)
        except LibrarianError as exc:
            self.post_message(DecisionFailed(action, node_ids, str(exc)))
            return
        except Exception:
            self.post_message(DecisionFailed(action, node_ids, ""))  # reported as a worker error
            raise
        self.post_message(NodesDecided(action, nodes))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_undo(self) -> None:
        try:
            nodes = self.source.undo_review()
        except LibrarianError as exc:
            self.post_message(DecisionFailed("undo", [], str(exc)))
            return
        self.post_message(DecisionUndone(nodes))

    # -- loading -----------------------------------------------------------------------

    def filters(self) -> NodeFilters:
        return self.screen.query_one(NodeFilters)

    def _filters(self) -> dict[str, Any]:
        return {
            **self.filters().chosen(),
            "order": self._order,
            "by_session": self._by_session,
        }

    def reload(self, focus: str | None = None) -> None:
        """Fetch the rows for the current filters (the table keeps its rows until then)."""
        self._requested = self._filters()
        self.load_nodes(self._requested, focus, first_page=not self.table().rows)

    def _load_the_rest(self, filters: dict[str, Any], focus: str | None) -> None:
        if filters is self._requested:  # unless the filters changed meanwhile
            self.load_nodes(filters, focus, first_page=False)

    def reload_if_changed(self) -> None:
        if self._filters() != self._requested:
            self.reload()

    def on_nodes_loaded(self, message: NodesLoaded) -> None:
        message.stop()
        table = self.table()
        narrowed = self._requested is not None and (
            self._requested["status"] != "pending"
            or any(self._requested[k] for k in ("type_", "project", "text"))
        )
        table.empty_text = self._empty_text(narrowed)
        focus = message.focus or self._want_focus
        if message.sessions is not None or table.grouped:
            table.group_by_session(message.sessions)
        if message.starts is not None:
            table.set_session_times(message.starts)
        table.set_rows(message.rows, focus=focus)
        if focus and table.current and table.current.node_id == focus:
            self._want_focus = None
        self._total = message.total
        if not self._projects_asked:  # after the first rows: they go first
            self._projects_asked = True
            self.load_projects()
        self._show_current(0)
        self.changed()
        self._bindings_follow()
        if not message.complete and self._requested is not None:
            self.call_after_refresh(self._load_the_rest, self._requested, message.focus)

    def _empty_text(self, narrowed: bool) -> str:
        requested = self._requested or {}
        if requested.get("status") == SUPPRESSED and not any(
            requested.get(k) for k in ("type_", "project", "text")
        ):
            return NO_SUPPRESSED
        if narrowed:
            return "No node matches the filters."
        return "Nothing waiting for review. Ingest sessions with `librarian ingest`."

    def on_queue_counts_loaded(self, message: QueueCountsLoaded) -> None:
        message.stop()
        self.counts = message.counts
        self.changed()

    def on_projects_loaded(self, message: ProjectsLoaded) -> None:
        message.stop()
        self._set_projects(message.projects)

    def _set_projects(self, projects: list[str]) -> None:
        self.filters().set_projects(projects)

    def on_node_context_loaded(self, message: NodeContextLoaded) -> None:
        message.stop()
        self._contexts[message.node_id] = message.messages
        while len(self._contexts) > CONTEXT_CACHE:
            del self._contexts[next(iter(self._contexts))]
        detail = self.detail_widget()
        shown = detail.node
        if shown is not None and shown.node_id == message.node_id and detail.transcript is None:
            detail.show(shown, message.messages)

    # -- the detail pane ---------------------------------------------------------------

    def _show_current(self, delay: float) -> None:
        """Show the node under the cursor now; its transcript (unless known) after `delay`."""
        node = self.table().current
        detail = self.detail_widget()
        if self._context_timer is not None:
            self._context_timer.stop()
            self._context_timer = None
        if node is None:
            detail.show(None)
            return
        known = self._contexts.get(node.node_id)
        detail.show(node, known)
        wanted = [n for n in (node, self._next_node()) if n and n.node_id not in self._contexts]
        if not wanted or [n.node_id for n in wanted] == self._requested_context:
            return  # known, or already on its way
        if delay:
            self._context_timer = self.set_timer(delay, lambda: self._request_context(wanted))
        else:
            self._request_context(wanted)

    def _request_context(self, nodes: list[Node]) -> None:
        self._requested_context = [n.node_id for n in nodes]
        self.load_context(nodes)

    def _next_node(self) -> Node | None:
        table = self.table()
        index = table.next_pending(self._open_statuses())
        return table.rows[index] if index is not None else None

    @on(NodeTable.Highlighted)
    def _highlighted(self, event: NodeTable.Highlighted) -> None:
        detail = self.detail_widget()
        if detail.node is not None and detail.node.node_id == event.node_id:
            return  # already shown (a decision moved the cursor and showed it at once)
        # The node itself is shown at once; its transcript when the cursor rests.
        self._show_current(CONTEXT_DELAY)
        self._bindings_follow()

    @on(NodeTable.MarksChanged)
    def _marks_changed(self) -> None:
        self.changed()

    @on(NodeTable.Selected)
    def _selected(self) -> None:
        self.detail_widget().focus()

    def _open_statuses(self) -> tuple[str, ...]:
        """The statuses of the rows that wait for a decision in this list: pending, and
        suppressed while the list shows them."""
        status = (self._requested or {}).get("status")
        return ("pending", SUPPRESSED) if status == SUPPRESSED else ("pending",)

    def _bindings_follow(self) -> None:
        """The rows or the cursor changed (the decisions' keys may follow)."""
