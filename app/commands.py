"""Command palette entries, namespaced (`view: …`, `node: …`, `draft: …`, `pattern: …`,
`patterns: …`, `session: …`, `skill: …`, `library: …`). The `node:` and `draft:` entries follow
the review screen's state, the `pattern:` ones the Patterns screen's; names of skills,
sessions and patterns are untrusted and never parsed as markup."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from app.screens.patterns import PatternsScreen
from app.screens.review import ReviewScreen
from store.text import one_line

if TYPE_CHECKING:
    from app.librarian_app import LibrarianApp

Command = tuple[str, Callable[[], Any], str]


class LibrarianCommands(Provider):
    """Views and library actions, review decisions on the review screen, plus one
    `skill: show …` entry per skill, one `session: open …` entry per session and one
    `pattern: show …` entry per pattern."""

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
        patterns = await asyncio.to_thread(app.library.patterns)
        self._patterns = [
            (p.pattern_id, one_line(p.title, 64), f"{p.kind} · {p.status}") for p in patterns
        ]

    def _commands(self) -> list[Command]:
        app = cast("LibrarianApp", self.app)
        commands: list[Command] = [
            (f"view: {title.lower()}", partial(app.action_view, mode), f"Open the {title} screen")
            for _, mode, title in app.views()
        ]
        commands += self._node_commands()
        commands += self._pattern_commands()
        patterns = app.patterns_command
        commands += [
            (
                "patterns: consolidate",
                partial(patterns, "consolidate"),
                "Cluster the approved nodes into patterns again",
            ),
            ("patterns: filter…", partial(patterns, "filter"), "Words in titles and steps"),
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
        run = app.review_command
        if self.screen.drafts_mode:
            return self._draft_commands()
        if self.screen.relations_mode:
            return self._relation_commands()
        current, marked = self.screen.selection()
        commands: list[Command] = [
            ("review: show the drafts", partial(run, "drafts"), "SKILL.md drafts waiting"),
            (
                "review: show the relation proposals",
                partial(run, "relations"),
                "Skills often used together, with no relation between them",
            ),
        ]
        commands += [
            (
                "review: show the suppressed nodes (or the pending ones)",
                partial(run, "suppressed"),
                "Nodes the knowledge bar kept out of the queue, with the reason",
            ),
            (
                "review: group by session (or one list)",
                partial(run, "group"),
                "Each session's nodes under its header, best first inside",
            ),
        ]
        if current is not None or marked:
            target = f"{len(marked)} marked nodes" if marked else "this node"
            about = about_node(current.summary) if current and not marked else target
            commands += [
                (f"node: approve {target}", partial(run, "approve"), about),
                (f"node: reject {target}…", partial(run, "reject"), about),
                (f"node: switch scope of {target}", partial(run, "scope"), "PROJECT ↔ TEAM"),
            ]
        if self.screen.can_promote():
            commands.append(
                ("node: promote to pending", partial(run, "promote"), "Back into the queue")
            )
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

    def _draft_commands(self) -> list[Command]:
        """Decisions on the draft under the cursor (the review screen lists drafts)."""
        assert isinstance(self.screen, ReviewScreen)
        app = cast("LibrarianApp", self.app)
        run = app.review_command
        draft = self.screen.current_draft()
        commands: list[Command] = [
            ("review: show the nodes", partial(run, "drafts"), "Back to the pending nodes")
        ]
        if draft is not None:
            name = one_line(draft.name, 60)
            about = escape(f"{name} · {len(draft.citations)} citations")
            commands += [
                (f"draft: approve {name}", partial(run, "approve"), about),
                (f"draft: reject {name}…", partial(run, "reject"), about),
            ]
        return commands

    def _relation_commands(self) -> list[Command]:
        """Decisions on the relation proposal under the cursor."""
        assert isinstance(self.screen, ReviewScreen)
        app = cast("LibrarianApp", self.app)
        run = app.review_command
        proposal = self.screen.current_proposal()
        commands: list[Command] = [
            ("review: show the nodes", partial(run, "relations"), "Back to the pending nodes")
        ]
        if proposal is not None:
            pair = f"{one_line(proposal.source_name, 40)} ↔ {one_line(proposal.target_name, 40)}"
            about = escape(f"{pair} · {proposal.shared} shared sessions")
            commands += [
                (f"relation: accept {pair}", partial(run, "approve"), about),
                (f"relation: reject {pair}…", partial(run, "reject"), about),
            ]
        return commands

    def _pattern_commands(self) -> list[Command]:
        """Graduation of the highlighted pattern (only while the Patterns screen is shown)."""
        if not isinstance(self.screen, PatternsScreen):
            return []
        app = cast("LibrarianApp", self.app)
        run = app.patterns_command
        pattern, check = self.screen.selection()
        commands: list[Command] = [
            ("patterns: next kind", partial(run, "kind"), "Pitfalls, strategies, insights, all")
        ]
        if pattern is None or check is None:
            return commands
        about = escape(one_line(pattern.title, 80))
        draft = check.draft if check.draft and check.draft.status == "pending" else None
        if draft is not None:
            name = one_line(draft.name, 60)
            commands += [
                (f"draft: approve {name}", partial(run, "graduate"), about),
                (f"draft: reject {name}…", partial(run, "reject_draft"), about),
            ]
        elif check.eligible:
            commands.append(
                ("pattern: graduate (draft a SKILL.md)", partial(run, "graduate"), about)
            )
        return commands

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        app = cast("LibrarianApp", self.app)
        for title, callback, help_text in [*self._commands(), *self._jumps(app)]:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, literal_highlight(matcher, title), callback, help=help_text)

    def _jumps(self, app: LibrarianApp) -> list[Command]:
        """Searchable only: one entry per skill, session and pattern loaded at start-up."""
        jumps: list[Command] = [
            (f"skill: show {name}", partial(app.show_skill, skill_id), status)
            for skill_id, name, status in getattr(self, "_skills", [])
        ]
        jumps += [
            (
                f"session: open {label}",
                partial(app.open_session, session_id),
                escape(f"{one_line(session_id, 40)} · {counts}"),
            )
            for session_id, label, counts in getattr(self, "_sessions", [])
        ]
        jumps += [
            (
                f"pattern: show {label}",
                partial(app.show_pattern, pattern_id),
                escape(f"{pattern_id} · {about}"),
            )
            for pattern_id, label, about in getattr(self, "_patterns", [])
        ]
        return jumps


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
