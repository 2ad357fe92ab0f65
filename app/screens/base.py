"""What every librarian screen shares: one place that turns worker errors into notices, the
key a binding is on, the command palette entries a screen offers, and the one way drafts are
written (from the Patterns screen and from the review queue).

Screens never call the app: they navigate by posting messages (`app.messages`), which the app
handles; the palette runs their entries as actions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events
from textual.binding import Binding
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from app.live import LibraryChanged
from app.messages import DraftFailed, DraftWritten
from store.errors import LibrarianError
from store.library import Library
from store.text import one_line
from widgets.keys import GROUPS, verb_of

#: The screens by number key, in the order of the design: (key, mode name, title).
VIEWS: tuple[tuple[str, str, str], ...] = (
    ("1", "review", "Review"),
    ("2", "sessions", "Sessions"),
    ("3", "skills", "Skills"),
    ("4", "graph", "Graph"),
    ("5", "health", "Health"),
    ("6", "patterns", "Patterns"),
    ("7", "lineage", "Lineage"),
    ("8", "runbook", "Runbook"),
    ("9", "team", "Team"),
)

#: Narrower than this, footers leave the command palette's key out.
NARROW_FOOTER = 100

#: A command palette entry: (title, action, help). The action is run with `App.run_action`
#: on the screen that offered it (prefix `app.` for the app's own actions). Titles are shown
#: literally; help is read as markup (escape untrusted text).
PaletteCommand = tuple[str, str, str]

#: What a draft decision reads as in a notification, by action.
DRAFT_DONE = {
    "draft": "drafted {name}: it waits in the review queue",
    "approve": "approved {name}: installed as a proposed skill",
    "reject": "rejected the draft {name}",
    "keep": "kept a literal in {name} on purpose",
    "unkeep": "replaced a kept literal in {name} by its parameter again",
}


class LibrarianScreen(Screen[None]):
    """Base screen; worker failures become one error notification, never a crash.

    `loaded` turns true once the screen's first data is drawn and it answers keys (the
    bench's "interactive" moment). Screens that can centre on one skill override
    `show_skill`."""

    loaded: bool = False

    def on_resize(self, event: events.Resize) -> None:
        """Below `NARROW_FOOTER` columns the footer leaves out the palette's key (the `?`
        sheet names it), so the screen's own keys, `?` last, fit in 80 columns."""
        for footer in self.query(Footer):
            footer.show_command_palette = event.size.width >= NARROW_FOOTER

    def palette_commands(self) -> list[PaletteCommand]:
        """This screen's entries in the command palette, for its current state."""
        return []

    async def show_skill(self, skill: str) -> None:
        """Centre the screen on one skill (by name); screens without a skill focus ignore it."""

    def on_library_changed(self, message: LibraryChanged) -> None:
        """The library changed elsewhere (`app.live`): show it as it is now."""
        self.library_changed(message)

    def library_changed(self, message: LibraryChanged) -> None:
        """Reload what the screen shows. By default as when it is shown again (its
        `on_screen_resume`); screens with more to reload override this."""
        resume = getattr(self, "on_screen_resume", None)
        if resume is not None:
            resume()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_error(self, event)

    def key_for(self, binding_id: str) -> str:
        """The key bound to `binding_id` as the footer shows it (after the user's keymap),
        or "" when it is not active (e.g. while an input has the focus)."""
        return key_for(self, binding_id)

    def tell_draft(self, message: DraftWritten | DraftFailed) -> None:
        """Notify how a draft decision went (draft names and errors are shown literally)."""
        tell_draft(self, message)


def tell_draft(node: Widget, message: DraftWritten | DraftFailed) -> None:
    """Notify how a draft decision went (draft names and errors are shown literally)."""
    if isinstance(message, DraftWritten):
        text = DRAFT_DONE[message.action].format(name=one_line(message.draft.name, 80))
        node.notify(text, timeout=5, markup=False)
    elif message.error:
        node.notify(
            one_line(f"{message.action} failed: {message.error}", 300),
            severity="error",
            timeout=8,
            markup=False,
        )


def report_worker_error(node: DOMNode, event: Worker.StateChanged) -> None:
    """A failed worker becomes one error notification, never a crash."""
    if event.state == WorkerState.ERROR and event.worker.error is not None:
        error = event.worker.error
        node.app.notify(
            one_line(f"{event.worker.name or 'task'} failed: {error}", 300),
            severity="error",
            timeout=8,
            markup=False,  # error text can quote skill names and paths: untrusted
        )


def key_for(screen: Screen[Any], binding_id: str) -> str:
    """The key bound to `binding_id` on `screen` as the footer shows it, or ""."""
    for active in screen.active_bindings.values():
        if active.binding.id == binding_id:
            return screen.app.get_key_display(active.binding)
    return ""


#: Verbs the palette leaves out: moving a cursor is not a command.
CURSOR_VERBS = frozenset({"up", "down", "page_up", "page_down", "first", "last", "view", "keys"})


@dataclass(frozen=True)
class KeyRow:
    """One key of the current screen as the `?` sheet and the palette show it: the binding,
    the node whose action it runs, its keys as the footer shows them, its group in the
    grammar (`widgets.keys`) and whether it works now (False: greyed out)."""

    binding: Binding
    node: DOMNode
    keys: str
    group: str
    verb: str
    enabled: bool

    @property
    def text(self) -> str:
        """What the key does (its tooltip, else its description)."""
        return self.binding.tooltip or self.binding.description


def screen_keys(screen: Screen[Any]) -> list[KeyRow]:
    """Every key of the grammar that works on `screen` in its current state (the focused
    widget's, the screen's, the app's), one row per binding, in the grammar's group order.
    Keys whose action does not apply here (`check_action` False) are not listed; greyed ones
    are."""
    rows: dict[tuple[int, str], KeyRow] = {}
    for active in screen.active_bindings.values():
        binding = active.binding
        slot = (id(active.node), binding.id or binding.action)
        shown = screen.app.get_key_display(binding)
        if slot in rows:
            row = rows[slot]
            if shown not in row.keys.split(" "):
                rows[slot] = KeyRow(
                    row.binding, row.node, f"{row.keys} {shown}", row.group, row.verb, row.enabled
                )
            continue
        verb = verb_of(binding)
        if verb is None:  # Textual's own (scrolling, an input's editing keys)
            continue
        rows[slot] = KeyRow(binding, active.node, shown, verb.group, verb.name, active.enabled)
    return sorted(rows.values(), key=lambda r: GROUPS.index(r.group))


def decide_draft(
    library: Library, action: str, key: str, reason: str = ""
) -> DraftWritten | DraftFailed:
    """Draft a SKILL.md (`key`: a pattern id), approve or reject one (`key`: a draft id).
    Blocking: call it from a thread worker. A refusal comes back as `DraftFailed`."""
    try:
        if action == "draft":
            draft = library.draft(key)
        elif action == "approve":
            draft = library.approve_draft(key)
        elif action == "reject":
            draft = library.reject_draft(key, reason)
        elif action in ("keep", "unkeep"):  # `reason`: the literal
            draft = library.keep_literal(key, reason, keep=action == "keep")
        else:
            raise ValueError(f"unknown draft action {action!r}")
    except LibrarianError as exc:
        return DraftFailed(action, key, str(exc))
    return DraftWritten(action, draft)
