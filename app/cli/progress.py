"""Feedback on long work (`scan`, `ingest`, `consolidate`, `bench`, the demo build): a rich
progress bar on a terminal, and a line up front saying what a first run will do and roughly
how long. With `--json`, or when stdout is not a terminal (piped, redirected, a test), nothing
extra is printed: the output stays the report alone.

The store reports progress through plain callbacks (`done, total` counts or stage messages);
this module only renders them.
"""

from __future__ import annotations

import argparse
import sys
from types import TracebackType
from typing import TYPE_CHECKING

from store.text import neutralise, one_line

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.text import Text


#: Loading the embedding model, once per command that embeds (a laptop core).
MODEL_LOAD_SECONDS = 2.0


def interactive(args: argparse.Namespace) -> bool:
    """Whether progress is shown: not with `--json`, and only when stdout is a terminal."""
    return not getattr(args, "json", False) and sys.stdout.isatty()


def seconds(estimate: float) -> str:
    """A rough duration: `~5 s`, `~40 s`, `~3 min`."""
    if estimate < 60:
        return f"~{max(round(estimate), 1)} s"
    return f"~{round(estimate / 60)} min"


class Feedback:
    """Progress for one command, used as a context manager; `enabled` False: every method
    does nothing. `console` (tests) renders there and enables it."""

    def __init__(self, enabled: bool, *, console: Console | None = None) -> None:
        self.enabled = enabled or console is not None
        self._console = console
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    @classmethod
    def for_args(cls, args: argparse.Namespace) -> Feedback:
        return cls(interactive(args))

    def __enter__(self) -> Feedback:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Take the bar off the screen (the report follows)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._task = None

    def tell(self, text: str) -> None:
        """A line above the bar (what a first run will do, and how long)."""
        if not self.enabled:
            return
        console = self._progress.console if self._progress is not None else self._screen()
        console.print(neutralise(text), markup=False, highlight=False, soft_wrap=True)

    def _screen(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=sys.stdout)
        return self._console

    def count(self, done: int, total: int, what: str = "") -> None:
        """`done` of `total` (a bar); `what` replaces the description when given."""
        if not self.enabled:
            return
        progress, task = self._bar(what)
        progress.update(task, completed=done, total=max(total, 1))
        if what:
            progress.update(task, description=one_line(what, 70))
        progress.refresh()  # each step drawn (steps are files, batches, phases: few)

    def stage(self, message: str) -> None:
        """Work without a count: the bar pulses with the current stage's message."""
        if not self.enabled:
            return
        progress, task = self._bar(message)
        progress.update(task, description=one_line(message, 70), total=None)
        progress.refresh()

    def _bar(self, what: str) -> tuple[Progress, TaskID]:
        if self._progress is None or self._task is None:
            from rich.progress import (
                BarColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                _count_column()(),
                TimeElapsedColumn(),
                console=self._screen(),
                transient=True,
            )
            self._task = self._progress.add_task(one_line(what or "working", 70), total=None)
            self._progress.start()
        return self._progress, self._task


def _count_column() -> type:
    from rich.progress import MofNCompleteColumn, Task

    class Count(MofNCompleteColumn):
        """`12/217`; nothing for work without a count (a stage)."""

        def render(self, task: Task) -> Text:
            from rich.text import Text

            return Text("") if task.total is None else super().render(task)

    return Count
