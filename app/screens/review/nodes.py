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

from typing import ClassVar

from rich.text import Text
from textual.markup import escape

from app.dialogs.text_prompt import TextPrompt
from app.messages import (
    DecisionFailed,
    DecisionUndone,
    NodesDecided,
)
from app.screens.base import PaletteCommand
from app.screens.review.filters import ALL, SUPPRESSED
from app.screens.review.node_list import ORDERS, NodeList
from store.errors import LibrarianError
from store.models import SCOPES, Node
from store.team.connection import configured_hub
from store.team.review import TeamQueue
from store.text import neutralise, one_line
from widgets.node_table import NodeTable

ORDER_TITLES = {
    "best": "best first",
    "oldest": "oldest first",
    "newest": "newest first",
    "confidence": "most confident first",
    "type": "by type",
    "session": "by session",
}
#: The status line's hint after the count of suppressed nodes, by status filter: (binding id,
#: what it does).
KEPT_OUT_HINTS = {
    "pending": ("review.status", "show"),
    SUPPRESSED: ("review.promote", "promote to pending"),
}


class NodesPane(NodeList):
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

    def can(self, action: str) -> bool | None:
        if action in ("approve", "reject", "scope", "edit", "skip"):
            return True if self.table().current is not None else None
        if action in ("promote", "undo") and self._team is not None:
            return False  # decisions in the hub are history: decided again, not undone
        if action == "promote":
            return True if self._promotable() else None
        return action in self.ACTIONS

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

    # -- decisions -------------------------------------------------------------------

    def _targets(self) -> list[str]:
        """The marked nodes, else the one under the cursor; nodes being written are left out."""
        table = self.table()
        busy = table.busy
        if table.marked:
            return [i for i in table.marked if i not in busy]
        current = table.current
        return [current.node_id] if current and current.node_id not in busy else []

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
        """Clear the filters and the marks; when there were none, back to the list."""
        table = self.table()
        cleared = self.filters().clear()
        if table.marked:
            table.clear_marks()
            cleared = True
        if cleared:
            self.reload_if_changed()
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
