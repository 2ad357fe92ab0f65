"""Command palette entries, namespaced (`view: …`, `node: …`, `draft: …`, `pattern: …`,
`patterns: …`, `session: …`, `skill: …`, `library: …`).

Every entry is an action string run with `App.run_action`: the app's own (`app.…`) or one the
current screen offers through `LibrarianScreen.palette_commands` (the review queue's follow
its state, the Patterns screen's its selection). Names of skills, sessions and patterns are
untrusted and never parsed as markup."""

from __future__ import annotations

import asyncio
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.dom import DOMNode
from textual.fuzzy import Matcher
from textual.markup import escape

from app.screens.base import VIEWS, LibrarianScreen, PaletteCommand
from store.library import Library
from store.text import one_line

#: Entries on every screen, after the current screen's own.
GLOBAL: tuple[PaletteCommand, ...] = (
    (
        "patterns: consolidate",
        "app.on_screen('patterns', 'consolidate')",
        "Cluster the approved nodes into patterns again",
    ),
    ("patterns: filter…", "app.on_screen('patterns', 'focus_filter')", "Words in titles and steps"),
    ("library: rescan skills", "app.rescan", "Scan the skill roots again"),
    ("library: verify", "app.verify", "Check the library against its event log"),
    ("skills: rank for a task…", "app.focus_task", "Type a task; skills are ranked"),
    ("skills: filter…", "app.focus_filter", "Filter the skill list"),
)


class LibrarianCommands(Provider):
    """Views and library actions, the current screen's entries, plus one `skill: show …` entry
    per skill, one `session: open …` entry per session and one `pattern: show …` entry per
    pattern."""

    async def startup(self) -> None:
        self._jump_list: list[PaletteCommand] = []
        library = getattr(self.app, "library", None)
        if isinstance(library, Library):
            self._jump_list = await asyncio.to_thread(jumps, library)

    def _commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = [
            (f"view: {title.lower()}", f"app.view({mode!r})", f"Open the {title} screen")
            for _, mode, title in VIEWS
        ]
        if isinstance(self.screen, LibrarianScreen):
            commands += self.screen.palette_commands()
        return commands + list(GLOBAL)

    async def _run(self, screen: DOMNode, action: str) -> None:
        await self.app.run_action(action, screen)

    async def discover(self) -> Hits:
        for title, action, help_text in self._commands():
            yield DiscoveryHit(title, partial(self._run, self.screen, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in [*self._commands(), *getattr(self, "_jump_list", [])]:
            score = matcher.match(title)
            if score > 0:
                callback = partial(self._run, self.screen, action)
                yield Hit(score, literal_highlight(matcher, title), callback, help=help_text)


def jumps(library: Library) -> list[PaletteCommand]:
    """Searchable only: one entry per skill, session and pattern (read once per palette)."""
    found: list[PaletteCommand] = [
        (f"skill: show {one_line(r.name, 64)}", f"app.show_skill({r.skill_id})", r.status)
        for r in library.list_skills()
    ]
    for s in library.sessions():
        label = f"{one_line(s.project, 60)} {one_line(s.branch, 30)} {s.started_at[:10]}".strip()
        counts = f"{s.node_count} nodes, {s.pending_count} pending, {s.errors} errors"
        found.append(
            (
                f"session: open {label}",
                f"app.open_session({s.session_id!r})",
                escape(f"{one_line(s.session_id, 40)} · {counts}"),
            )
        )
    found += [
        (
            f"pattern: show {one_line(p.title, 64)}",
            f"app.show_pattern({p.pattern_id!r})",
            escape(f"{p.pattern_id} · {p.kind} · {p.status}"),
        )
        for p in library.patterns()
    ]
    return found


def literal_highlight(matcher: Matcher, title: str) -> Content:
    """Like `Matcher.highlight`, but the title is never parsed as markup (skill names are
    untrusted)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
