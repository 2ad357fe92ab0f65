"""The Textual application: screens by number key, background model load, file watcher.

The app opens on the review queue when any node is pending (deciding is the daily work),
else on the skill library. Counting the queue is a store read, so it runs in a worker and the
first screen is pushed when the count arrives.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import BindingType

from app.commands import LibrarianCommands
from app.dialogs.keys_sheet import KeysSheet, SheetLine
from app.live import LiveData
from app.messages import (
    CatalogChanged,
    FirstScreenChosen,
    ModelReady,
    NodeGraphRequested,
    NodeOpenRequested,
    PatternOpenRequested,
    SessionGraphLoaded,
    SessionOpenRequested,
    SkillScreenRequested,
    SkillShowRequested,
    SkillsLoaded,
)
from app.screens.base import VIEWS, LibrarianScreen, screen_keys
from app.screens.graph import GraphScreen
from app.screens.health import HealthScreen
from app.screens.lineage import LineageScreen
from app.screens.patterns import PatternsScreen
from app.screens.review import ReviewScreen
from app.screens.runbook import RunbookScreen
from app.screens.sessions import SessionsScreen
from app.screens.skills import SkillsScreen
from app.screens.team import TeamScreen
from store.embed import EmbeddingError
from store.library import Library
from store.models import Node
from store.text import one_line
from store.verify import verify
from widgets.dag_view import DagView
from widgets.keys import bind

#: VIEWS lives with the screens (app.screens.base); re-exported for the bench.
__all__ = ["VIEWS", "LibrarianApp"]


class LibrarianApp(App[int]):
    """Skill Librarian."""

    CSS_PATH = "app.tcss"
    TITLE = "Skill Librarian"
    COMMANDS = App.COMMANDS | {LibrarianCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            # Kept out of the footer (it holds at most seven keys); `?` and the palette list them.
            bind(
                "view",
                f"view('{mode}')",
                title,
                show=False,
                id=f"view.{mode}",
                tooltip=f"{title} screen",
                key=key,
            )
            for key, mode, title in VIEWS
        ),
        bind(
            "keys",
            "keys",
            "Keys",
            id="app.help",
            tooltip="This screen's keys, grouped by purpose",
        ),
        # Out of the footer too (`?` lists it; ctrl+q quits as well): the screens' keys need
        # the room, at most seven in all.
        bind("quit", "quit", "Quit", show=False, id="app.quit", tooltip="Quit"),
    ]

    def __init__(
        self,
        library: Library,
        *,
        watch: bool = True,
        warm: bool = True,
        show_timings: bool = True,
    ) -> None:
        super().__init__()
        self.library = library
        self._watch = watch
        self._warm = warm
        self._show_timings = show_timings
        self._stop = threading.Event()
        self._warming = False
        self._started = False
        self._graph_node: str | None = None  # a node to put the DAG cursor on once it is drawn

    @staticmethod
    def views() -> tuple[tuple[str, str, str], ...]:
        return VIEWS

    def on_mount(self) -> None:
        keymap = self.library.config.get("keys") or {}
        if isinstance(keymap, dict):
            self.set_keymap({str(k): str(v) for k, v in keymap.items()})
        self.install_screen(ReviewScreen(self.library), "review")
        self.install_screen(SessionsScreen(self.library), "sessions")
        self.install_screen(
            SkillsScreen(self.library, warm=self._warm, show_timings=self._show_timings), "skills"
        )
        self.install_screen(GraphScreen(self.library), "graph")
        self.install_screen(HealthScreen(self.library), "health")
        self.install_screen(PatternsScreen(self.library), "patterns")
        self.install_screen(LineageScreen(self.library), "lineage")
        self.install_screen(RunbookScreen(self.library), "runbook")
        self.install_screen(TeamScreen(self.library), "team")
        self.choose_first_screen()
        if self.library.read_only:
            self.sub_title = "read-only"
            self.notify(
                "This library is read-only: browse freely; changes are refused.",
                title="Read-only library",
                timeout=8,
                markup=False,
            )
        elif self._watch:
            self.watch_roots()
        if self._watch:
            LiveData(self, self.library).start(self._stop)

    async def on_first_screen_chosen(self, message: FirstScreenChosen) -> None:
        if not self._started:  # a number key pressed meanwhile wins
            await self.action_view(message.mode)

    def on_skills_loaded(self, message: SkillsLoaded) -> None:
        """The first rows are on screen: now load the model (off the start-up path).

        The catalog's rows live as long as the app: they move to the collector's permanent
        generation, so a full collection later (while another screen builds its own rows)
        does not walk tens of thousands of them again."""
        gc.freeze()
        if self._warm and not self._warming:
            self._warming = True
            self.warm_up()

    def on_unmount(self) -> None:
        self._stop.set()

    # -- background work ---------------------------------------------------------------

    @work(thread=True, group="start", exit_on_error=False)
    def choose_first_screen(self) -> None:
        """The review queue when anything is pending (nodes, drafts or relation proposals),
        else the skills."""
        try:
            pending = self.library.node_count(status="pending")
            pending = pending or len(self.library.drafts(status="pending"))
            pending = pending or len(self.library.relation_proposals("pending"))
        except Exception:  # whatever went wrong, the app still opens (on the skills)
            pending = 0
        self.post_message(FirstScreenChosen("review" if pending else "skills"))

    @work(thread=True, group="model", exit_on_error=False)
    def warm_up(self) -> None:
        """Load the embedding model and make sure the vector index is current."""
        started = time.perf_counter()
        try:
            self.library.embedder.load()
            self.library.sync_index()
        except EmbeddingError as exc:
            self._to_skills(ModelReady(time.perf_counter() - started, False, one_line(str(exc))))
            return
        self._to_skills(ModelReady(time.perf_counter() - started, True))

    @work(thread=True, group="watch", exit_on_error=False)
    def watch_roots(self) -> None:
        """Rescan when files under the skill roots change, until the app exits."""
        from watchfiles import watch

        roots = [str(r.path) for r in self.library.configured_roots() if r.path.is_dir()]
        if not roots:
            return
        for _changes in watch(
            *roots,
            stop_event=self._stop,
            debounce=500,
            raise_interrupt=False,
            yield_on_timeout=False,
        ):
            if self._stop.is_set():
                return
            report = self.library.scan()
            if report.installed or report.changed or report.uninstalled:
                self._to_skills(CatalogChanged(report))

    def _to_skills(self, message: CatalogChanged | ModelReady) -> None:
        try:
            screen = self.get_screen("skills")
        except KeyError:
            return
        if screen.is_mounted:  # not shown yet: it loads fresh rows when it is
            screen.post_message(message)

    # -- actions -----------------------------------------------------------------------

    async def action_view(self, mode: str) -> None:
        """Show a screen; returns once it is mounted (so callers can use its widgets)."""
        if not self._started:
            self._started = True
            await self.push_screen(mode)
        elif self.screen.name != mode:
            await self.switch_screen(mode)

    def action_keys(self) -> None:
        """The `?` sheet: the current screen's keys in its current state, by purpose."""
        screen = self.screen
        if isinstance(screen, KeysSheet):
            screen.dismiss()
            return
        lines = [
            SheetLine(row.group, row.keys, row.text, row.enabled) for row in screen_keys(screen)
        ]
        lines.append(SheetLine("Screens", "^p", "the command palette: every action here, by name"))
        title = screen.sub_title or self.title
        self.push_screen(KeysSheet(f"Keys · {title}", lines))

    async def _skills_screen(self) -> SkillsScreen:
        await self.action_view("skills")
        screen = self.get_screen("skills")
        assert isinstance(screen, SkillsScreen)
        return screen

    async def action_rescan(self) -> None:
        (await self._skills_screen()).action_rescan()

    async def action_focus_task(self) -> None:
        (await self._skills_screen()).action_focus_task()

    async def action_focus_filter(self) -> None:
        (await self._skills_screen()).action_focus_filter()

    async def show_skill(self, skill_id: int) -> None:
        (await self._skills_screen()).select_skill(skill_id)

    async def action_on_screen(self, mode: str, action: str) -> None:
        """Show a screen, then run one of its actions (the command palette's entries)."""
        await self.action_view(mode)
        await self.run_action(action, self.get_screen(mode))

    async def action_show_skill(self, skill_id: int) -> None:
        await self.show_skill(skill_id)

    async def on_skill_show_requested(self, message: SkillShowRequested) -> None:
        await self.show_skill(message.skill_id)

    async def on_skill_screen_requested(self, message: SkillScreenRequested) -> None:
        await self.open_skill_screen(message.mode, message.skill)

    async def open_skill_screen(self, mode: str, skill: str) -> None:
        """Switch to a lifecycle screen (graph, health, lineage, runbook) centred on a skill."""
        try:
            screen = self.get_screen(mode)
        except KeyError:
            self.notify(f"no {mode} screen", severity="warning", markup=False)
            return
        await self.action_view(mode)
        if isinstance(screen, LibrarianScreen):
            await screen.show_skill(skill)

    async def on_node_open_requested(self, message: NodeOpenRequested) -> None:
        await self.action_view("review")
        screen = self.get_screen("review")
        assert isinstance(screen, ReviewScreen)
        screen.show_node(message.node)

    async def action_open_session(self, session_id: str) -> None:
        await self.open_session(session_id)

    async def on_session_open_requested(self, message: SessionOpenRequested) -> None:
        await self.open_session(message.session_id)

    async def open_session(self, session_id: str) -> None:
        await self.action_view("sessions")
        screen = self.get_screen("sessions")
        assert isinstance(screen, SessionsScreen)
        self._graph_node = None
        screen.open_session(session_id)

    async def on_node_graph_requested(self, message: NodeGraphRequested) -> None:
        await self.show_in_graph(message.node)

    async def show_in_graph(self, node: Node) -> None:
        """The Sessions screen on the node's session, the DAG cursor on the node."""
        await self.open_session(node.session_id)
        self._graph_node = node.node_id
        self._focus_graph_node()

    def on_session_graph_loaded(self, message: SessionGraphLoaded) -> None:
        # Bubbled up from the Sessions screen, which has drawn the graph by now.
        self._focus_graph_node()

    def _focus_graph_node(self) -> None:
        if self._graph_node is None:
            return
        dag = self.get_screen("sessions").query_one(DagView)
        if dag.move_to(self._graph_node):
            self._graph_node = None
            dag.focus()

    async def show_pattern(self, pattern_id: str) -> None:
        await self.action_view("patterns")
        screen = self.get_screen("patterns")
        assert isinstance(screen, PatternsScreen)
        screen.show_pattern(pattern_id)

    async def action_show_pattern(self, pattern_id: str) -> None:
        await self.show_pattern(pattern_id)

    async def on_pattern_open_requested(self, message: PatternOpenRequested) -> None:
        await self.show_pattern(message.pattern_id)

    @work(thread=True, group="verify", exit_on_error=False)
    def action_verify(self) -> None:
        report = verify(self.library.kernel)
        failed = [c.name for c in report.checks if not c.ok]
        if report.ok:
            head = f"; head {report.head.events} events, {report.head.hash}" if report.head else ""
            self.notify("library is intact: " + ", ".join(c.name for c in report.checks) + head)
        else:
            self.notify("verify failed: " + ", ".join(failed), severity="error", timeout=10)
