"""The review queue's list of enrichment proposals (`E`): thin skills' proposed frontmatter,
each shown with why it is proposed and the diff approval writes; approve writes the SKILL.md
back (a new version, served at once), reject keeps the reason.

`ReviewScreen` is an `EnrichmentPane`: the workers, message handlers and decisions live here,
over the screen's `EnrichmentTable` and `EnrichmentDetailView` (issue 12 turns the review
screen into panes; this is one of them in waiting)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work

from app.messages import EnrichmentDecided, EnrichmentFailed, EnrichmentsLoaded
from app.screens.base import LibrarianScreen
from store.errors import LibrarianError
from store.models.governance import Enrichment
from store.text import one_line
from widgets.enrichment_detail import EnrichmentDetailView
from widgets.enrichment_table import EnrichmentTable

if TYPE_CHECKING:
    from store.library import Library

NO_ENRICHMENTS = (
    "No enrichment proposals waiting. `librarian enrich` lists thin skills and proposes a"
    " rewrite of their frontmatter for review."
)


class EnrichmentPane(LibrarianScreen):
    """Enrichment proposals in the review queue (`ReviewScreen` is one)."""

    library: Library
    _enrichments: list[Enrichment]

    @property
    def mode(self) -> str:
        """What the review list shows (the screen says)."""
        raise NotImplementedError

    def _update_status(self) -> None:
        raise NotImplementedError

    def _ask_reason(self, title: str, then: Callable[[str], None]) -> None:
        """Ask a reason (the screen's prompt), then call `then` with it."""
        raise NotImplementedError

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

    def current_enrichment(self) -> Enrichment | None:
        current: Enrichment | None = self.query_one(EnrichmentTable).current
        return current

    def _enrichment_target(self) -> Enrichment | None:
        """The proposal under the cursor, unless a decision on it is being written."""
        table = self.query_one(EnrichmentTable)
        found: Enrichment | None = table.current
        return found if found is not None and found.proposal_id not in table.busy else None

    def _show_enrichment(self) -> None:
        self.query_one(EnrichmentDetailView).show(self.query_one(EnrichmentTable).current)

    def on_enrichments_loaded(self, message: EnrichmentsLoaded) -> None:
        self._enrichments = message.proposals
        self.query_one(EnrichmentTable).set_rows(message.proposals)
        self._show_enrichment()
        self._update_status()
        if self.mode == "enrichments":
            self.refresh_bindings()

    @on(EnrichmentTable.Highlighted)
    def _enrichment_highlighted(self) -> None:
        self._show_enrichment()
        self.refresh_bindings()

    @on(EnrichmentTable.Selected)
    def _enrichment_selected(self) -> None:
        self.query_one(EnrichmentDetailView).focus()

    def _approve_enrichment(self) -> None:
        found = self._enrichment_target()
        if found is None:
            self.app.bell()
            return
        self.query_one(EnrichmentTable).set_busy(found.proposal_id)
        self.refresh_bindings()
        self.write_enrichment("approve", found.proposal_id)

    def _reject_enrichment(self) -> None:
        found = self._enrichment_target()
        if found is None:
            self.app.bell()
            return

        def reject(reason: str) -> None:
            if not reason.strip():
                self.notify("a rejection needs a reason: nothing was changed", timeout=5)
                return
            self.query_one(EnrichmentTable).set_busy(found.proposal_id)
            self.refresh_bindings()
            self.write_enrichment("reject", found.proposal_id, reason)

        self._ask_reason(f"Reject the enrichment of {one_line(found.skill_name, 60)}", reject)

    def on_enrichment_decided(self, message: EnrichmentDecided) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag).
        name = one_line(message.proposal.skill_name, 80)
        text = (
            f"approved: {name}'s SKILL.md rewritten (a new version, served at once)"
            if message.action == "approve"
            else f"rejected the enrichment of {name}"
        )
        self.notify(text, timeout=5, markup=False)
        self.load_enrichments()

    def on_enrichment_failed(self, message: EnrichmentFailed) -> None:
        self.query_one(EnrichmentTable).set_busy(message.proposal_id, busy=False)
        self.refresh_bindings()
        if message.error:
            self.notify(
                one_line(f"{message.action} failed: {message.error}", 300),
                severity="error",
                timeout=8,
                markup=False,  # the message quotes skill names: untrusted
            )
        self.load_enrichments()

    def _enrichments_status(self) -> Text:
        count = len(self._enrichments)
        text = Text()
        text.append(f"{count:,} enrichment{'s' if count != 1 else ''} proposed", style="bold")
        key = self.key_for("review.enrichments")
        if self.mode == "enrichments":
            back = f"{key}: back to the nodes" if key else "back to the nodes"
            text.append(f"  ·  {back}", style="dim")
        elif key:
            text.append(f" ({key})", style="dim")
        return text
