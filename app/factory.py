"""The app factory: the CLI and the tests build the app the same way."""

from __future__ import annotations

from pathlib import Path

from app.librarian_app import LibrarianApp
from store.library import Library
from store.paths import LibraryPaths


def make_app(
    library: Library, *, watch: bool = True, warm: bool = True, show_timings: bool = True
) -> LibrarianApp:
    """An app over an open library.

    Tests pass `watch=False` to skip the file watcher, `warm=False` to load the model only
    on the first ranking, and `show_timings=False` to keep durations off the screen (so
    snapshots and screenshots are the same on every run).
    """
    return LibrarianApp(library, watch=watch, warm=warm, show_timings=show_timings)


def open_for_app(library_dir: Path) -> Library:
    """The library the app works on; one this user cannot change opens read-only, for
    browsing. A damaged or unreadable one raises `LibrarianError` (one line, no app)."""
    return Library(library_dir, read_only=not LibraryPaths(library_dir).writable())


def run_app(library_dir: Path) -> int:
    with open_for_app(library_dir) as library:
        app = make_app(library)
        app.run()
    return app.return_code or 0
