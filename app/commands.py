"""Command palette entries, namespaced (`view: …`, `skill: …`, `library: …`)."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher

from store.text import one_line

if TYPE_CHECKING:
    from app.librarian_app import LibrarianApp


class LibrarianCommands(Provider):
    """Views and library actions, plus one `skill: show …` entry per skill."""

    async def startup(self) -> None:
        app = cast("LibrarianApp", self.app)
        rows = await asyncio.to_thread(app.library.list_skills)
        self._skills = [(r.skill_id, one_line(r.name, 64), r.status) for r in rows]

    def _commands(self) -> list[tuple[str, object, str]]:
        app = cast("LibrarianApp", self.app)
        commands: list[tuple[str, object, str]] = [
            (f"view: {title.lower()}", partial(app.action_view, mode), f"Open the {title} screen")
            for _, mode, title in app.views()
        ]
        commands += [
            ("library: rescan skills", app.action_rescan, "Scan the skill roots again"),
            ("library: verify", app.action_verify, "Check the library against its event log"),
            ("skills: rank for a task…", app.action_focus_task, "Type a task; skills are ranked"),
            ("skills: filter…", app.action_focus_filter, "Filter the skill list"),
        ]
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        app = cast("LibrarianApp", self.app)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    callback,  # type: ignore[arg-type]
                    help=help_text,
                )
        for skill_id, name, status in getattr(self, "_skills", []):
            title = f"skill: show {name}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(title),
                    partial(app.show_skill, skill_id),
                    help=f"{status}",
                )


def literal_highlight(matcher: Matcher, title: str) -> Content:
    """Like `Matcher.highlight`, but the title is never parsed as markup (skill names are
    untrusted)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
