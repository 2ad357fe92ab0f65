"""The Sessions screen: ingested sessions, the selected one's reasoning DAG, a node's evidence."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Static
from textual.worker import get_current_worker

from app.live import LibraryChanged
from app.messages import NodeContextLoaded, NodeOpenRequested, SessionGraphLoaded, SessionsLoaded
from app.screens.base import LibrarianScreen
from store.library import Library
from store.models import NODE_TYPES, ContextMessage, Edge, Node
from widgets.dag_view import DagView
from widgets.keys import bind
from widgets.node_detail import NodeDetailView
from widgets.session_list import SessionList

#: Seconds the cursor must rest on a session (or a node) before its graph (transcript) loads.
GRAPH_DELAY = 0.08
CONTEXT_DELAY = 0.06
CONTEXT_CACHE = 256


class SessionsScreen(LibrarianScreen):
    """Session list on top; the DAG of the selected session and the node detail below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "graph",
            "focus_graph",
            "Graph",
            id="sessions.graph",
            tooltip="To the selected session's reasoning graph",
        ),
        bind(
            "type",
            "cycle_types",
            "Types",
            id="sessions.types",
            tooltip="Show only one node type in the graph (again: the next type, then all)",
        ),
        bind(
            "arcs",
            "toggle_arcs",
            "Arcs",
            id="sessions.arcs",
            tooltip="Highlight the dead end → pivot → solution paths",
        ),
        bind(
            "filter",
            "focus_filter",
            "Filter",
            show=False,
            id="sessions.filter",
            tooltip="Filter sessions by id, project or branch",
        ),
        bind(
            "detail",
            "focus_detail",
            "Detail",
            show=False,
            id="sessions.detail",
            tooltip="Scroll the node's evidence and transcript",
        ),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="sessions.clear",
            tooltip="Clear the filter and the type (again: back to the session list)",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="sessions")
        self.library = library
        self._types: tuple[str, ...] = ()  # the types in the shown graph, in NODE_TYPES order
        self._type: str | None = None
        self._graph_of: str | None = None
        self._want_session: str | None = None
        self._graph_timer: Timer | None = None
        self._context_timer: Timer | None = None
        self._contexts: dict[str, list[ContextMessage]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="sessions-body"):
            yield Input(placeholder="/ filter sessions by id, project, branch", id="session-filter")
            yield SessionList(id="session-list")
            with Horizontal(id="sessions-lower"):
                yield DagView(id="dag")
                yield NodeDetailView(id="session-node-detail")
            yield Static(id="sessions-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Sessions"
        self.query_one(SessionList).focus()
        self.query_one(DagView).empty_text = "Select a session to see its reasoning graph."
        self.load_sessions("")

    def library_changed(self, message: LibraryChanged) -> None:
        """Sessions ingested elsewhere (the hook worker, `librarian ingest`): list them."""
        self.load_sessions(self.query_one("#session-filter", Input).value)

    # -- workers (thread: the store blocks) ------------------------------------------

    @work(thread=True, exclusive=True, group="sessions-list", exit_on_error=False)
    def load_sessions(self, text: str) -> None:
        rows = self.library.sessions(text=text)
        if not get_current_worker().is_cancelled:
            self.post_message(SessionsLoaded(rows))

    @work(thread=True, exclusive=True, group="sessions-graph", exit_on_error=False)
    def load_graph(self, session_id: str) -> None:
        nodes, edges = self.library.session_graph(session_id)
        if not get_current_worker().is_cancelled:
            self.post_message(SessionGraphLoaded(session_id, nodes, edges))

    @work(thread=True, exclusive=True, group="sessions-context", exit_on_error=False)
    def load_context(self, node: Node) -> None:
        messages = self.library.node_context(node)
        if not get_current_worker().is_cancelled:
            self.post_message(NodeContextLoaded(node.node_id, messages))

    # -- sessions --------------------------------------------------------------------

    def on_sessions_loaded(self, message: SessionsLoaded) -> None:
        sessions = self.query_one(SessionList)
        sessions.empty_text = (
            "No session matches the filter."
            if self.query_one("#session-filter", Input).value
            else "No sessions yet. Run `librarian ingest` (or install the Stop hook)."
        )
        sessions.set_rows(message.rows, focus=self._want_session)
        if sessions.current is None:
            self._show_graph(None, [], [])
        elif sessions.current.session_id != self._graph_of:
            self._schedule_graph(sessions.current.session_id, 0)
        current = sessions.current
        if self._want_session and current and current.session_id == self._want_session:
            self._want_session = None
            self.query_one(DagView).focus()

    @on(SessionList.Highlighted)
    def _session_highlighted(self, event: SessionList.Highlighted) -> None:
        if event.session_id is not None and event.session_id != self._graph_of:
            self._schedule_graph(event.session_id, GRAPH_DELAY)

    @on(SessionList.Selected)
    def _session_selected(self) -> None:
        self.query_one(DagView).focus()

    def _schedule_graph(self, session_id: str, delay: float) -> None:
        # Debounced: holding a key moves through the list at full speed.
        if self._graph_timer is not None:
            self._graph_timer.stop()
        if delay:
            self._graph_timer = self.set_timer(delay, lambda: self.load_graph(session_id))
        else:
            self.load_graph(session_id)

    def on_session_graph_loaded(self, message: SessionGraphLoaded) -> None:
        current = self.query_one(SessionList).current
        if current is None or current.session_id != message.session_id:
            return
        self._show_graph(message.session_id, message.nodes, message.edges)

    def _show_graph(self, session_id: str | None, nodes: list[Node], edges: list[Edge]) -> None:
        dag = self.query_one(DagView)
        fresh = session_id != self._graph_of
        self._graph_of = session_id
        present = {n.type for n in nodes}
        self._types = tuple(t for t in NODE_TYPES if t in present)
        if fresh or self._type not in present:
            self._type = None
        dag.empty_text = "This session has no nodes." if session_id else dag.empty_text
        dag.set_graph(nodes, edges)
        dag.filter_types(None if self._type is None else {self._type})
        if fresh:
            dag.cursor = 0
        self._show_node(0)
        self._update_status()

    # -- nodes -----------------------------------------------------------------------

    @on(DagView.Highlighted)
    def _node_highlighted(self) -> None:
        self._show_node(CONTEXT_DELAY)
        self._update_status()

    def _show_node(self, delay: float) -> None:
        node = self.query_one(DagView).current
        detail = self.query_one(NodeDetailView)
        if self._context_timer is not None:
            self._context_timer.stop()
            self._context_timer = None
        if node is None:
            detail.show(None)
            return
        known = self._contexts.get(node.node_id)
        detail.show(node, known)
        if known is None:
            if delay:
                self._context_timer = self.set_timer(delay, lambda: self.load_context(node))
            else:
                self.load_context(node)

    def on_node_context_loaded(self, message: NodeContextLoaded) -> None:
        self._contexts[message.node_id] = message.messages
        while len(self._contexts) > CONTEXT_CACHE:
            del self._contexts[next(iter(self._contexts))]
        detail = self.query_one(NodeDetailView)
        if detail.node is not None and detail.node.node_id == message.node_id:
            detail.show(detail.node, message.messages)

    @on(DagView.Selected)
    def _node_selected(self) -> None:
        node = self.query_one(DagView).current
        if node is None:
            return
        if node.status == "merged":
            self.notify("this node was merged into another one; open that one", timeout=4)
            return
        self.post_message(NodeOpenRequested(node))

    # -- filters and keys --------------------------------------------------------------

    @on(Input.Changed, "#session-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.load_sessions(event.value)

    @on(Input.Submitted, "#session-filter")
    def _filter_submitted(self) -> None:
        self.query_one(SessionList).focus()

    def action_cycle_types(self) -> None:
        choices: list[str | None] = [None, *self._types]
        self._type = choices[(choices.index(self._type) + 1) % len(choices)]
        self.query_one(DagView).filter_types(None if self._type is None else {self._type})
        self._update_status()

    def action_toggle_arcs(self) -> None:
        dag = self.query_one(DagView)
        dag.highlight_arcs = not dag.highlight_arcs
        self._update_status()

    def action_focus_filter(self) -> None:
        self.query_one("#session-filter", Input).focus()

    def action_focus_list(self) -> None:
        self.query_one(SessionList).focus()

    def action_focus_graph(self) -> None:
        self.query_one(DagView).focus()

    def action_focus_detail(self) -> None:
        self.query_one(NodeDetailView).focus()

    def action_clear(self) -> None:
        """Clear the filter and the type shown; when there were none, back to the list."""
        field = self.query_one("#session-filter", Input)
        if field.value or self._type is not None:
            field.value = ""
            if self._type is not None:
                self._type = None
                self.query_one(DagView).filter_types(None)
                self._update_status()
        else:
            self.action_focus_list()

    def open_session(self, session_id: str) -> None:
        """Select a session and show its graph (used by the command palette)."""
        sessions = self.query_one(SessionList)
        if sessions.move_to(session_id):
            self.query_one(DagView).focus()
            return
        self._want_session = session_id
        self.query_one("#session-filter", Input).value = ""
        self.load_sessions("")

    # -- status line -------------------------------------------------------------------

    def _update_status(self) -> None:
        sessions = self.query_one(SessionList)
        dag = self.query_one(DagView)
        text = Text(f"{len(sessions.rows):,} sessions", style="bold")
        if self._graph_of is not None:
            text.append(f"  ·  {len(dag.rows):,} nodes shown", style="dim")
            text.append(f" · types: {self._type or 'all'}", style="dim")
            if dag.highlight_arcs:
                text.append(f" · {len(dag.arcs)} on dead end → solution paths", style="dim")
            current = dag.current
            if current is not None and current.status == "pending":
                text.append("  ·  enter opens this pending node in the review queue")
        self.query_one("#sessions-status", Static).update(text)
