"""The review queue: decide on pending reasoning nodes with their evidence on screen.

The best nodes come first (informativeness × confidence), optionally grouped under their
session. Nodes the knowledge bar kept out of the queue (`suppressed`) are one status filter
away; one key promotes them to pending, and approve / reject work on them directly.

Decisions are written by thread workers; the table takes the returned nodes back (a decided
row leaves a pending-only list) instead of reloading the list. The cursor moves to the next
pending node as soon as a decision is asked for (the decided rows stay dimmed until the write
returns), so a reviewer can decide as fast as they read.

The same queue holds the SKILL.md drafts that graduation made from patterns: one key switches
the list between nodes and drafts, and approve / reject then decide on the draft (approving
writes the SKILL.md and installs the skill as proposed). Another key lists the computed
relation proposals (two skills often used together with no relation between them): approve
adds the `often_used_with` relation, reject keeps the pair from being proposed again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Label, Select, Static
from textual.worker import get_current_worker

from app.live import LibraryChanged
from app.messages import (
    DecisionFailed,
    DecisionUndone,
    DraftFailed,
    DraftsLoaded,
    DraftWritten,
    NodeContextLoaded,
    NodesDecided,
    NodesLoaded,
    ProjectsLoaded,
    ProposalDecided,
    ProposalFailed,
    ProposalSessionsLoaded,
    ProposalsLoaded,
    QueueCountsLoaded,
)
from app.screens.base import decide_draft
from app.screens.review_enrichments import NO_ENRICHMENTS, EnrichmentPane
from store.errors import LibrarianError
from store.library import Library
from store.models import (
    NODE_TYPES,
    SCOPES,
    ContextMessage,
    Draft,
    GraduationCheck,
    Node,
    QueueCounts,
    RelationProposal,
    SharedSession,
)
from store.models.governance import Enrichment
from store.patterns.literals import draft_diff
from store.team.connection import configured_hub, warm
from store.team.review import TeamQueue
from store.text import neutralise, one_line
from widgets.draft_detail import DraftDetailView
from widgets.draft_table import DraftTable
from widgets.enrichment_detail import EnrichmentDetailView
from widgets.enrichment_table import EnrichmentTable
from widgets.node_detail import NodeDetailView
from widgets.node_table import NodeTable
from widgets.proposal_detail import ProposalDetailView
from widgets.proposal_table import ProposalTable, pair_text

#: Seconds the cursor must rest on a node before its transcript is loaded.
CONTEXT_DELAY = 0.06
#: Seconds typing must pause before the list is read again.
FILTER_DELAY = 0.08
#: Rows fetched at most; the status line says when there are more.
MAX_ROWS = 50_000
#: Rows fetched first, so the table fills at once however long the queue is.
FIRST_PAGE = 200
#: Transcript excerpts kept in memory (a decision then shows the next one at once).
CONTEXT_CACHE = 256
ORDERS: tuple[str, ...] = ("best", "oldest", "newest", "confidence", "type", "session")
ORDER_TITLES = {
    "best": "best first",
    "oldest": "oldest first",
    "newest": "newest first",
    "confidence": "most confident first",
    "type": "by type",
    "session": "by session",
}
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
NO_SUPPRESSED = "Nothing was kept out: every node passed the knowledge bar."
#: The status line's hint after the count of suppressed nodes, by status filter: (binding id,
#: what it does).
KEPT_OUT_HINTS = {
    "pending": ("review.status", "show"),
    SUPPRESSED: ("review.promote", "promote to pending"),
}
NO_DRAFTS = "No drafts waiting. Eligible patterns are graduated on the Patterns screen."
NO_PROPOSALS = (
    "No relation proposals waiting. Skills used together in enough sessions, with no relation"
    " between them, are proposed here after an ingest (or `librarian proposals compute`)."
)
#: The review queue's lists: pending nodes, SKILL.md drafts, relation proposals, enrichment
#: proposals for thin skills.
MODES = ("nodes", "drafts", "relations", "enrichments")
SUBTITLES = {
    "nodes": "Review queue",
    "drafts": "Review queue · drafts",
    "relations": "Review queue · relations",
    "enrichments": "Review queue · enrichments",
}
#: Proposals' shared sessions kept in memory.
SESSIONS_CACHE = 64
#: Actions that only apply to nodes (greyed out while the list shows drafts or proposals).
NODE_ONLY = frozenset(
    {
        "edit",
        "scope",
        "undo",
        "skip",
        "focus_filter",
        "promote",
        "toggle_group",
        "cycle_order",
        "cycle_type",
        "cycle_status",
        "toggle_project",
    }
)


class TextPrompt(ModalScreen[str | None]):
    """One line of text: Enter returns it (possibly empty), Escape returns None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close, change nothing"),
    ]

    def __init__(
        self, title: str, *, value: str = "", placeholder: str = "", hint: str = ""
    ) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._placeholder = placeholder
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-box"):
            yield Label(Text(self._title, style="bold"), id="prompt-title")
            yield Input(value=self._value, placeholder=self._placeholder, id="prompt-input")
            yield Label(Text(self._hint, style="dim"), id="prompt-hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewScreen(EnrichmentPane):
    """Pending nodes in a table, the selected one's evidence and transcript below it.

    | Key | Action |
    | --- | --- |
    | a / x / e / s | approve / reject (asks a reason) / edit the summary / switch scope |
    | p | promote a suppressed node (or every marked one) to pending |
    | u | undo your last decision (a whole multi-selection at once) |
    | n | skip to the next pending node |
    | m, ctrl+a | mark a node, mark all listed (decisions apply to every marked node) |
    | /, f, S, P, o | filter by words, type, status, this project; change the order |
    | g | group the rows by session (again: one list) |
    | d, l, esc | to the detail pane, back to the list, clear the filter or the marks |
    | D | switch between pending nodes and drafted SKILL.md files (a / x decide on drafts) |
    | R | switch between pending nodes and relation proposals (a / x decide on proposals) |
    | E | switch between pending nodes and enrichment proposals (a / x decide on them) |
    | L | in drafts: keep a transient literal on purpose (again: replace it again) |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a",
            "approve",
            "Approve",
            id="review.approve",
            tooltip="Approve the node (or every marked node), then go to the next",
        ),
        Binding(
            "x",
            "reject",
            "Reject",
            id="review.reject",
            tooltip="Reject the node (or every marked node) with an optional reason",
        ),
        Binding(
            "p",
            "promote",
            "Promote",
            id="review.promote",
            tooltip="Put the suppressed node (or every marked one) in the pending queue",
        ),
        Binding("e", "edit", "Edit", id="review.edit", tooltip="Rewrite the node's summary"),
        Binding(
            # Out of the footer, which holds at most seven keys (`?` and the palette list it).
            "s",
            "scope",
            "Scope",
            show=False,
            id="review.scope",
            tooltip="Switch the scope between PROJECT and TEAM (every marked node follows)",
        ),
        Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo your last decision"),
        Binding(
            "n",
            "skip",
            "Skip",
            show=False,
            id="review.skip",
            tooltip="Leave this node pending and go to the next pending one",
        ),
        Binding(
            "slash",
            "focus_filter",
            "Filter",
            show=False,
            id="review.filter",
            tooltip="Filter by words in the summary or evidence",
        ),
        Binding(
            "o",
            "cycle_order",
            "Order",
            show=False,
            id="review.order",
            tooltip="Change the order (best first: informativeness × confidence)",
        ),
        Binding(
            "g",
            "toggle_group",
            "Group",
            show=False,
            id="review.group",
            tooltip="Group the rows by session, best first inside each (again: one list)",
        ),
        Binding(
            "f",
            "cycle_type",
            "Type",
            show=False,
            id="review.type",
            tooltip="Show only one node type (again: the next type, then all)",
        ),
        Binding(
            "S",
            "cycle_status",
            "Status",
            show=False,
            id="review.status",
            tooltip="Show pending, suppressed (kept out), approved, rejected or all nodes",
        ),
        Binding(
            "P",
            "toggle_project",
            "Project",
            show=False,
            id="review.project",
            tooltip="Show only this node's project (again: every project)",
        ),
        Binding(
            "d",
            "focus_detail",
            "Detail",
            show=False,
            id="review.detail",
            tooltip="Scroll the evidence and transcript",
        ),
        Binding(
            "l", "focus_list", "List", show=False, id="review.list", tooltip="Back to the list"
        ),
        Binding(
            "escape",
            "clear",
            "Clear",
            show=False,
            id="review.clear",
            tooltip="Clear the filter or the marks",
        ),
        Binding(
            "D",
            "toggle_drafts",
            "Drafts",
            show=False,
            id="review.drafts",
            tooltip="Switch between pending nodes and SKILL.md drafts waiting for review",
        ),
        Binding(
            "R",
            "toggle_relations",
            "Relations",
            show=False,
            id="review.relations",
            tooltip="Switch between pending nodes and relations proposed from co-usage",
        ),
        Binding(
            "T",
            "toggle_source",
            "Mine/team",
            show=False,
            id="review.source",
            tooltip="Switch the queue between your library (mine) and the team hub's staged"
            " items (team)",
        ),
        Binding(
            "E",
            "toggle_enrichments",
            "Enrichments",
            show=False,
            id="review.enrichments",
            tooltip="Switch between pending nodes and proposed rewrites of thin skills",
        ),
        Binding(
            "L",
            "keep_literal",
            "Keep literal",
            show=False,
            id="review.keep_literal",
            tooltip="Keep one of the draft's transient literals on purpose (again: replace it)",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="review")
        self.library = library
        self._order = ORDERS[0]
        self._by_session = False
        self._requested: dict[str, Any] | None = None
        self._want_focus: str | None = None
        self._counts: QueueCounts | None = None
        self._total = 0
        self._projects: list[str] = []
        self._contexts: dict[str, list[ContextMessage]] = {}
        self._requested_context: list[str] = []
        self._context_timer: Timer | None = None
        self._filter_timer: Timer | None = None
        self._had_node = True
        self._could_promote = False
        self._projects_asked = False
        self._mode = "nodes"
        self._drafts: list[Draft] = []
        self._draft_checks: dict[str, GraduationCheck] = {}
        self._proposals: list[RelationProposal] = []
        self._enrichments: list[Enrichment] = []
        self._shared: dict[tuple[str, str], list[SharedSession]] = {}
        #: The team hub's queue while the source is "team" (None: this library's own).
        self._team: TeamQueue | None = None

    @property
    def source(self) -> Library | TeamQueue:
        """Where the node list is read and decided: this library, or the team hub."""
        return self._team if self._team is not None else self.library

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review-body"):
            with Horizontal(id="review-filters"):
                yield Input(placeholder="/ filter summary and evidence", id="node-filter")
                yield Select(
                    STATUSES, value="pending", allow_blank=False, id="status-filter", compact=True
                )
                yield Select(
                    [("any type", ALL), *((t, t) for t in NODE_TYPES)],
                    value=ALL,
                    allow_blank=False,
                    id="type-filter",
                    compact=True,
                )
                yield Select(
                    [("any project", ALL)],
                    value=ALL,
                    allow_blank=False,
                    id="project-filter",
                    compact=True,
                )
            yield NodeTable(id="node-table")
            yield DraftTable(id="draft-table")
            yield ProposalTable(id="proposal-table")
            yield EnrichmentTable(id="enrichment-table")
            yield Static(id="review-status")
            yield NodeDetailView(id="node-detail")
            yield DraftDetailView(id="draft-detail")
            yield ProposalDetailView(id="proposal-detail")
            yield EnrichmentDetailView(id="enrichment-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Review queue"
        table = self.query_one(NodeTable)
        table.set_now(self.library.clock())
        table.focus()
        self.query_one(DraftTable).empty_text = NO_DRAFTS
        self.query_one(ProposalTable).empty_text = NO_PROPOSALS
        self.query_one(EnrichmentTable).empty_text = NO_ENRICHMENTS
        self.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.reload()
        self.load_counts()
        if self.library.config.get("team.hub"):
            self.warm_team()

    @work(thread=True, exclusive=True, group="review-team-warm", exit_on_error=False)
    def warm_team(self) -> None:
        """Team mode is set up: load its driver now, so the switch (T) answers at once."""
        warm()

    def _bindings_changed(self, _screen: object) -> None:
        kept_out = self._counts is not None and self._counts.suppressed
        waiting = self._drafts or self._proposals or self._enrichments
        if waiting or kept_out:  # the status line names keys focus can hide
            self._update_status()

    def on_screen_resume(self) -> None:
        # Shown (again): a pattern may have been drafted on the Patterns screen meanwhile,
        # an ingest may have proposed relations, `librarian enrich` proposed rewrites.
        self.load_drafts()
        self.load_proposals()
        self.load_enrichments()

    def library_changed(self, message: LibraryChanged) -> None:
        """Decided elsewhere, or sessions ingested by the hook worker: the queue as it is
        now, the cursor kept on its node."""
        self.on_screen_resume()
        current = self.query_one(NodeTable).current
        self.reload(current.node_id if current else None)
        self.load_counts()

    # -- workers (thread: the store blocks) ------------------------------------------

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
        sessions = self.source.session_starts() if filters["by_session"] else None
        if worker.is_cancelled:  # a newer filter won: drop stale rows
            return
        done = complete or not first_page
        self.post_message(NodesLoaded(rows, total, focus, complete=done, sessions=sessions))
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

    @work(thread=True, exclusive=True, group="review-drafts", exit_on_error=False)
    def load_drafts(self) -> None:
        """The pending drafts, and the check of the pattern each was drafted from."""
        drafts = self.library.drafts(status="pending")
        checks: dict[str, GraduationCheck] = {}
        for pattern_id in dict.fromkeys(d.pattern_id for d in drafts):
            try:
                checks[pattern_id] = self.library.graduation_check(pattern_id)
            except LibrarianError:  # the pattern is gone: the draft is shown without it
                continue
        if not get_current_worker().is_cancelled:
            self.post_message(DraftsLoaded(drafts, checks))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_draft(self, action: str, draft_id: str, reason: str = "") -> None:
        try:
            self.post_message(decide_draft(self.library, action, draft_id, reason))
        except Exception:
            self.post_message(DraftFailed(action, draft_id, ""))  # reported as a worker error
            raise

    @work(thread=True, exclusive=True, group="review-proposals", exit_on_error=False)
    def load_proposals(self) -> None:
        proposals = self.library.relation_proposals("pending")
        if not get_current_worker().is_cancelled:
            self.post_message(ProposalsLoaded(proposals))

    @work(thread=True, exclusive=True, group="review-proposal-sessions", exit_on_error=False)
    def load_proposal_sessions(self, pair: tuple[str, str]) -> None:
        try:
            sessions = self.library.proposal_sessions(*pair)
        except LibrarianError:  # decided and gone meanwhile: the next load drops the row
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ProposalSessionsLoaded(pair, sessions))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_proposal(self, action: str, pair: tuple[str, str], reason: str = "") -> None:
        try:
            if action == "accept":
                proposal = self.library.accept_relation(*pair)
            else:
                proposal = self.library.reject_relation(*pair, reason)
        except LibrarianError as exc:
            self.post_message(ProposalFailed(action, pair, str(exc)))
            return
        except Exception:
            self.post_message(ProposalFailed(action, pair, ""))  # reported as a worker error
            raise
        self.post_message(ProposalDecided(action, proposal))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_undo(self) -> None:
        try:
            nodes = self.source.undo_review()
        except LibrarianError as exc:
            self.post_message(DecisionFailed("undo", [], str(exc)))
            return
        self.post_message(DecisionUndone(nodes))

    # -- loading -----------------------------------------------------------------------

    def _filters(self) -> dict[str, Any]:
        def chosen(selector: str) -> str | None:
            value = self.query_one(selector, Select).value
            return value if isinstance(value, str) and value else None

        return {
            "status": chosen("#status-filter"),
            "type_": chosen("#type-filter"),
            "project": chosen("#project-filter"),
            "text": self.query_one("#node-filter", Input).value,
            "order": self._order,
            "by_session": self._by_session,
        }

    def reload(self, focus: str | None = None) -> None:
        """Fetch the rows for the current filters (the table keeps its rows until then)."""
        self._requested = self._filters()
        self.load_nodes(self._requested, focus, first_page=not self.query_one(NodeTable).rows)

    def _load_the_rest(self, filters: dict[str, Any], focus: str | None) -> None:
        if filters is self._requested:  # unless the filters changed meanwhile
            self.load_nodes(filters, focus, first_page=False)

    def _reload_if_changed(self) -> None:
        if self._filters() != self._requested:
            self.reload()

    def on_nodes_loaded(self, message: NodesLoaded) -> None:
        table = self.query_one(NodeTable)
        narrowed = self._requested is not None and (
            self._requested["status"] != "pending"
            or any(self._requested[k] for k in ("type_", "project", "text"))
        )
        table.empty_text = self._empty_text(narrowed)
        focus = message.focus or self._want_focus
        if message.sessions is not None or table.grouped:
            table.group_by_session(message.sessions)
        table.set_rows(message.rows, focus=focus)
        if focus and table.current and table.current.node_id == focus:
            self._want_focus = None
        self._total = message.total
        if not self._projects_asked:  # after the first rows: they go first
            self._projects_asked = True
            self.load_projects()
        self._show_current(0)
        self._update_status()
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
        self._counts = message.counts
        self._update_status()

    def on_projects_loaded(self, message: ProjectsLoaded) -> None:
        self._set_projects(message.projects)

    def _set_projects(self, projects: list[str]) -> None:
        select = self.query_one("#project-filter", Select)
        current = select.value
        self._projects = projects
        select.set_options([("any project", ALL), *((p, p) for p in projects)])
        if isinstance(current, str) and current in projects:
            select.value = current

    def on_node_context_loaded(self, message: NodeContextLoaded) -> None:
        self._contexts[message.node_id] = message.messages
        while len(self._contexts) > CONTEXT_CACHE:
            del self._contexts[next(iter(self._contexts))]
        detail = self.query_one(NodeDetailView)
        shown = detail.node
        if shown is not None and shown.node_id == message.node_id and detail.transcript is None:
            detail.show(shown, message.messages)

    # -- the detail pane ---------------------------------------------------------------

    def _show_current(self, delay: float) -> None:
        """Show the node under the cursor now; its transcript (unless known) after `delay`."""
        node = self.query_one(NodeTable).current
        detail = self.query_one(NodeDetailView)
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
        table = self.query_one(NodeTable)
        index = table.next_pending(self._open_statuses())
        return table.rows[index] if index is not None else None

    @on(NodeTable.Highlighted)
    def _highlighted(self, event: NodeTable.Highlighted) -> None:
        detail = self.query_one(NodeDetailView)
        if detail.node is not None and detail.node.node_id == event.node_id:
            return  # already shown (a decision moved the cursor and showed it at once)
        # The node itself is shown at once; its transcript when the cursor rests.
        self._show_current(CONTEXT_DELAY)
        self._bindings_follow()

    @on(NodeTable.MarksChanged)
    def _marks_changed(self) -> None:
        self._update_status()

    @on(NodeTable.Selected)
    def _selected(self) -> None:
        self.query_one(NodeDetailView).focus()

    # -- filters ---------------------------------------------------------------------

    @on(Input.Changed, "#node-filter")
    def _filter_changed(self) -> None:
        # Debounced: each read of a long queue takes a while, and only the last one counts.
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DELAY, self._reload_if_changed)

    @on(Input.Submitted, "#node-filter")
    def _filter_submitted(self) -> None:
        self.query_one(NodeTable).focus()

    @on(Select.Changed)
    def _select_changed(self) -> None:
        self._reload_if_changed()

    def _cycle(self, selector: str, values: list[str]) -> None:
        select = self.query_one(selector, Select)
        current = select.value if select.value in values else values[0]
        select.value = values[(values.index(str(current)) + 1) % len(values)]
        self._reload_if_changed()

    # -- decisions -------------------------------------------------------------------

    def _targets(self) -> list[str]:
        """The marked nodes, else the one under the cursor; nodes being written are left out."""
        table = self.query_one(NodeTable)
        busy = table.busy
        if table.marked:
            return [i for i in table.marked if i not in busy]
        current = table.current
        return [current.node_id] if current and current.node_id not in busy else []

    def _open_statuses(self) -> tuple[str, ...]:
        """The statuses of the rows that wait for a decision in this list: pending, and
        suppressed while the list shows them."""
        status = (self._requested or {}).get("status")
        return ("pending", SUPPRESSED) if status == SUPPRESSED else ("pending",)

    def _decide(self, action: str, node_ids: list[str], **values: str) -> None:
        table = self.query_one(NodeTable)
        table.set_busy(node_ids)
        current = table.current
        if action in ("approve", "reject", "unsuppress"):
            table.clear_marks()
            if current is not None and current.node_id in node_ids:
                table.move_to_next_pending(self._open_statuses())
                self._show_current(0)  # at once: no debounce after a decision
        self.write_decision(action, node_ids, values)

    def on_nodes_decided(self, message: NodesDecided) -> None:
        table = self.query_one(NodeTable)
        before = len(table.rows)
        table.update_nodes(message.nodes, keep_status=(self._requested or {}).get("status"))
        self._total -= before - len(table.rows)
        detail = self.query_one(NodeDetailView)
        for node in message.nodes:
            if detail.node is not None and detail.node.node_id == node.node_id:
                detail.show(node, self._contexts.get(node.node_id))
        if message.action == "unsuppress" and message.nodes:
            count = len(message.nodes)
            undo = self.key_for("review.undo")
            self.notify(
                f"promoted {count} node{'s' if count != 1 else ''} to pending"
                + (f" ({undo}: undo)" if undo else ""),
                timeout=4,
                markup=False,
            )
        self.load_counts()
        self._update_status()
        self._bindings_follow()

    def on_decision_failed(self, message: DecisionFailed) -> None:
        self.query_one(NodeTable).set_busy(message.node_ids, busy=False)
        if not message.error:
            return
        self.notify(
            f"{message.action} failed: {message.error}",
            severity="error",
            timeout=8,
            markup=False,  # the message can quote node text: untrusted
        )

    def on_decision_undone(self, message: DecisionUndone) -> None:
        if not message.nodes:
            self.notify("nothing to undo", timeout=3)
            return
        count = len(message.nodes)
        self.notify(f"undone: {count} node{'s' if count != 1 else ''} restored", timeout=3)
        self.reload(focus=message.nodes[0].node_id)
        self.load_counts()

    # -- actions -----------------------------------------------------------------------

    def _bindings_follow(self) -> None:
        """Grey the decision keys out (or back in) when the list empties (or fills), and
        promote when the selection holds no suppressed node (or does again)."""
        has_node = self.query_one(NodeTable).current is not None
        can_promote = bool(self._promotable())
        if (has_node, can_promote) != (self._had_node, self._could_promote):
            self._had_node, self._could_promote = has_node, can_promote
            self.refresh_bindings()

    def _promotable(self) -> list[str]:
        """The suppressed nodes among the targets (marked, else under the cursor)."""
        table = self.query_one(NodeTable)
        if not table.mark_count:  # the common case, on every cursor move: no scan of the rows
            node = table.current
            ok = node is not None and node.status == SUPPRESSED and node.node_id not in table.busy
            return [node.node_id] if ok and node is not None else []
        rows = (_row(table, i) for i in self._targets())
        return [n.node_id for n in rows if n is not None and n.status == SUPPRESSED]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None greys the binding out in the footer instead of hiding it.
        if action == "keep_literal":
            draft = self._draft_target() if self._mode == "drafts" else None
            return True if draft is not None and draft.parameters else None
        if self._mode != "nodes":
            if action in ("approve", "reject"):
                return True if self._decision_target() is not None else None
            return None if action in NODE_ONLY else True
        if action in ("approve", "reject", "scope", "edit", "skip"):
            return True if self.query_one(NodeTable).current is not None else None
        if action == "promote":
            return True if self._promotable() and self._team is None else None
        if action == "undo":  # decisions in the hub are history: decided again, not undone
            return True if self._team is None else None
        return True

    def _decision_target(self) -> object | None:
        """What approve / reject decide on in the drafts, relations or enrichments list."""
        if self._mode == "drafts":
            return self._draft_target()
        if self._mode == "relations":
            return self._proposal_target()
        return self._enrichment_target()

    def action_approve(self) -> None:
        if self._mode == "drafts":
            self._approve_draft()
            return
        if self._mode == "relations":
            self._accept_proposal()
            return
        if self._mode == "enrichments":
            self._approve_enrichment()
            return
        targets = self._targets()
        if targets:
            self._decide("approve", targets)
        else:
            self.app.bell()

    def action_reject(self) -> None:
        if self._mode == "drafts":
            self._reject_draft()
            return
        if self._mode == "relations":
            self._reject_proposal()
            return
        if self._mode == "enrichments":
            self._reject_enrichment()
            return
        targets = self._targets()
        if not targets:
            self.app.bell()
            return
        count = f"{len(targets)} nodes" if len(targets) > 1 else "this node"
        self._ask(
            TextPrompt(
                f"Reject {count}",
                placeholder="reason (optional)",
                hint="Enter rejects · Escape cancels",
            ),
            lambda reason: self._decide("reject", targets, reason=reason),
        )

    def action_promote(self) -> None:
        targets = self._promotable()
        if targets:
            self._decide("unsuppress", targets)
        else:
            self.app.bell()

    def action_edit(self) -> None:
        table = self.query_one(NodeTable)
        node = table.current
        if node is None or node.node_id in table.busy:
            self.app.bell()
            return
        self._ask(
            TextPrompt(
                "Edit the summary",
                value=neutralise(node.summary, keep_newlines=False),  # untrusted: no raw controls
                placeholder="one or two sentences",
                hint="Enter saves · Escape cancels",
            ),
            lambda summary: self._decide("edit", [node.node_id], summary=summary),
        )

    def action_scope(self) -> None:
        table = self.query_one(NodeTable)
        targets = self._targets()
        lead = table.current if table.current and table.current.node_id in targets else None
        if lead is None and targets:
            index = table.index_of(targets[0])
            lead = table.rows[index] if index is not None else None
        if lead is None:
            self.app.bell()
            return
        # Every target takes the scope the first one switches to, so a mixed selection ends
        # up the same.
        scope = SCOPES[(SCOPES.index(lead.scope) + 1) % len(SCOPES)] if lead.scope in SCOPES else ""
        self._decide("scope", targets, scope=scope)

    def action_undo(self) -> None:
        self.write_undo()

    def action_skip(self) -> None:
        if self.query_one(NodeTable).move_to_next_pending(self._open_statuses()):
            self._show_current(0)
        else:
            self.app.bell()

    def action_focus_filter(self) -> None:
        self.query_one("#node-filter", Input).focus()

    def action_focus_detail(self) -> None:
        self._detail_widget().focus()

    def action_focus_list(self) -> None:
        self._list_widget().focus()

    def _list_widget(self) -> NodeTable | DraftTable | ProposalTable | EnrichmentTable:
        if self._mode == "enrichments":
            return self.query_one(EnrichmentTable)
        if self._mode == "drafts":
            return self.query_one(DraftTable)
        if self._mode == "relations":
            return self.query_one(ProposalTable)
        return self.query_one(NodeTable)

    def _detail_widget(
        self,
    ) -> NodeDetailView | DraftDetailView | ProposalDetailView | EnrichmentDetailView:
        if self._mode == "enrichments":
            return self.query_one(EnrichmentDetailView)
        if self._mode == "drafts":
            return self.query_one(DraftDetailView)
        if self._mode == "relations":
            return self.query_one(ProposalDetailView)
        return self.query_one(NodeDetailView)

    def action_cycle_order(self) -> None:
        self._order = ORDERS[(ORDERS.index(self._order) + 1) % len(ORDERS)]
        self.reload()
        self._update_status()

    def action_toggle_group(self) -> None:
        self._by_session = not self._by_session
        self.reload()
        self._update_status()

    def action_cycle_type(self) -> None:
        self._cycle("#type-filter", [ALL, *NODE_TYPES])

    def action_cycle_status(self) -> None:
        self._cycle("#status-filter", [value for _, value in STATUSES])

    def action_toggle_project(self) -> None:
        select = self.query_one("#project-filter", Select)
        node = self.query_one(NodeTable).current
        if select.value != ALL or node is None:
            select.value = ALL
        else:
            if node.project not in self._projects:
                self._set_projects(sorted([*self._projects, node.project]))
            select.value = node.project
        self._reload_if_changed()

    def action_clear(self) -> None:
        if self._mode != "nodes":
            self._list_widget().focus()
            return
        field = self.query_one("#node-filter", Input)
        table = self.query_one(NodeTable)
        if field.has_focus and field.value:
            field.value = ""
        elif table.marked:
            table.clear_marks()
        else:
            table.focus()

    def show_node(self, node: Node) -> None:
        """Put the cursor on `node`, widening the filters when it is not listed."""
        if self._mode != "nodes":
            self._set_mode("nodes")
        table = self.query_one(NodeTable)
        table.focus()
        if table.move_to(node.node_id):
            self._show_current(0)
            return
        self._want_focus = node.node_id
        self.query_one("#node-filter", Input).value = ""
        self.query_one("#type-filter", Select).value = ALL
        self.query_one("#project-filter", Select).value = ALL
        status = node.status if node.status in {v for _, v in STATUSES} else ALL
        self.query_one("#status-filter", Select).value = status
        self.reload(focus=node.node_id)

    def action_show_suppressed(self) -> None:
        """List the nodes the knowledge bar kept out (again: the pending ones)."""
        select = self.query_one("#status-filter", Select)
        select.value = "pending" if select.value == SUPPRESSED else SUPPRESSED
        self._reload_if_changed()

    def can_promote(self) -> bool:
        """True when the selection holds a suppressed node (for the command palette)."""
        return self._mode == "nodes" and bool(self._promotable())

    def selection(self) -> tuple[Node | None, tuple[str, ...]]:
        """(the node under the cursor, the marked node ids) for the command palette."""
        table = self.query_one(NodeTable)
        return table.current, table.marked

    def run_command(self, action: str) -> None:
        """Run one of this screen's actions by name (used by the command palette)."""
        commands: dict[str, Callable[[], None]] = {
            "approve": self.action_approve,
            "reject": self.action_reject,
            "edit": self.action_edit,
            "scope": self.action_scope,
            "undo": self.action_undo,
            "promote": self.action_promote,
            "group": self.action_toggle_group,
            "suppressed": self.action_show_suppressed,
            "skip": self.action_skip,
            "mark_all": self.query_one(NodeTable).action_mark_all,
            "filter": self.action_focus_filter,
            "drafts": self.action_toggle_drafts,
            "relations": self.action_toggle_relations,
        }
        commands[action]()

    def _ask(self, prompt: TextPrompt, then: Callable[[str], None]) -> None:
        def answered(value: str | None) -> None:
            if value is not None:
                then(value)

        self.app.push_screen(prompt, answered)

    # -- drafts ------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """What the list shows: "nodes", "drafts" or "relations" (see `MODES`)."""
        return self._mode

    @property
    def drafts_mode(self) -> bool:
        """True while the list shows SKILL.md drafts instead of nodes."""
        return self._mode == "drafts"

    @property
    def relations_mode(self) -> bool:
        """True while the list shows relation proposals instead of nodes."""
        return self._mode == "relations"

    def current_draft(self) -> Draft | None:
        return self.query_one(DraftTable).current

    def current_proposal(self) -> RelationProposal | None:
        return self.query_one(ProposalTable).current

    def action_toggle_source(self) -> None:
        """Mine ⇄ team: the node list comes from this library or from the team hub."""
        if self._team is not None:
            self._team.close()
            self._team = None
        else:
            try:
                self._team = TeamQueue(configured_hub(self.library.config))
            except LibrarianError as exc:
                self.notify(str(exc), severity="warning", timeout=8, markup=False)
                return
        self.sub_title = (
            f"Review queue · team ({self._team.where})" if self._team else SUBTITLES["nodes"]
        )
        if self._mode != "nodes":
            self._set_mode("nodes")
        self._projects_asked = False
        self._contexts.clear()
        self.query_one(NodeTable).set_rows([])
        self.reload()
        self.load_counts()
        self.refresh_bindings()

    def on_unmount(self) -> None:
        if self._team is not None:
            self._team.close()

    def action_toggle_drafts(self) -> None:
        self._set_mode("nodes" if self._mode == "drafts" else "drafts")

    def action_toggle_relations(self) -> None:
        self._set_mode("nodes" if self._mode == "relations" else "relations")

    def action_toggle_enrichments(self) -> None:
        self._set_mode("nodes" if self._mode == "enrichments" else "enrichments")

    def _ask_reason(self, title: str, then: Callable[[str], None]) -> None:
        self._ask(
            TextPrompt(
                title, placeholder="reason (required)", hint="Enter rejects · Escape cancels"
            ),
            then,
        )

    def action_keep_literal(self) -> None:
        """Keep one of the draft's transient literals (or replace a kept one again)."""
        draft = self._draft_target() if self._mode == "drafts" else None
        if draft is None or not draft.parameters:
            self.app.bell()
            return
        shown = ", ".join(
            f"{r.parameter}{' (kept)' if r.kept else ''}" for r in draft.parameters[:6]
        )

        def keep(answer: str) -> None:
            wanted = answer.strip()
            found = [
                r
                for r in draft.parameters
                if wanted in (r.literal, r.parameter, r.parameter.strip("{}"))
            ]
            if not found:
                self.notify("no such literal or parameter: nothing was changed", timeout=5)
                return
            self.query_one(DraftTable).set_busy(draft.draft_id)
            self.refresh_bindings()
            action = "unkeep" if found[0].kept else "keep"
            self.write_draft(action, draft.draft_id, found[0].literal)

        self._ask(
            TextPrompt(
                f"Keep a literal of {one_line(draft.name, 60)}",
                placeholder=one_line(shown, 120),
                hint="a parameter ({host}) or its literal · a kept one is replaced again",
            ),
            keep,
        )

    def _set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown review list {mode!r}")
        self._mode = mode
        self.set_class(mode == "drafts", "-drafts")
        self.set_class(mode == "relations", "-relations")
        self.set_class(mode == "enrichments", "-enrichments")
        self.sub_title = SUBTITLES[mode]
        self._list_widget().focus()
        if mode == "drafts":
            self._show_draft()
            self.load_drafts()
        elif mode == "relations":
            self._show_proposal()
            self.load_proposals()
        elif mode == "enrichments":
            self._show_enrichment()
            self.load_enrichments()
        self._update_status()
        self.refresh_bindings()

    def _draft_target(self) -> Draft | None:
        """The draft under the cursor, unless a decision on it is being written."""
        table = self.query_one(DraftTable)
        draft = table.current
        return draft if draft is not None and draft.draft_id not in table.busy else None

    def _show_draft(self) -> None:
        draft = self.query_one(DraftTable).current
        check = self._draft_checks.get(draft.pattern_id) if draft else None
        self.query_one(DraftDetailView).show(draft, check, draft_diff(draft) if draft else "")

    def on_drafts_loaded(self, message: DraftsLoaded) -> None:
        self._drafts = message.drafts
        self._draft_checks = message.checks
        self.query_one(DraftTable).set_rows(message.drafts)
        self._show_draft()
        self._update_status()
        if self._mode == "drafts":
            self.refresh_bindings()

    @on(DraftTable.Highlighted)
    def _draft_highlighted(self) -> None:
        self._show_draft()
        self.refresh_bindings()

    @on(DraftTable.Selected)
    def _draft_selected(self) -> None:
        self.query_one(DraftDetailView).focus()

    def _approve_draft(self) -> None:
        draft = self._draft_target()
        if draft is None:
            self.app.bell()
            return
        self.query_one(DraftTable).set_busy(draft.draft_id)
        self.refresh_bindings()
        self.write_draft("approve", draft.draft_id)

    def _reject_draft(self) -> None:
        draft = self._draft_target()
        if draft is None:
            self.app.bell()
            return

        def reject(reason: str) -> None:
            self.query_one(DraftTable).set_busy(draft.draft_id)
            self.refresh_bindings()
            self.write_draft("reject", draft.draft_id, reason)

        self._ask(
            TextPrompt(
                f"Reject the draft {one_line(draft.name, 60)}",
                placeholder="reason (required)",
                hint="Enter rejects · Escape cancels",
            ),
            reject,
        )

    def on_draft_written(self, message: DraftWritten) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag); a draft whose
        # literal was kept stays pending: its row comes back as it is now.
        if message.action in ("keep", "unkeep"):
            self.query_one(DraftTable).set_busy(message.draft.draft_id, busy=False)
        self.tell_draft(message)
        self.load_drafts()

    def on_draft_failed(self, message: DraftFailed) -> None:
        self.query_one(DraftTable).set_busy(message.draft_id, busy=False)
        self.tell_draft(message)
        self.refresh_bindings()

    # -- relation proposals ------------------------------------------------------------

    def _proposal_target(self) -> RelationProposal | None:
        """The proposal under the cursor, unless a decision on it is being written."""
        table = self.query_one(ProposalTable)
        proposal = table.current
        if proposal is None or table.row_key(proposal) in table.busy:
            return None
        return proposal

    def _show_proposal(self) -> None:
        proposal = self.query_one(ProposalTable).current
        detail = self.query_one(ProposalDetailView)
        if proposal is None:
            detail.show(None)
            return
        pair = (proposal.source_name, proposal.target_name)
        known = self._shared.get(pair)
        detail.show(proposal, known)
        if known is None and self._mode == "relations":
            self.load_proposal_sessions(pair)

    def on_proposals_loaded(self, message: ProposalsLoaded) -> None:
        self._proposals = message.proposals
        self.query_one(ProposalTable).set_rows(message.proposals)
        self._show_proposal()
        self._update_status()
        if self._mode == "relations":
            self.refresh_bindings()

    def on_proposal_sessions_loaded(self, message: ProposalSessionsLoaded) -> None:
        self._shared[message.pair] = message.sessions
        while len(self._shared) > SESSIONS_CACHE:
            del self._shared[next(iter(self._shared))]
        detail = self.query_one(ProposalDetailView)
        shown = detail.proposal
        if shown is not None and (shown.source_name, shown.target_name) == message.pair:
            detail.show(shown, message.sessions)

    @on(ProposalTable.Highlighted)
    def _proposal_highlighted(self) -> None:
        self._show_proposal()
        self.refresh_bindings()

    @on(ProposalTable.Selected)
    def _proposal_selected(self) -> None:
        self.query_one(ProposalDetailView).focus()

    def _accept_proposal(self) -> None:
        proposal = self._proposal_target()
        if proposal is None:
            self.app.bell()
            return
        pair = (proposal.source_name, proposal.target_name)
        self.query_one(ProposalTable).set_busy(pair)
        self.refresh_bindings()
        self.write_proposal("accept", pair)

    def _reject_proposal(self) -> None:
        proposal = self._proposal_target()
        if proposal is None:
            self.app.bell()
            return
        pair = (proposal.source_name, proposal.target_name)

        def reject(reason: str) -> None:
            if not reason.strip():
                self.notify("a rejection needs a reason: nothing was changed", timeout=5)
                return
            self.query_one(ProposalTable).set_busy(pair)
            self.refresh_bindings()
            self.write_proposal("reject", pair, reason)

        self._ask(
            TextPrompt(
                f"Reject {pair_text(proposal, 60)}",
                placeholder="reason (required)",
                hint="Enter rejects · Escape cancels",
            ),
            reject,
        )

    def on_proposal_decided(self, message: ProposalDecided) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag).
        p = message.proposal
        pair = pair_text(p, 60)
        if message.action == "accept":
            text = f"accepted: {one_line(p.source_name, 60)} often_used_with"
            text += f" {one_line(p.target_name, 60)} (computed)"
        else:
            text = f"rejected the proposal {pair}"
        self.notify(text, timeout=5, markup=False)
        self.load_proposals()

    def on_proposal_failed(self, message: ProposalFailed) -> None:
        self.query_one(ProposalTable).set_busy(message.pair, busy=False)
        self.refresh_bindings()
        if message.error:
            self.notify(
                one_line(f"{message.action} failed: {message.error}", 300),
                severity="error",
                timeout=8,
                markup=False,  # the message quotes skill names: untrusted
            )

    # -- status line -------------------------------------------------------------------

    def _drafts_status(self) -> Text:
        count = len(self._drafts)
        text = Text()
        text.append(f"{count:,} draft{'s' if count != 1 else ''} waiting", style="bold")
        key = self.key_for("review.drafts")
        if self._mode == "drafts":
            pending = f"{self._counts.pending:,} pending " if self._counts else ""
            back = f"{key}: back to the {pending}nodes" if key else f"back to the {pending}nodes"
            text.append(f"  ·  {back}", style="dim")
        elif key:
            text.append(f" ({key})", style="dim")
        return text

    def _proposals_status(self) -> Text:
        count = len(self._proposals)
        text = Text()
        text.append(f"{count:,} relation{'s' if count != 1 else ''} proposed", style="bold")
        key = self.key_for("review.relations")
        if self._mode == "relations":
            pending = f"{self._counts.pending:,} pending " if self._counts else ""
            back = f"{key}: back to the {pending}nodes" if key else f"back to the {pending}nodes"
            text.append(f"  ·  {back}", style="dim")
        elif key:
            text.append(f" ({key})", style="dim")
        return text

    def _suppressed_status(self, count: int) -> Text:
        """` · 90 kept out (S: show)` from the pending list (the status key's next stop), the
        promote key while they are listed."""
        text = Text(f" · {count:,} kept out")
        hint = KEPT_OUT_HINTS.get((self._requested or {}).get("status") or ALL)
        key = self.key_for(hint[0]) if hint else ""
        if hint and key:
            text.append(f" ({key}: {hint[1]})", style="dim")
        return text

    def _update_status(self) -> None:
        if self._mode == "drafts":
            self.query_one("#review-status", Static).update(self._drafts_status())
            return
        if self._mode == "relations":
            self.query_one("#review-status", Static).update(self._proposals_status())
            return
        if self._mode == "enrichments":
            self.query_one("#review-status", Static).update(self._enrichments_status())
            return
        table = self.query_one(NodeTable)
        text = Text()
        if self._team is not None:
            text.append("team ", style="bold reverse")
            text.append(" ")
        if self._counts is not None:
            waiting = "waiting for you" if self._team is not None else "pending"
            text.append(f"{self._counts.pending:,} {waiting}", style="bold")
            if self._counts.suppressed:
                text.append_text(self._suppressed_status(self._counts.suppressed))
            text.append(f" · {self._counts.decided_today:,} decided today")
        if self._drafts:
            text.append(" · ")
            text.append_text(self._drafts_status())
        if self._proposals:
            text.append(" · ")
            text.append_text(self._proposals_status())
        if self._enrichments:
            text.append(" · ")
            text.append_text(self._enrichments_status())
        shown = len(table.rows)
        text.append(f"  ·  showing {shown:,}", style="dim")
        if self._total > shown:
            text.append(f" of {self._total:,}", style="dim")
        text.append(f" · {ORDER_TITLES[self._order]}", style="dim")
        if self._by_session:
            text.append(" by session", style="dim")
        if table.marked:
            text.append(f"  ·  {len(table.marked):,} marked", style="bold")
        self.query_one("#review-status", Static).update(text)


def _row(table: NodeTable, node_id: str) -> Node | None:
    index = table.index_of(node_id)
    return table.rows[index] if index is not None else None
