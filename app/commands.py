"""Command palette entries, namespaced (`view: …`, `node: …`, `draft: …`, `pattern: …`,
`patterns: …`, `session: …`, `skill: …`, `library: …`).

Every entry is an action string run with `App.run_action`: the app's own (`app.…`) or one the
current screen offers through `LibrarianScreen.palette_commands` (the review queue's follow
its state, the Patterns screen's its selection). Names of skills, sessions and patterns are
untrusted and never parsed as markup."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.dom import DOMNode
from textual.fuzzy import Matcher
from textual.markup import escape
from textual.screen import Screen

from app.screens.base import CURSOR_VERBS, VIEWS, LibrarianScreen, PaletteCommand, screen_keys
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

    def _commands(self) -> list[tuple[str, str, str, DOMNode]]:
        """(title, action, help, the node that runs it): the views, the current screen's own
        entries, then every key that works on it now, then the library's commands."""
        screen = self.screen
        commands: list[PaletteCommand] = [
            (f"view: {title.lower()}", f"app.view({mode!r})", f"Open the {title} screen")
            for _, mode, title in VIEWS
        ]
        if isinstance(screen, LibrarianScreen):
            commands += screen.palette_commands()
        found: list[tuple[str, str, str, DOMNode]] = [
            (title, action, help_text, screen) for title, action, help_text in commands
        ]
        found += key_commands(screen, {action for _, action, _ in commands})
        return found + [(title, action, help_text, screen) for title, action, help_text in GLOBAL]

    async def _run(self, node: DOMNode, action: str) -> None:
        await self.app.run_action(action, node)

    async def discover(self) -> Hits:
        for title, action, help_text, node in self._commands():
            yield DiscoveryHit(title, partial(self._run, node, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        jumps: list[tuple[str, str, str, DOMNode]] = [
            (t, a, h, self.screen) for t, a, h in getattr(self, "_jump_list", [])
        ]
        for title, action, help_text, node in [*self._commands(), *jumps]:
            score = matcher.match(title)
            if score > 0:
                callback = partial(self._run, node, action)
                yield Hit(score, literal_highlight(matcher, title), callback, help=help_text)


def key_commands(screen: Screen[Any], covered: set[str]) -> list[tuple[str, str, str, DOMNode]]:
    """One entry per key that works on `screen` now (`screen_keys`), named by the screen and
    what it does, with its key: `review: approve (a)`. Cursor moves are left out, and so are
    actions the screen's own entries already offer."""
    where = (screen.name or "screen").lower()
    found: list[tuple[str, str, str, DOMNode]] = []
    for row in screen_keys(screen):
        action = row.binding.action
        if not row.enabled or row.verb in CURSOR_VERBS or action in covered:
            continue
        covered.add(action)
        title = f"{where}: {row.binding.description.lower()} ({row.keys})"
        found.append((title, action, escape(row.text), row.node))
    return found


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
