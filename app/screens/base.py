"""What every librarian screen shares: one place that turns worker errors into notices."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker, WorkerState

from store.text import one_line


class LibrarianScreen(Screen[None]):
    """Base screen; worker failures become one error notification, never a crash."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.app.notify(
                one_line(f"{event.worker.name or 'task'} failed: {error}", 300),
                severity="error",
                timeout=8,
                markup=False,  # error text can quote skill names and paths: untrusted
            )
