"""The review queue's enrichment proposals (`E`): thin skills' proposed frontmatter, each
shown with why it is proposed and the diff approval writes; approve writes the SKILL.md back
(a new version, served at once), reject keeps the reason."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.markup import escape

from app.messages import EnrichmentDecided, EnrichmentFailed, EnrichmentsLoaded
from app.screens.base import PaletteCommand
from app.screens.review.pane import ListPane
from store.errors import LibrarianError
from store.library import Library
from store.models.governance import Enrichment
from store.text import one_line
from widgets.enrichment_detail import EnrichmentDetailView
from widgets.enrichment_table import EnrichmentTable

NO_ENRICHMENTS = (
    "No enrichment proposals waiting. `librarian enrich` lists thin skills and proposes a"
    " rewrite of their frontmatter for review."
)


class EnrichmentsPane(ListPane[Enrichment, str]):
    """Enrichment proposals waiting for review."""

    MODE = "enrichments"
    SUBTITLE = "Review queue · enrichments"
    NOUN = "enrichment"
    STATE = "proposed"
    TOGGLE = "review.enrichments"
    BACK_COUNTS = False

    def __init__(self, library: Library, changed: Callable[[], None]) -> None:
        super().__init__(library, changed, id="enrichments-pane")

    def compose(self) -> ComposeResult:
        yield EnrichmentTable(id="enrichment-table")

    def on_mount(self) -> None:
        self.table().empty_text = NO_ENRICHMENTS

    def table(self) -> EnrichmentTable:
        return self.query_one(EnrichmentTable)

    def detail_widget(self) -> EnrichmentDetailView:
        return self.screen.query_one(EnrichmentDetailView)

    # -- workers -----------------------------------------------------------------------

    def reload(self) -> None:
        self.load_enrichments()

    @work(thread=True, exclusive=True, group="review-enrichments", exit_on_error=False)
    def load_enrichments(self) -> None:
        self.post_message(EnrichmentsLoaded(self.library.enrichments("pending")))

    @work(thread=True, group="review-enrichment-writes", exit_on_error=False)
    def write_enrichment(self, action: str, proposal_id: str, reason: str = "") -> None:
        try:
            if action == "approve":
                found = self.library.approve_enrichment(proposal_id)
            else:
                found = self.library.reject_enrichment(proposal_id, reason)
        except LibrarianError as exc:
            self.post_message(EnrichmentFailed(action, proposal_id, str(exc)))
            return
        self.post_message(EnrichmentDecided(action, found))

    # -- the list ----------------------------------------------------------------------

    def show_current(self) -> None:
        self.detail_widget().show(self.table().current)

    def on_enrichments_loaded(self, message: EnrichmentsLoaded) -> None:
        message.stop()
        self.set_items(message.proposals)

    @on(EnrichmentTable.Highlighted)
    def _highlighted(self) -> None:
        self.highlighted()

    @on(EnrichmentTable.Selected)
    def _selected(self) -> None:
        self.detail_widget().focus()

    # -- decisions ---------------------------------------------------------------------

    def action_approve(self) -> None:
        found = self.target()
        if found is None:
            self.app.bell()
            return
        self.busy(found.proposal_id)
        self.write_enrichment("approve", found.proposal_id)

    def action_reject(self) -> None:
        found = self.target()
        if found is None:
            self.app.bell()
            return

        def reject(reason: str) -> None:
            if not reason.strip():
                self.notify("a rejection needs a reason: nothing was changed", timeout=5)
                return
            self.busy(found.proposal_id)
            self.write_enrichment("reject", found.proposal_id, reason)

        self.ask_reason(f"Reject the enrichment of {one_line(found.skill_name, 60)}", reject)

    def on_enrichment_decided(self, message: EnrichmentDecided) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag).
        message.stop()
        name = one_line(message.proposal.skill_name, 80)
        text = (
            f"approved: {name}'s SKILL.md rewritten (a new version, served at once)"
            if message.action == "approve"
            else f"rejected the enrichment of {name}"
        )
        self.notify(text, timeout=5, markup=False)
        self.load_enrichments()

    def on_enrichment_failed(self, message: EnrichmentFailed) -> None:
        message.stop()
        self.busy(message.proposal_id, busy=False)
        self.tell_failure(message.action, message.error)
        self.load_enrichments()

    def palette_commands(self) -> list[PaletteCommand]:
        """Decisions on the enrichment proposal under the cursor."""
        found = self.table().current
        commands: list[PaletteCommand] = [
            ("review: show the nodes", "toggle_enrichments", "Back to the pending nodes")
        ]
        if found is not None:
            name = one_line(found.skill_name, 60)
            about = escape(f"{name} · v{found.version_no}")
            commands += [
                (f"enrichment: approve {name}", "approve", about),
                (f"enrichment: reject {name}…", "reject", about),
            ]
        return commands
