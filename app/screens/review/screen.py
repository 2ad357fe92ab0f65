"""The review queue: decide on what waits for a reviewer, with its evidence on screen.

Four lists, one shown at a time, each a pane (`app.screens.review.pane`): pending reasoning
nodes (the default), the SKILL.md drafts graduation made from patterns (`D`), the computed
relation proposals (`C`) and the enrichment proposals for thin skills (`E`). The keys are the
screen's, so they work with the focus on the detail too; approve and reject mean "decide on
what the shown list has under the cursor", and each pane says which other keys apply.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Header, Static

from app.live import LibraryChanged
from app.screens.base import LibrarianScreen, PaletteCommand
from app.screens.review.drafts import DraftsPane
from app.screens.review.enrichments import EnrichmentsPane
from app.screens.review.filters import NodeFilters
from app.screens.review.nodes import NodesPane
from app.screens.review.pane import DecisionPane, ListPane
from app.screens.review.proposals import ProposalsPane
from store.library import Library
from store.models import Draft, Node, RelationProposal
from store.models.governance import Enrichment
from store.team.review import TeamQueue
from widgets.draft_detail import DraftDetailView
from widgets.enrichment_detail import EnrichmentDetailView
from widgets.keys import bind
from widgets.node_detail import NodeDetailView
from widgets.proposal_detail import ProposalDetailView

#: The review queue's lists: pending nodes, SKILL.md drafts, relation proposals, enrichment
#: proposals for thin skills.
MODES = ("nodes", "drafts", "relations", "enrichments")
#: Actions a pane answers (the others are the screen's, always on).
PANE_ACTIONS = NodesPane.ACTIONS | {"approve", "reject", "keep_literal"}


class ReviewScreen(LibrarianScreen):
    """Pending nodes in a table, the selected one's evidence and transcript below it.

    | Key | Action |
    | --- | --- |
    | a / x / e / s | approve / reject (asks a reason) / edit the summary / switch scope |
    | p | promote a suppressed node (or every marked one) to pending |
    | u | undo your last decision (a whole multi-selection at once) |
    | n | skip to the next pending node |
    | m, ctrl+a | mark a node, mark all listed (decisions apply to every marked node) |
    | /, f, S, P, o | filter by words, type, status, this project; change the order |
    | G | group the rows by session (again: one list) |
    | d, esc | to the detail pane; clear the filters or the marks (again: back to the list) |
    | D | switch between pending nodes and drafted SKILL.md files (a / x decide on drafts) |
    | C | switch between pending nodes and relation proposals (a / x decide on proposals) |
    | E | switch between pending nodes and enrichment proposals (a / x decide on them) |
    | T | mine ⇄ team: nodes and drafts from the team hub (a / x / e decide there) |
    | K | in drafts: keep a transient literal on purpose (again: replace it again) |

    The footer shows only the keys that apply to the list shown (`check_action`: False
    hides a key that has no meaning there, None greys out one that waits for a selection).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # The footer shows the decisions that apply to the shown list (`check_action`); skip,
        # the filters and the lists are on `?` and in the palette.
        bind(
            "approve",
            "approve",
            "Approve",
            id="review.approve",
            tooltip="Approve what is under the cursor (or every marked node), then the next",
        ),
        bind(
            "reject",
            "reject",
            "Reject",
            id="review.reject",
            tooltip="Reject what is under the cursor (or every marked node), with a reason",
        ),
        bind("edit", "edit", "Edit", id="review.edit", tooltip="Rewrite the node's summary"),
        bind(
            "scope",
            "scope",
            "Scope",
            id="review.scope",
            tooltip="Switch the scope between PROJECT and TEAM (every marked node follows)",
        ),
        bind(
            "promote",
            "promote",
            "Promote",
            id="review.promote",
            tooltip="Put the suppressed node (or every marked one) in the pending queue",
        ),
        bind(
            "keep",
            "keep_literal",
            "Keep literal",
            id="review.keep_literal",
            tooltip="Keep one of the draft's transient literals on purpose (again: replace it)",
        ),
        bind("undo", "undo", "Undo", id="review.undo", tooltip="Undo your last decision"),
        bind(
            "skip",
            "skip",
            "Skip",
            show=False,  # seven keys fit the footer: `?` lists the others
            id="review.skip",
            tooltip="Leave this node pending and go to the next pending one",
        ),
        bind(
            "filter",
            "focus_filter",
            "Filter",
            show=False,
            id="review.filter",
            tooltip="Filter by words in the summary or evidence",
        ),
        bind(
            "order",
            "cycle_order",
            "Order",
            show=False,
            id="review.order",
            tooltip="Change the order (best first: informativeness × confidence)",
        ),
        bind(
            "group",
            "toggle_group",
            "Group",
            show=False,
            id="review.group",
            tooltip="Group the rows by session, best first inside each (again: one list)",
        ),
        bind(
            "type",
            "cycle_type",
            "Type",
            show=False,
            id="review.type",
            tooltip="Show only one node type (again: the next type, then all)",
        ),
        bind(
            "status",
            "cycle_status",
            "Status",
            show=False,
            id="review.status",
            tooltip="Show pending, suppressed (kept out), approved, rejected or all nodes",
        ),
        bind(
            "project",
            "toggle_project",
            "Project",
            show=False,
            id="review.project",
            tooltip="Show only this node's project (again: every project)",
        ),
        bind(
            "detail",
            "focus_detail",
            "Detail",
            show=False,
            id="review.detail",
            tooltip="Scroll the evidence and transcript",
        ),
        bind(
            "clear",
            "clear",
            "Clear",
            show=False,
            id="review.clear",
            tooltip="Clear the filters and the marks (again: back to the list)",
        ),
        bind(
            "drafts",
            "toggle_drafts",
            "Drafts",
            show=False,
            id="review.drafts",
            tooltip="Switch between pending nodes and SKILL.md drafts waiting for review",
        ),
        bind(
            "relations",
            "toggle_relations",
            "Relations",
            show=False,
            id="review.relations",
            tooltip="Switch between pending nodes and relations proposed from co-usage",
        ),
        bind(
            "enrichments",
            "toggle_enrichments",
            "Enrichments",
            show=False,
            id="review.enrichments",
            tooltip="Switch between pending nodes and proposed rewrites of thin skills",
        ),
        bind(
            "source",
            "toggle_source",
            "Mine/team",
            show=False,
            id="review.source",
            tooltip="Switch the queue between your library (mine) and the team hub's staged"
            " items (team)",
        ),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="review")
        self.library = library
        self.nodes = NodesPane(library, self._update_status)
        self.drafts = DraftsPane(library, self._update_status)
        self.proposals = ProposalsPane(library, self._update_status)
        self.enrichments = EnrichmentsPane(library, self._update_status)
        #: The lists other than the nodes, in the status line's order.
        self.lists: tuple[ListPane[Any, Any], ...] = (
            self.drafts,
            self.proposals,
            self.enrichments,
        )
        self.pane: DecisionPane = self.nodes
        self.nodes.shown = True

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review-body"):
            yield NodeFilters()
            yield self.nodes
            yield from self.lists
            yield Static(id="review-status")
            yield NodeDetailView(id="node-detail")
            yield DraftDetailView(id="draft-detail")
            yield ProposalDetailView(id="proposal-detail")
            yield EnrichmentDetailView(id="enrichment-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = NodesPane.SUBTITLE
        self.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.nodes.start()

    def _bindings_changed(self, _screen: object) -> None:
        counts = self.nodes.counts
        kept_out = counts is not None and counts.suppressed
        if kept_out or any(p.items for p in self.lists):  # the status line names keys
            self._update_status()

    def on_screen_resume(self) -> None:
        # Shown (again): a pattern may have been drafted on the Patterns screen meanwhile,
        # an ingest may have proposed relations, `librarian enrich` proposed rewrites.
        for pane in self.lists:
            pane.reload()

    def library_changed(self, message: LibraryChanged) -> None:
        """Decided elsewhere, or sessions ingested by the hook worker: the queue as it is
        now, the cursor kept on its node."""
        self.on_screen_resume()
        current = self.nodes.table().current
        self.nodes.reload(current.node_id if current else None)
        self.nodes.load_counts()

    # -- the lists ---------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """What the list shows: "nodes", "drafts", "relations" or "enrichments"."""
        return self.pane.MODE

    @property
    def drafts_mode(self) -> bool:
        """True while the list shows SKILL.md drafts instead of nodes."""
        return self.pane is self.drafts

    @property
    def relations_mode(self) -> bool:
        """True while the list shows relation proposals instead of nodes."""
        return self.pane is self.proposals

    def _set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown review list {mode!r}")
        self.pane.shown = False
        self.pane = next(p for p in (self.nodes, *self.lists) if mode == p.MODE)
        self.pane.shown = True
        for other in MODES[1:]:
            self.set_class(mode == other, f"-{other}")
        self.sub_title = self.pane.subtitle()
        self.pane.show()
        self._update_status()
        self.refresh_bindings()

    def _toggle(self, mode: str) -> None:
        self._set_mode("nodes" if self.mode == mode else mode)

    def action_toggle_drafts(self) -> None:
        self._toggle("drafts")

    def action_toggle_relations(self) -> None:
        self._toggle("relations")

    def action_toggle_enrichments(self) -> None:
        self._toggle("enrichments")

    def action_toggle_source(self) -> None:
        """Mine ⇄ team: the nodes and the drafts come from this library or from the team hub
        (the other lists are this library's only: the nodes are shown instead)."""
        if not self.nodes.action_toggle_source():
            return
        source = self.nodes.source
        team = source.conninfo if isinstance(source, TeamQueue) else None
        self.drafts.set_team(TeamQueue(team, kind="draft") if team else None)
        if self.pane is not self.nodes and self.pane is not self.drafts:
            self._set_mode("nodes")
        self.sub_title = self.pane.subtitle()
        self._update_status()
        self.refresh_bindings()

    def show_node(self, node: Node) -> None:
        """Put the cursor on `node`, widening the filters when it is not listed."""
        if self.pane is not self.nodes:
            self._set_mode("nodes")
        self.nodes.show_node(node)

    # -- keys --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False hides a key the shown list has no use for; None greys it out.
        return self.pane.can(action) if action in PANE_ACTIONS else True

    def action_approve(self) -> None:
        self.pane.run("approve")

    def action_reject(self) -> None:
        self.pane.run("reject")

    def action_keep_literal(self) -> None:
        self.drafts.action_keep_literal()

    def action_focus_detail(self) -> None:
        self.pane.detail_widget().focus()

    def action_focus_list(self) -> None:
        self.pane.list_widget().focus()

    def action_clear(self) -> None:
        if self.pane is self.nodes:
            self.nodes.action_clear()
        else:
            self.action_focus_list()

    def action_promote(self) -> None:
        self.nodes.action_promote()

    def action_edit(self) -> None:
        if self.pane is self.drafts:
            self.drafts.action_edit()  # a team draft's summary, in the hub
        else:
            self.nodes.action_edit()

    def action_scope(self) -> None:
        self.nodes.action_scope()

    def action_undo(self) -> None:
        self.nodes.action_undo()

    def action_skip(self) -> None:
        self.nodes.action_skip()

    def action_focus_filter(self) -> None:
        self.nodes.action_focus_filter()

    def action_cycle_order(self) -> None:
        self.nodes.action_cycle_order()

    def action_toggle_group(self) -> None:
        self.nodes.action_toggle_group()

    def action_cycle_type(self) -> None:
        self.nodes.action_cycle_type()

    def action_cycle_status(self) -> None:
        self.nodes.action_cycle_status()

    def action_toggle_project(self) -> None:
        self.nodes.action_toggle_project()

    def action_show_suppressed(self) -> None:
        self.nodes.action_show_suppressed()

    def action_mark_all(self) -> None:
        self.nodes.action_mark_all()

    @on(NodeFilters.Changed)
    def _filters_changed(self) -> None:
        self.nodes.reload_if_changed()

    @on(NodeFilters.Submitted)
    def _filter_submitted(self) -> None:
        self.nodes.table().focus()

    # -- for the command palette and the tests ---------------------------------------

    def palette_commands(self) -> list[PaletteCommand]:
        return self.pane.palette_commands()

    def can_promote(self) -> bool:
        """True when the selection holds a suppressed node."""
        return self.pane is self.nodes and self.nodes.can_promote()

    def selection(self) -> tuple[Node | None, tuple[str, ...]]:
        """(the node under the cursor, the marked node ids)."""
        return self.nodes.selection()

    def current_draft(self) -> Draft | None:
        return self.drafts.table().current

    def current_proposal(self) -> RelationProposal | None:
        return self.proposals.table().current

    def current_enrichment(self) -> Enrichment | None:
        return self.enrichments.table().current

    # -- status line -------------------------------------------------------------------

    def _update_status(self) -> None:
        counts = self.nodes.counts
        for pane in self.lists:
            pane.pending = counts.pending if counts is not None else None
        if self.pane is self.nodes:
            text: Text = self.nodes.status_with([p.status() for p in self.lists if p.items])
        else:
            text = self.pane.status()
        self.query_one("#review-status", Static).update(text)
