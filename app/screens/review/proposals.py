"""The review queue's relation proposals (`R`): two skills often used together with no
relation between them, each with the sessions they shared. Approve adds the `often_used_with`
relation; reject (with a reason) keeps the pair from being proposed again."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.markup import escape
from textual.worker import get_current_worker

from app.messages import ProposalDecided, ProposalFailed, ProposalSessionsLoaded, ProposalsLoaded
from app.screens.base import PaletteCommand
from app.screens.review.pane import ListPane
from store.errors import LibrarianError
from store.library import Library
from store.models import RelationProposal, SharedSession
from store.text import one_line
from widgets.proposal_detail import ProposalDetailView
from widgets.proposal_table import ProposalTable, pair_text

NO_PROPOSALS = (
    "No relation proposals waiting. Skills used together in enough sessions, with no relation"
    " between them, are proposed here after an ingest (or `librarian proposals compute`)."
)
#: Proposals' shared sessions kept in memory.
SESSIONS_CACHE = 64

Pair = tuple[str, str]


class ProposalsPane(ListPane[RelationProposal, Pair]):
    """Relations proposed from co-usage, waiting for review."""

    MODE = "relations"
    SUBTITLE = "Review queue · relations"
    NOUN = "relation"
    STATE = "proposed"
    TOGGLE = "review.relations"

    def __init__(self, library: Library, changed: Callable[[], None]) -> None:
        super().__init__(library, changed, id="proposals-pane")
        self._shared: dict[Pair, list[SharedSession]] = {}

    def compose(self) -> ComposeResult:
        yield ProposalTable(id="proposal-table")

    def on_mount(self) -> None:
        self.table().empty_text = NO_PROPOSALS

    def table(self) -> ProposalTable:
        return self.query_one(ProposalTable)

    def detail_widget(self) -> ProposalDetailView:
        return self.screen.query_one(ProposalDetailView)

    # -- workers -----------------------------------------------------------------------

    def reload(self) -> None:
        self.load_proposals()

    @work(thread=True, exclusive=True, group="review-proposals", exit_on_error=False)
    def load_proposals(self) -> None:
        proposals = self.library.relation_proposals("pending")
        if not get_current_worker().is_cancelled:
            self.post_message(ProposalsLoaded(proposals))

    @work(thread=True, exclusive=True, group="review-proposal-sessions", exit_on_error=False)
    def load_proposal_sessions(self, pair: Pair) -> None:
        try:
            sessions = self.library.proposal_sessions(*pair)
        except LibrarianError:  # decided and gone meanwhile: the next load drops the row
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ProposalSessionsLoaded(pair, sessions))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_proposal(self, action: str, pair: Pair, reason: str = "") -> None:
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

    # -- the list ----------------------------------------------------------------------

    def show_current(self) -> None:
        proposal = self.table().current
        detail = self.detail_widget()
        if proposal is None:
            detail.show(None)
            return
        pair = (proposal.source_name, proposal.target_name)
        known = self._shared.get(pair)
        detail.show(proposal, known)
        if known is None and self.shown:
            self.load_proposal_sessions(pair)

    def on_proposals_loaded(self, message: ProposalsLoaded) -> None:
        message.stop()
        self.set_items(message.proposals)

    def on_proposal_sessions_loaded(self, message: ProposalSessionsLoaded) -> None:
        message.stop()
        self._shared[message.pair] = message.sessions
        while len(self._shared) > SESSIONS_CACHE:
            del self._shared[next(iter(self._shared))]
        detail = self.detail_widget()
        shown = detail.proposal
        if shown is not None and (shown.source_name, shown.target_name) == message.pair:
            detail.show(shown, message.sessions)

    @on(ProposalTable.Highlighted)
    def _highlighted(self) -> None:
        self.highlighted()

    @on(ProposalTable.Selected)
    def _selected(self) -> None:
        self.detail_widget().focus()

    # -- decisions ---------------------------------------------------------------------

    def action_approve(self) -> None:
        proposal = self.target()
        if proposal is None:
            self.app.bell()
            return
        pair = (proposal.source_name, proposal.target_name)
        self.busy(pair)
        self.write_proposal("accept", pair)

    def action_reject(self) -> None:
        proposal = self.target()
        if proposal is None:
            self.app.bell()
            return
        pair = (proposal.source_name, proposal.target_name)

        def reject(reason: str) -> None:
            if not reason.strip():
                self.notify("a rejection needs a reason: nothing was changed", timeout=5)
                return
            self.busy(pair)
            self.write_proposal("reject", pair, reason)

        self.ask_reason(f"Reject {pair_text(proposal, 60)}", reject)

    def on_proposal_decided(self, message: ProposalDecided) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag).
        message.stop()
        p = message.proposal
        if message.action == "accept":
            text = f"accepted: {one_line(p.source_name, 60)} often_used_with"
            text += f" {one_line(p.target_name, 60)} (computed)"
        else:
            text = f"rejected the proposal {pair_text(p, 60)}"
        self.notify(text, timeout=5, markup=False)
        self.load_proposals()

    def on_proposal_failed(self, message: ProposalFailed) -> None:
        message.stop()
        self.busy(message.pair, busy=False)
        self.tell_failure(message.action, message.error)

    def palette_commands(self) -> list[PaletteCommand]:
        """Decisions on the relation proposal under the cursor."""
        proposal = self.table().current
        commands: list[PaletteCommand] = [
            ("review: show the nodes", "toggle_relations", "Back to the pending nodes")
        ]
        if proposal is not None:
            pair = f"{one_line(proposal.source_name, 40)} ↔ {one_line(proposal.target_name, 40)}"
            about = escape(f"{pair} · {proposal.shared} shared sessions")
            commands += [
                (f"relation: accept {pair}", "approve", about),
                (f"relation: reject {pair}…", "reject", about),
            ]
        return commands
