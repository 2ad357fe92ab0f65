"""The Textual application: screens by number key, background model load, file watcher."""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType

from app.commands import LibrarianCommands
from app.messages import CatalogChanged, ModelReady, SkillsLoaded
from app.screens.skills import SkillsScreen
from store.embed import EmbeddingError
from store.library import Library
from store.text import one_line

#: Number keys in the order of the design; only screens that exist are listed.
VIEWS: tuple[tuple[str, str, str], ...] = (("3", "skills", "Skills"),)


class LibrarianApp(App[int]):
    """Skill Librarian."""

    CSS_PATH = "app.tcss"
    TITLE = "Skill Librarian"
    COMMANDS = App.COMMANDS | {LibrarianCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(key, f"view('{mode}')", title, id=f"view.{mode}", tooltip=f"{title} screen")
            for key, mode, title in VIEWS
        ),
        Binding(
            "question_mark",
            "toggle_help",
            "Help",
            id="app.help",
            tooltip="Show or hide the keys of the focused widget",
        ),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit"),
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
        self._help_visible = False
        self._warming = False

    @staticmethod
    def views() -> tuple[tuple[str, str, str], ...]:
        return VIEWS

    def on_mount(self) -> None:
        keymap = self.library.config.get("keys") or {}
        if isinstance(keymap, dict):
            self.set_keymap({str(k): str(v) for k, v in keymap.items()})
        self.install_screen(
            SkillsScreen(self.library, warm=self._warm, show_timings=self._show_timings), "skills"
        )
        self.push_screen("skills")
        if self._watch:
            self.watch_roots()

    def on_skills_loaded(self, message: SkillsLoaded) -> None:
        """The first rows are on screen: now load the model (off the start-up path)."""
        if self._warm and not self._warming:
            self._warming = True
            self.warm_up()

    def on_unmount(self) -> None:
        self._stop.set()

    # -- background work ---------------------------------------------------------------

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
        screen.post_message(message)

    # -- actions -----------------------------------------------------------------------

    def action_view(self, mode: str) -> None:
        if self.screen.name != mode:
            self.switch_screen(mode)

    def action_toggle_help(self) -> None:
        if self._help_visible:
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()
        self._help_visible = not self._help_visible

    def _skills_screen(self) -> SkillsScreen:
        screen = self.get_screen("skills")
        assert isinstance(screen, SkillsScreen)
        return screen

    def action_rescan(self) -> None:
        self._skills_screen().action_rescan()

    def action_focus_task(self) -> None:
        self._skills_screen().action_focus_task()

    def action_focus_filter(self) -> None:
        self._skills_screen().action_focus_filter()

    def show_skill(self, skill_id: int) -> None:
        self.action_view("skills")
        self._skills_screen().show_skill(skill_id)

    @work(thread=True, group="verify", exit_on_error=False)
    def action_verify(self) -> None:
        from store.verify import verify

        report = verify(self.library)
        failed = [c.name for c in report.checks if not c.ok]
        if report.ok:
            self.notify("library is intact: " + ", ".join(c.name for c in report.checks))
        else:
            self.notify("verify failed: " + ", ".join(failed), severity="error", timeout=10)
