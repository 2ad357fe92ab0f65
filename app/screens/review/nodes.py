"""The review queue's nodes: pending reasoning nodes, best first (informativeness ×
confidence), optionally grouped under their session, with the evidence and the transcript of
the one under the cursor.

Nodes the knowledge bar kept out of the queue (`suppressed`) are one status filter away; one
key promotes them to pending, and approve / reject work on them directly. Decisions are
written by thread workers; the table takes the returned nodes back (a decided row leaves a
pending-only list) instead of reloading the list. The cursor moves to the next pending node
as soon as a decision is asked for (the decided rows stay dimmed until the write returns), so
a reviewer can decide as fast as they read. `T` reads and decides the team hub's staged items
instead of this library's nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.markup import escape
from textual.timer import Timer
from textual.worker import get_current_worker

from app.dialogs.text_prompt import TextPrompt
from app.messages import (
    DecisionFailed,
    DecisionUndone,
    NodeContextLoaded,
    NodesDecided,
    NodesLoaded,
    ProjectsLoaded,
    QueueCountsLoaded,
)
from app.screens.base import PaletteCommand
from app.screens.review.filters import ALL, SUPPRESSED, NodeFilters
from app.screens.review.pane import DecisionPane
from store.errors import LibrarianError
from store.library import Library
from store.models import SCOPES, ContextMessage, Node, QueueCounts
from store.team.connection import configured_hub, warm
from store.team.review import TeamQueue
from store.text import neutralise, one_line
from widgets.node_detail import NodeDetailView
from widgets.node_table import NodeTable

#: Seconds the cursor must rest on a node before its transcript is loaded.
CONTEXT_DELAY = 0.06
#: Rows fetched at most; the status line says when there are more.
MAX_ROWS = 50_000
#: Rows fetched first, so the table fills at once however long the queue is.
FIRST_PAGE = 200
#: Transcript excerpts kept in memory (a decision then shows the next one at once).
CONTEXT_CACHE = 256
ORDERS: tuple[str, ...] = ("best", "oldest", "newest", "confidence", "type", "session")
ORDER_TITLES = {
    "best": "best first",
    "oldest": "oldest first",
    "newest": "newest first",
    "confidence": "most confident first",
    "type": "by type",
    "session": "by session",
}
NO_SUPPRESSED = "Nothing was kept out: every node passed the knowledge bar."
#: The status line's hint after the count of suppressed nodes, by status filter: (binding id,
#: what it does).
KEPT_OUT_HINTS = {
    "pending": ("review.status", "show"),
    SUPPRESSED: ("review.promote", "promote to pending"),
}


class NodesPane(DecisionPane):
    """Pending nodes in a table (their detail below it, on the screen)."""

    MODE = "nodes"
    SUBTITLE = "Review queue"
    #: Actions only the nodes answer (greyed out while another list is shown).
    ACTIONS: ClassVar[frozenset[str]] = frozenset(
        {
            "edit",
            "scope",
            "undo",
            "skip",
            "focus_filter",
            "promote",
            "toggle_group",
            "cycle_order",
            "cycle_type",
            "cycle_status",
            "toggle_project",
        }
    )

    def __init__(self, library: Library, changed: Callable[[], None]) -> None:
        super().__init__(library, changed, id="nodes-pane")
        self._order = ORDERS[0]
        self._by_session = False
        self._requested: dict[str, Any] | None = None
        self._want_focus: str | None = None
        self.counts: QueueCounts | None = None
        self._total = 0
        self._contexts: dict[str, list[ContextMessage]] = {}
        self._requested_context: list[str] = []
        self._context_timer: Timer | None = None
        self._had_node = True
        self._could_promote = False
        self._projects_asked = False
        #: The team hub's queue while the source is "team" (None: this library's own).
        self._team: TeamQueue | None = None

    @property
    def source(self) -> Library | TeamQueue:
        """Where the node list is read and decided: this library, or the team hub."""
        return self._team if self._team is not None else self.library

    def compose(self) -> ComposeResult:
        yield NodeTable(id="node-table")

    def on_mount(self) -> None:
        table = self.table()
        table.set_now(self.library.clock())
        table.focus()

    def start(self) -> None:
        """The screen is mounted: read the first rows and the counts."""
        self.reload()
        self.load_counts()
        if self.library.config.get("team.hub"):
            self.warm_team()

    def table(self) -> NodeTable:
        return self.query_one(NodeTable)

    def list_widget(self) -> NodeTable:
        return self.table()

    def detail_widget(self) -> NodeDetailView:
        return self.screen.query_one(NodeDetailView)

    def can(self, action: str) -> bool | None:
        if action in ("approve", "reject", "scope", "edit", "skip"):
            return True if self.table().current is not None else None
        if action == "promote":
            return True if self._promotable() and self._team is None else None
        if action == "undo":  # decisions in the hub are history: decided again, not undone
            return True if self._team is None else None
        return True if action in self.ACTIONS else None

    def action_approve(self) -> None:
        targets = self._targets()
        if targets:
            self._decide("approve", targets)
        else:
            self.app.bell()

    def action_reject(self) -> None:
        targets = self._targets()
        if not targets:
            self.app.bell()
            return
        count = f"{len(targets)} nodes" if len(targets) > 1 else "this node"
        self.ask(
            TextPrompt(
                f"Reject {count}",
                placeholder="reason (optional)",
                hint="Enter rejects · Escape cancels",
            ),
            lambda reason: self._decide("reject", targets, reason=reason),
        )

    def action_mark_all(self) -> None:
        self.table().action_mark_all()

    @work(thread=True, exclusive=True, group="review-team-warm", exit_on_error=False)
    def warm_team(self) -> None:
        """Team mode is set up: load its driver now, so the switch (T) answers at once."""
        warm()

    @work(thread=True, exclusive=True, group="review-list", exit_on_error=False)
    def load_nodes(self, filters: dict[str, Any], focus: str | None, first_page: bool) -> None:
        """The rows for `filters`. With `first_page` (the table is empty) only a first page
        is read; the screen asks for the rest once it is drawn (10,000 rows take ~0.1-0.3 s
        to read, and the reading thread would slow that first frame down)."""
        worker = get_current_worker()
        rows = self.source.nodes(**filters, limit=FIRST_PAGE if first_page else MAX_ROWS)
        complete = len(rows) < (FIRST_PAGE if first_page else MAX_ROWS)
        total = len(rows)
        if not complete:
            counted = {k: v for k, v in filters.items() if k not in ("order", "by_session")}
            total = self.source.node_count(**counted)
        sessions = self.source.session_starts() if filters["by_session"] else None
        if worker.is_cancelled:  # a newer filter won: drop stale rows
            return
        done = complete or not first_page
        self.post_message(NodesLoaded(rows, total, focus, complete=done, sessions=sessions))
        if first_page and rows:  # the cursor starts on the first row: its transcript too
            first = rows[0]
            self.post_message(NodeContextLoaded(first.node_id, self.source.node_context(first)))

    @work(thread=True, exclusive=True, group="review-context", exit_on_error=False)
    def load_context(self, nodes: list[Node]) -> None:
        """The transcript around each node (the first is shown, the rest are prefetched)."""
        for node in nodes:
            messages = self.source.node_context(node)
            if get_current_worker().is_cancelled:
                return
            self.post_message(NodeContextLoaded(node.node_id, messages))

    @work(thread=True, exclusive=True, group="review-counts", exit_on_error=False)
    def load_counts(self) -> None:
        counts = self.source.queue_counts()
        if not get_current_worker().is_cancelled:
            self.post_message(QueueCountsLoaded(counts))

    @work(thread=True, exclusive=True, group="review-projects", exit_on_error=False)
    def load_projects(self) -> None:
        self.post_message(ProjectsLoaded(self.source.projects()))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_decision(self, action: str, node_ids: list[str], values: dict[str, str]) -> None:
        # Not exclusive: every decision is written (the store serialises them).
        try:
            nodes = self.source.review(action, node_ids, **values)
        except LibrarianError as exc:
            self.post_message(DecisionFailed(action, node_ids, str(exc)))
            return
        except Exception:
            self.post_message(DecisionFailed(action, node_ids, ""))  # reported as a worker error
            raise
        self.post_message(NodesDecided(action, nodes))

    @work(thread=True, group="review-write", exit_on_error=False)
    def write_undo(self) -> None:
        try:
            nodes = self.source.undo_review()
        except LibrarianError as exc:
            self.post_message(DecisionFailed("undo", [], str(exc)))
            return
        self.post_message(DecisionUndone(nodes))

    # -- loading -----------------------------------------------------------------------

    def filters(self) -> NodeFilters:
        return self.screen.query_one(NodeFilters)

    def _filters(self) -> dict[str, Any]:
        return {
            **self.filters().chosen(),
            "order": self._order,
            "by_session": self._by_session,
        }

    def reload(self, focus: str | None = None) -> None:
        """Fetch the rows for the current filters (the table keeps its rows until then)."""
        self._requested = self._filters()
        self.load_nodes(self._requested, focus, first_page=not self.table().rows)

    def _load_the_rest(self, filters: dict[str, Any], focus: str | None) -> None:
        if filters is self._requested:  # unless the filters changed meanwhile
            self.load_nodes(filters, focus, first_page=False)

    def reload_if_changed(self) -> None:
        if self._filters() != self._requested:
            self.reload()

    def on_nodes_loaded(self, message: NodesLoaded) -> None:
        message.stop()
        table = self.table()
        narrowed = self._requested is not None and (
            self._requested["status"] != "pending"
            or any(self._requested[k] for k in ("type_", "project", "text"))
        )
        table.empty_text = self._empty_text(narrowed)
        focus = message.focus or self._want_focus
        if message.sessions is not None or table.grouped:
            table.group_by_session(message.sessions)
        table.set_rows(message.rows, focus=focus)
        if focus and table.current and table.current.node_id == focus:
            self._want_focus = None
        self._total = message.total
        if not self._projects_asked:  # after the first rows: they go first
            self._projects_asked = True
            self.load_projects()
        self._show_current(0)
        self.changed()
        self._bindings_follow()
        if not message.complete and self._requested is not None:
            self.call_after_refresh(self._load_the_rest, self._requested, message.focus)

    def _empty_text(self, narrowed: bool) -> str:
        requested = self._requested or {}
        if requested.get("status") == SUPPRESSED and not any(
            requested.get(k) for k in ("type_", "project", "text")
        ):
            return NO_SUPPRESSED
        if narrowed:
            return "No node matches the filters."
        return "Nothing waiting for review. Ingest sessions with `librarian ingest`."

    def on_queue_counts_loaded(self, message: QueueCountsLoaded) -> None:
        message.stop()
        self.counts = message.counts
        self.changed()

    def on_projects_loaded(self, message: ProjectsLoaded) -> None:
        message.stop()
        self._set_projects(message.projects)

    def _set_projects(self, projects: list[str]) -> None:
        self.filters().set_projects(projects)

    def on_node_context_loaded(self, message: NodeContextLoaded) -> None:
        message.stop()
        self._contexts[message.node_id] = message.messages
        while len(self._contexts) > CONTEXT_CACHE:
            del self._contexts[next(iter(self._contexts))]
        detail = self.detail_widget()
        shown = detail.node
        if shown is not None and shown.node_id == message.node_id and detail.transcript is None:
            detail.show(shown, message.messages)

    # -- the detail pane ---------------------------------------------------------------

    def _show_current(self, delay: float) -> None:
        """Show the node under the cursor now; its transcript (unless known) after `delay`."""
        node = self.table().current
        detail = self.detail_widget()
        if self._context_timer is not None:
            self._context_timer.stop()
            self._context_timer = None
        if node is None:
            detail.show(None)
            return
        known = self._contexts.get(node.node_id)
        detail.show(node, known)
        wanted = [n for n in (node, self._next_node()) if n and n.node_id not in self._contexts]
        if not wanted or [n.node_id for n in wanted] == self._requested_context:
            return  # known, or already on its way
        if delay:
            self._context_timer = self.set_timer(delay, lambda: self._request_context(wanted))
        else:
            self._request_context(wanted)

    def _request_context(self, nodes: list[Node]) -> None:
        self._requested_context = [n.node_id for n in nodes]
        self.load_context(nodes)

    def _next_node(self) -> Node | None:
        table = self.table()
        index = table.next_pending(self._open_statuses())
        return table.rows[index] if index is not None else None

    @on(NodeTable.Highlighted)
    def _highlighted(self, event: NodeTable.Highlighted) -> None:
        detail = self.detail_widget()
        if detail.node is not None and detail.node.node_id == event.node_id:
            return  # already shown (a decision moved the cursor and showed it at once)
        # The node itself is shown at once; its transcript when the cursor rests.
        self._show_current(CONTEXT_DELAY)
        self._bindings_follow()

    @on(NodeTable.MarksChanged)
    def _marks_changed(self) -> None:
        self.changed()

    @on(NodeTable.Selected)
    def _selected(self) -> None:
        self.detail_widget().focus()

    # -- decisions -------------------------------------------------------------------

    def _targets(self) -> list[str]:
        """The marked nodes, else the one under the cursor; nodes being written are left out."""
        table = self.table()
        busy = table.busy
        if table.marked:
            return [i for i in table.marked if i not in busy]
        current = table.current
        return [current.node_id] if current and current.node_id not in busy else []

    def _open_statuses(self) -> tuple[str, ...]:
        """The statuses of the rows that wait for a decision in this list: pending, and
        suppressed while the list shows them."""
        status = (self._requested or {}).get("status")
        return ("pending", SUPPRESSED) if status == SUPPRESSED else ("pending",)

    def _decide(self, action: str, node_ids: list[str], **values: str) -> None:
        table = self.table()
        table.set_busy(node_ids)
        current = table.current
        if action in ("approve", "reject", "unsuppress"):
            table.clear_marks()
            if current is not None and current.node_id in node_ids:
                table.move_to_next_pending(self._open_statuses())
                self._show_current(0)  # at once: no debounce after a decision
        self.write_decision(action, node_ids, values)

    def on_nodes_decided(self, message: NodesDecided) -> None:
        message.stop()
        table = self.table()
        before = len(table.rows)
        table.update_nodes(message.nodes, keep_status=(self._requested or {}).get("status"))
        self._total -= before - len(table.rows)
        detail = self.detail_widget()
        for node in message.nodes:
            if detail.node is not None and detail.node.node_id == node.node_id:
                detail.show(node, self._contexts.get(node.node_id))
        if message.action == "unsuppress" and message.nodes:
            count = len(message.nodes)
            undo = self.key_for("review.undo")
            self.notify(
                f"promoted {count} node{'s' if count != 1 else ''} to pending"
                + (f" ({undo}: undo)" if undo else ""),
                timeout=4,
                markup=False,
            )
        self.load_counts()
        self.changed()
        self._bindings_follow()

    def on_decision_failed(self, message: DecisionFailed) -> None:
        message.stop()
        self.table().set_busy(message.node_ids, busy=False)
        if not message.error:
            return
        self.notify(
            f"{message.action} failed: {message.error}",
            severity="error",
            timeout=8,
            markup=False,  # the message can quote node text: untrusted
        )

    def on_decision_undone(self, message: DecisionUndone) -> None:
        message.stop()
        if not message.nodes:
            self.notify("nothing to undo", timeout=3)
            return
        count = len(message.nodes)
        self.notify(f"undone: {count} node{'s' if count != 1 else ''} restored", timeout=3)
        self.reload(focus=message.nodes[0].node_id)
        self.load_counts()

    # -- actions -----------------------------------------------------------------------

    def _bindings_follow(self) -> None:
        """Grey the decision keys out (or back in) when the list empties (or fills), and
        promote when the selection holds no suppressed node (or does again)."""
        has_node = self.table().current is not None
        can_promote = bool(self._promotable())
        if (has_node, can_promote) != (self._had_node, self._could_promote):
            self._had_node, self._could_promote = has_node, can_promote
            self.screen.refresh_bindings()

    def _promotable(self) -> list[str]:
        """The suppressed nodes among the targets (marked, else under the cursor)."""
        table = self.table()
        if not table.mark_count:  # the common case, on every cursor move: no scan of the rows
            node = table.current
            ok = node is not None and node.status == SUPPRESSED and node.node_id not in table.busy
            return [node.node_id] if ok and node is not None else []
        rows = (_row(table, i) for i in self._targets())
        return [n.node_id for n in rows if n is not None and n.status == SUPPRESSED]

    def action_promote(self) -> None:
        targets = self._promotable()
        if targets:
            self._decide("unsuppress", targets)
        else:
            self.app.bell()

    def action_edit(self) -> None:
        table = self.table()
        node = table.current
        if node is None or node.node_id in table.busy:
            self.app.bell()
            return
        self.ask(
            TextPrompt(
                "Edit the summary",
                value=neutralise(node.summary, keep_newlines=False),  # untrusted: no raw controls
                placeholder="one or two sentences",
                hint="Enter saves · Escape cancels",
            ),
            lambda summary: self._decide("edit", [node.node_id], summary=summary),
        )

    def action_scope(self) -> None:
        table = self.table()
        targets = self._targets()
        lead = table.current if table.current and table.current.node_id in targets else None
        if lead is None and targets:
            index = table.index_of(targets[0])
            lead = table.rows[index] if index is not None else None
        if lead is None:
            self.app.bell()
            return
        # Every target takes the scope the first one switches to, so a mixed selection ends
        # up the same.
        scope = SCOPES[(SCOPES.index(lead.scope) + 1) % len(SCOPES)] if lead.scope in SCOPES else ""
        self._decide("scope", targets, scope=scope)

    def action_undo(self) -> None:
        self.write_undo()

    def action_skip(self) -> None:
        if self.table().move_to_next_pending(self._open_statuses()):
            self._show_current(0)
        else:
            self.app.bell()

    def action_focus_filter(self) -> None:
        self.filters().words.focus()

    def action_cycle_order(self) -> None:
        self._order = ORDERS[(ORDERS.index(self._order) + 1) % len(ORDERS)]
        self.reload()
        self.changed()

    def action_toggle_group(self) -> None:
        self._by_session = not self._by_session
        self.reload()
        self.changed()

    def action_cycle_type(self) -> None:
        self.filters().cycle_type()
        self.reload_if_changed()

    def action_cycle_status(self) -> None:
        self.filters().cycle_status()
        self.reload_if_changed()

    def action_toggle_project(self) -> None:
        self.filters().toggle_project(self.table().current)
        self.reload_if_changed()

    def action_clear(self) -> None:
        field = self.filters().words
        table = self.table()
        if field.has_focus and field.value:
            field.value = ""
        elif table.marked:
            table.clear_marks()
        else:
            table.focus()

    def show_node(self, node: Node) -> None:
        """Put the cursor on `node`, widening the filters when it is not listed."""
        table = self.table()
        table.focus()
        if table.move_to(node.node_id):
            self._show_current(0)
            return
        self._want_focus = node.node_id
        self.filters().widen_for(node)
        self.reload(focus=node.node_id)

    def action_show_suppressed(self) -> None:
        """List the nodes the knowledge bar kept out (again: the pending ones)."""
        self.filters().toggle_suppressed()
        self.reload_if_changed()

    def can_promote(self) -> bool:
        """True when the selection holds a suppressed node (for the command palette)."""
        return bool(self._promotable())

    def selection(self) -> tuple[Node | None, tuple[str, ...]]:
        """(the node under the cursor, the marked node ids) for the command palette."""
        table = self.table()
        return table.current, table.marked

    def action_toggle_source(self) -> bool:
        """Mine ⇄ team: the node list comes from this library or from the team hub.
        False when the hub cannot be reached (nothing changed)."""
        if self._team is not None:
            self._team.close()
            self._team = None
        else:
            try:
                self._team = TeamQueue(configured_hub(self.library.config))
            except LibrarianError as exc:
                self.notify(str(exc), severity="warning", timeout=8, markup=False)
                return False
        self._projects_asked = False
        self._contexts.clear()
        self.table().set_rows([])
        self.reload()
        self.load_counts()
        return True

    def subtitle(self) -> str:
        return f"Review queue · team ({self._team.where})" if self._team else self.SUBTITLE

    def on_unmount(self) -> None:
        if self._team is not None:
            self._team.close()

    def _suppressed_status(self, count: int) -> Text:
        """` · 90 kept out (S: show)` from the pending list (the status key's next stop), the
        promote key while they are listed."""
        text = Text(f" · {count:,} kept out")
        hint = KEPT_OUT_HINTS.get((self._requested or {}).get("status") or ALL)
        key = self.key_for(hint[0]) if hint else ""
        if hint and key:
            text.append(f" ({key}: {hint[1]})", style="dim")
        return text

    def status_with(self, others: list[Text]) -> Text:
        """The status line: counts, then what waits in the other lists (`others`), then
        what is shown."""
        table = self.table()
        text = Text()
        if self._team is not None:
            text.append("team ", style="bold reverse")
            text.append(" ")
        if self.counts is not None:
            waiting = "waiting for you" if self._team is not None else "pending"
            text.append(f"{self.counts.pending:,} {waiting}", style="bold")
            if self.counts.suppressed:
                text.append_text(self._suppressed_status(self.counts.suppressed))
            text.append(f" · {self.counts.decided_today:,} decided today")
        for other in others:
            text.append(" · ")
            text.append_text(other)
        shown = len(table.rows)
        text.append(f"  ·  showing {shown:,}", style="dim")
        if self._total > shown:
            text.append(f" of {self._total:,}", style="dim")
        text.append(f" · {ORDER_TITLES[self._order]}", style="dim")
        if self._by_session:
            text.append(" by session", style="dim")
        if table.marked:
            text.append(f"  ·  {len(table.marked):,} marked", style="bold")
        return text

    def palette_commands(self) -> list[PaletteCommand]:
        """Decisions on what the list has selected, and the switches between the lists."""
        current, marked = self.selection()
        commands: list[PaletteCommand] = [
            ("review: show the drafts", "toggle_drafts", "SKILL.md drafts waiting"),
            (
                "review: show the relation proposals",
                "toggle_relations",
                "Skills often used together, with no relation between them",
            ),
            (
                "review: show the suppressed nodes (or the pending ones)",
                "show_suppressed",
                "Nodes the knowledge bar kept out of the queue, with the reason",
            ),
            (
                "review: group by session (or one list)",
                "toggle_group",
                "Each session's nodes under its header, best first inside",
            ),
        ]
        if current is not None or marked:
            target = f"{len(marked)} marked nodes" if marked else "this node"
            about = about_node(current.summary) if current and not marked else target
            commands += [
                (f"node: approve {target}", "approve", about),
                (f"node: reject {target}…", "reject", about),
                (f"node: switch scope of {target}", "scope", "PROJECT ↔ TEAM"),
            ]
        if self.can_promote():
            commands.append(("node: promote to pending", "promote", "Back into the queue"))
        if current is not None:
            commands += [
                ("node: edit summary…", "edit", about_node(current.summary)),
                ("node: skip to the next pending", "skip", "Leave this one pending"),
                ("node: mark all listed", "mark_all", "Decide on them together"),
            ]
        commands += [
            ("node: undo my last decision", "undo", "Reverts the whole batch"),
            ("nodes: filter…", "focus_filter", "Words in the summary or evidence"),
        ]
        return commands


def about_node(summary: str) -> str:
    """A node's summary as palette help text (which the palette reads as markup)."""
    return escape(one_line(summary, 80))


def _row(table: NodeTable, node_id: str) -> Node | None:
    index = table.index_of(node_id)
    return table.rows[index] if index is not None else None
