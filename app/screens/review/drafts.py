"""The review queue's SKILL.md drafts (`D`): the drafts graduation made from patterns, each
with the check of its pattern and the diff of its transient literals. Approve writes the
SKILL.md and installs the skill as proposed; reject keeps the reason; `L` keeps one literal
on purpose (again: replaces it by its parameter again).

With the queue's source on "team" (`T`), the pane lists the team hub's staged drafts instead:
approve, reject (with a reason) and edit (the team's title for the draft) are decisions in the
hub, recorded there with the reviewer and the time; the database refuses what a member may not
do. An approved team draft becomes a skill under the team skills root at the next pull."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.markup import escape
from textual.worker import get_current_worker

from app.dialogs.text_prompt import TextPrompt
from app.messages import DraftFailed, DraftsLoaded, DraftWritten
from app.screens.base import PaletteCommand, decide_draft, tell_draft
from app.screens.review.pane import ListPane
from store.errors import LibrarianError
from store.library import Library
from store.models import Draft, GraduationCheck
from store.patterns.literals import draft_diff
from store.team.review import TeamQueue
from store.text import neutralise, one_line
from widgets.draft_detail import DraftDetailView
from widgets.draft_table import DraftTable

NO_DRAFTS = "No drafts waiting. Eligible patterns are graduated on the Patterns screen."
NO_TEAM_DRAFTS = "No team drafts waiting for you in the hub."
#: What a decision on a team draft did, for the notification.
TEAM_DONE = {
    "approve": "approved the team draft {name} in the hub: it is installed at the next pull",
    "reject": "rejected the team draft {name} in the hub",
    "edit": "edited the team draft {name}'s summary in the hub",
}


class DraftsPane(ListPane[Draft, str]):
    """SKILL.md drafts waiting for review."""

    MODE = "drafts"
    SUBTITLE = "Review queue · drafts"
    NOUN = "draft"
    STATE = "waiting"
    TOGGLE = "review.drafts"

    def __init__(self, library: Library, changed: Callable[[], None]) -> None:
        super().__init__(library, changed, id="drafts-pane")
        self._checks: dict[str, GraduationCheck] = {}
        #: The team hub's drafts while the source is "team" (None: this library's own).
        self._team: TeamQueue | None = None

    def set_team(self, queue: TeamQueue | None) -> None:
        """Switch the source: the hub's drafts (`queue`, made with kind="draft") or this
        library's (None); the list is read again."""
        if self._team is not None:
            self._team.close()
        self._team = queue
        self._checks = {}
        self.table().empty_text = NO_TEAM_DRAFTS if queue is not None else NO_DRAFTS
        self.set_items([])
        self.reload()

    def subtitle(self) -> str:
        if self._team is not None:
            return f"{self.SUBTITLE} · team ({self._team.where})"
        return self.SUBTITLE

    def on_unmount(self) -> None:
        if self._team is not None:
            self._team.close()

    def compose(self) -> ComposeResult:
        yield DraftTable(id="draft-table")

    def on_mount(self) -> None:
        self.table().empty_text = NO_DRAFTS

    def table(self) -> DraftTable:
        return self.query_one(DraftTable)

    def detail_widget(self) -> DraftDetailView:
        return self.screen.query_one(DraftDetailView)

    def can(self, action: str) -> bool | None:
        team = self._team is not None
        if action == "keep_literal":
            if team:
                return False  # the hub's drafts are decided as staged, not rewritten here
            draft = self.target()
            return True if draft is not None and draft.parameters else None
        if action == "edit":
            if not team:
                return False  # only a team draft's summary is edited (in the hub)
            return True if self.target() is not None else None
        return super().can(action)

    # -- workers -----------------------------------------------------------------------

    def reload(self) -> None:
        self.load_drafts()

    @work(thread=True, exclusive=True, group="review-drafts", exit_on_error=False)
    def load_drafts(self) -> None:
        """The pending drafts, and the check of the pattern each was drafted from (the team's:
        what waits for this reviewer in the hub, without checks: the patterns are not here)."""
        team = self._team
        if team is not None:
            found = team.drafts(status="pending")
            if not get_current_worker().is_cancelled and team is self._team:
                self.post_message(DraftsLoaded(found, {}))
            return
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

    @work(thread=True, group="review-write", exit_on_error=False)
    def decide_team(self, action: str, draft_id: str, text: str = "") -> None:
        """approve | reject (`text`: the reason) | edit (`text`: the summary), in the hub."""
        team = self._team
        if team is None:
            return
        try:
            values = {"summary": text} if action == "edit" else {"reason": text}
            team.review(action, [draft_id], **values)
            self.post_message(DraftWritten(action, team.draft(draft_id)))
        except LibrarianError as exc:
            self.post_message(DraftFailed(action, draft_id, str(exc)))
        except Exception:
            self.post_message(DraftFailed(action, draft_id, ""))  # reported as a worker error
            raise

    def _decide(self, action: str, draft_id: str, text: str = "") -> None:
        self.busy(draft_id)
        if self._team is not None:
            self.decide_team(action, draft_id, text)
        else:
            self.write_draft(action, draft_id, text)

    # -- the list ----------------------------------------------------------------------

    def show_current(self) -> None:
        draft = self.table().current
        check = self._checks.get(draft.pattern_id) if draft else None
        self.detail_widget().show(draft, check, draft_diff(draft) if draft else "")

    def on_drafts_loaded(self, message: DraftsLoaded) -> None:
        message.stop()
        self._checks = message.checks
        self.set_items(message.drafts)

    @on(DraftTable.Highlighted)
    def _highlighted(self) -> None:
        self.highlighted()

    @on(DraftTable.Selected)
    def _selected(self) -> None:
        self.detail_widget().focus()

    # -- decisions ---------------------------------------------------------------------

    def action_approve(self) -> None:
        draft = self.target()
        if draft is None:
            self.app.bell()
            return
        self._decide("approve", draft.draft_id)

    def action_reject(self) -> None:
        draft = self.target()
        if draft is None:
            self.app.bell()
            return

        def reject(reason: str) -> None:
            self._decide("reject", draft.draft_id, reason)

        self.ask_reason(f"Reject the draft {one_line(draft.name, 60)}", reject)

    def action_edit(self) -> None:
        """Rewrite a team draft's summary in the hub (its title for the team)."""
        draft = self.target()
        team = self._team
        if draft is None or team is None:
            self.app.bell()
            return
        title = team.titles.get(draft.draft_id, draft.name)
        self.ask(
            TextPrompt(
                f"Edit the team draft {one_line(draft.name, 60)}",
                value=neutralise(title, keep_newlines=False),  # untrusted: no raw controls
                placeholder="one or two sentences",
                hint="Enter saves in the hub · Escape cancels",
            ),
            lambda summary: self._decide("edit", draft.draft_id, summary),
        )

    def action_keep_literal(self) -> None:
        """Keep one of the draft's transient literals (or replace a kept one again)."""
        draft = self.target()
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
            self.busy(draft.draft_id)
            action = "unkeep" if found[0].kept else "keep"
            self.write_draft(action, draft.draft_id, found[0].literal)

        self.ask(
            TextPrompt(
                f"Keep a literal of {one_line(draft.name, 60)}",
                placeholder=one_line(shown, 120),
                hint="a parameter ({host}) or its literal · a kept one is replaced again",
            ),
            keep,
        )

    def on_draft_written(self, message: DraftWritten) -> None:
        # The row stays dimmed until the reload drops it (with its busy flag); a draft whose
        # literal was kept stays pending: its row comes back as it is now.
        message.stop()
        if message.action in ("keep", "unkeep", "edit"):
            self.table().set_busy(message.draft.draft_id, busy=False)
        if message.action in TEAM_DONE and self._team is not None:
            name = one_line(message.draft.name, 80)
            self.notify(TEAM_DONE[message.action].format(name=name), timeout=5, markup=False)
        else:
            tell_draft(self, message)
        self.load_drafts()

    def on_draft_failed(self, message: DraftFailed) -> None:
        message.stop()
        self.table().set_busy(message.draft_id, busy=False)
        tell_draft(self, message)
        self.screen.refresh_bindings()

    def palette_commands(self) -> list[PaletteCommand]:
        """Decisions on the draft under the cursor."""
        draft = self.table().current
        commands: list[PaletteCommand] = [
            ("review: show the nodes", "toggle_drafts", "Back to the pending nodes")
        ]
        if draft is not None and self._team is not None:
            name = one_line(draft.name, 60)
            about = escape(f"{name} · in the team hub")
            return [
                *commands,
                (f"team draft: approve {name}", "approve", about),
                (f"team draft: reject {name}…", "reject", about),
                (f"team draft: edit {name}…", "edit", about),
            ]
        if draft is not None:
            name = one_line(draft.name, 60)
            about = escape(f"{name} · {len(draft.citations)} citations")
            commands += [
                (f"draft: approve {name}", "approve", about),
                (f"draft: reject {name}…", "reject", about),
            ]
        return commands
