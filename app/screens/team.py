"""The Team screen (`9`): this library and its hub — reachable or not, what waits for you as a
reviewer, the push queue and the pull cursor, your items' verdicts — and push, pull and verify
with their progress.

Push, pull and verify run in one thread worker at a time (a second one is greyed out until it
ends); progress comes back as coalescing messages, so a 100,000-event pull never floods the
queue. A pull then consolidates patterns (when approved nodes changed) and installs the
drafts the team approved, all in the worker. Deciding team items happens in the review queue
(`1`, then `T` for the team source).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from app.messages import TeamProgress, TeamStatusLoaded, TeamSyncFinished
from app.screens.base import LibrarianScreen
from store.errors import LibrarianError
from store.library import Library
from store.team.drafts import install
from store.team.pull import pull
from store.team.push import push
from store.team.status import team_status, team_verify
from widgets.keys import bind
from widgets.team_status import TeamStatusView

HINT = "Decide the team's staged items in the review queue: 1, then T (mine/team)."


class TeamScreen(LibrarianScreen):
    """Where this library stands with its team hub; push, pull, verify."""

    BINDINGS: ClassVar[list[BindingType]] = [
        bind(
            "push",
            "push",
            "Push",
            id="team.push",
            tooltip="Push approved nodes, decisions and drafts to the hub",
        ),
        bind(
            "pull",
            "pull",
            "Pull",
            id="team.pull",
            tooltip="Pull what the team approved, consolidate, install approved team drafts",
        ),
        bind(
            "verify",
            "verify",
            "Verify",
            id="team.verify",
            tooltip="Check the hub's log and this library's history against its anchors",
        ),
        bind("refresh", "refresh", "Refresh", id="team.refresh", tooltip="Read the team state"),
    ]

    def __init__(self, library: Library) -> None:
        super().__init__(name="team")
        self.library = library
        self.running = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield TeamStatusView(id="team-status")
        yield ProgressBar(id="team-progress", show_eta=False)
        yield Static(HINT, id="team-hint", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Team"
        self.query_one("#team-progress", ProgressBar).display = False
        self.load_status()

    def on_screen_resume(self) -> None:
        if not self.running:
            self.load_status()

    # -- workers -----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="team-status", exit_on_error=False)
    def load_status(self) -> None:
        status = team_status(self.library)
        if not get_current_worker().is_cancelled:
            self.post_message(TeamStatusLoaded(status))

    @work(thread=True, group="team-sync", exit_on_error=False)
    def run_sync(self, verb: str) -> None:
        """Push, pull (with consolidation and draft installs) or verify."""

        def progress(done: int, total: int) -> None:
            self.post_message(TeamProgress(verb, done, total))

        try:
            lines = self._sync(verb, progress)
        except LibrarianError as exc:
            self.post_message(TeamSyncFinished(verb, (str(exc),), ok=False))
            return
        except Exception:
            self.post_message(TeamSyncFinished(verb, (f"{verb} failed",), ok=False))
            raise
        self.post_message(TeamSyncFinished(verb, tuple(lines[0]), ok=lines[1]))

    def _sync(self, verb: str, progress: Callable[[int, int], None]) -> tuple[list[str], bool]:
        if verb == "push":
            return [push(self.library, progress=progress).describe()], True
        if verb == "verify":
            report = team_verify(self.library)
            return report.lines(), report.ok
        report_pull = pull(self.library, progress=progress)
        lines = [report_pull.describe(), *report_pull.skipped]
        if report_pull.nodes_changed:
            made = self.library.consolidate()
            lines.append(f"consolidated: {made.patterns} patterns ({made.created} new)")
        installed, problems = install(self.library, self._scan)
        if installed:
            lines.append("installed team skills: " + ", ".join(installed))
        return lines + problems, not report_pull.skipped and not problems

    def _scan(self, root: Path) -> object:
        configured = {str(r.path.resolve()) for r in self.library.configured_roots()}
        if str(root.resolve()) in configured:
            return self.library.scan()
        return self.library.scan([root])

    # -- messages ----------------------------------------------------------------------

    def on_team_status_loaded(self, message: TeamStatusLoaded) -> None:
        self.query_one(TeamStatusView).show(message.status)
        self.loaded = True
        self.refresh_bindings()

    def on_team_progress(self, message: TeamProgress) -> None:
        bar = self.query_one("#team-progress", ProgressBar)
        bar.display = True
        bar.update(total=max(message.total, 1), progress=message.done)

    def on_team_sync_finished(self, message: TeamSyncFinished) -> None:
        self.running = ""
        self.query_one("#team-progress", ProgressBar).display = False
        self.query_one(TeamStatusView).show(last=message.lines)
        self.notify(
            message.lines[0] if message.lines else message.verb,
            severity="information" if message.ok else "error",
            timeout=6,
            markup=False,  # hub names and errors: untrusted
        )
        self.refresh_bindings()
        self.load_status()

    # -- actions -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("push", "pull", "verify"):
            views = self.query(TeamStatusView)
            status = views.first().status if views else None
            configured = status is not None and status.configured
            writes = action != "verify" and self.library.read_only
            return True if configured and not self.running and not writes else None
        return True

    def _start(self, verb: str) -> None:
        self.running = verb
        bar = self.query_one("#team-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.refresh_bindings()
        self.run_sync(verb)

    def action_push(self) -> None:
        self._start("push")

    def action_pull(self) -> None:
        self._start("pull")

    def action_verify(self) -> None:
        self._start("verify")

    def action_refresh(self) -> None:
        self.load_status()
