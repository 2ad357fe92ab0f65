"""Command palette entries, namespaced (`view: …`, `node: …`, `session: …`, `skill: …`,
`library: …`). The `node:` entries follow the review screen's state; names of skills and
sessions are untrusted and never parsed as markup."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from app.screens.review import ReviewScreen
from store.text import one_line

if TYPE_CHECKING:
    from app.librarian_app import LibrarianApp

Command = tuple[str, Callable[[], Any], str]


class LibrarianCommands(Provider):
    """Views and library actions, review decisions on the review screen, plus one
    `skill: show …` entry per skill and one `session: open …` entry per session."""

    async def startup(self) -> None:
        app = cast("LibrarianApp", self.app)
        rows = await asyncio.to_thread(app.library.list_skills)
        self._skills = [(r.skill_id, one_line(r.name, 64), r.status) for r in rows]
        sessions = await asyncio.to_thread(app.library.sessions)
        self._sessions = [
            (
                s.session_id,
                f"{one_line(s.project, 60)} {one_line(s.branch, 30)} {s.started_at[:10]}".strip(),
                f"{s.node_count} nodes, {s.pending_count} pending, {s.errors} errors",
            )
            for s in sessions
        ]

    def _commands(self) -> list[Command]:
        app = cast("LibrarianApp", self.app)
        commands: list[Command] = [
            (f"view: {title.lower()}", partial(app.action_view, mode), f"Open the {title} screen")
            for _, mode, title in app.views()
        ]
        commands += self._node_commands()
        commands += [
            ("library: rescan skills", app.action_rescan, "Scan the skill roots again"),
            ("library: verify", app.action_verify, "Check the library against its event log"),
            ("skills: rank for a task…", app.action_focus_task, "Type a task; skills are ranked"),
            ("skills: filter…", app.action_focus_filter, "Filter the skill list"),
        ]
        return commands

    def _node_commands(self) -> list[Command]:
        """Decisions on what the review screen has selected (only while it is shown)."""
        if not isinstance(self.screen, ReviewScreen):
            return []
        app = cast("LibrarianApp", self.app)
        current, marked = self.screen.selection()
        run = app.review_command
        commands: list[Command] = []
        if current is not None or marked:
            target = f"{len(marked)} marked nodes" if marked else "this node"
            about = about_node(current.summary) if current and not marked else target
            commands += [
                (f"node: approve {target}", partial(run, "approve"), about),
                (f"node: reject {target}…", partial(run, "reject"), about),
                (f"node: switch scope of {target}", partial(run, "scope"), "PROJECT ↔ TEAM"),
            ]
        if current is not None:
            commands += [
                ("node: edit summary…", partial(run, "edit"), about_node(current.summary)),
                ("node: skip to the next pending", partial(run, "skip"), "Leave this one pending"),
                ("node: mark all listed", partial(run, "mark_all"), "Decide on them together"),
            ]
        commands += [
            ("node: undo my last decision", partial(run, "undo"), "Reverts the whole batch"),
            ("nodes: filter…", partial(run, "filter"), "Words in the summary or evidence"),
        ]
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        app = cast("LibrarianApp", self.app)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, literal_highlight(matcher, title), callback, help=help_text)
        for skill_id, name, status in getattr(self, "_skills", []):
            title = f"skill: show {name}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    literal_highlight(matcher, title),
                    partial(app.show_skill, skill_id),
                    help=status,
                )
        for session_id, label, counts in getattr(self, "_sessions", []):
            title = f"session: open {label}"
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score,
                    literal_highlight(matcher, title),
                    partial(app.open_session, session_id),
                    help=escape(f"{one_line(session_id, 40)} · {counts}"),
                )


def about_node(summary: str) -> str:
    """A node's summary as palette help text (which the palette reads as markup)."""
    return escape(one_line(summary, 80))


def literal_highlight(matcher: Matcher, title: str) -> Content:
    """Like `Matcher.highlight`, but the title is never parsed as markup (skill names are
    untrusted)."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
