"""A pattern's member nodes, one per line (line API); enter asks to see one in its DAG."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import NODE_TYPES, Node
from store.text import one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings

COLUMNS: tuple[Column[Node], ...] = (
    Column("type", 13, lambda r: one_line(r.type, 20)),
    Column("conf", 4, lambda r: f"{r.confidence:.2f}"[:4]),
    Column("summary", 0, lambda r: one_line(r.summary, 400)),
    Column("session", 8, lambda r: one_line(r.session_id, 40)),
)
TYPE_CLASSES: dict[str, str] = {
    t: f"pattern-members--{t.lower().replace('_', '-')}" for t in NODE_TYPES
}


class PatternMembers(LineTable[Node, str]):
    """The nodes a pattern was consolidated from, most confident first.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | show the node in its session's reasoning graph |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "members",
            up="Previous node",
            down="Next node",
            page_up="Up a page",
            page_down="Down a page",
            first="First node",
            last="Last node",
        ),
        bind(
            "open",
            "select",
            "Show in graph",
            show=False,
            id="members.select",
            tooltip="Open the node's session on the Sessions screen, on this node",
        ),
    ]

    COMPONENT_CLASSES = {
        *TYPE_CLASSES.values(),
        "pattern-members--header",
        "pattern-members--cursor",
        "pattern-members--dim",
    }

    DEFAULT_CSS = """
    PatternMembers > .pattern-members--header {
        background: $panel; color: $text; text-style: bold;
    }
    PatternMembers > .pattern-members--cursor { background: $block-cursor-blurred-background; }
    PatternMembers:focus > .pattern-members--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    PatternMembers > .pattern-members--dim { color: $text-muted; }
    PatternMembers > .pattern-members--hypothesis { color: $text-accent; }
    PatternMembers > .pattern-members--investigation { color: $text-primary; }
    PatternMembers > .pattern-members--discovery { color: $text-primary; text-style: bold; }
    PatternMembers > .pattern-members--pivot { color: $text-warning; text-style: bold; }
    PatternMembers > .pattern-members--dead-end { color: $text-error; text-style: bold; }
    PatternMembers > .pattern-members--solution { color: $text-success; text-style: bold; }
    PatternMembers > .pattern-members--context-load { color: $text-muted; }
    """

    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "pattern-members"

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No member nodes."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another node (None when the list is empty)."""

        table: PatternMembers
        node_id: str | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a node."""

        table: PatternMembers
        node_id: str

    def row_key(self, row: Node) -> str:
        return row.node_id

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: str | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: str) -> None:
        self.post_message(self.Selected(self, key))

    # -- rendering -----------------------------------------------------------------

    def cell_style(self, key: str, row: Node) -> Style:
        if key == "type":
            return self.get_component_rich_style(TYPE_CLASSES.get(row.type, "pattern-members--dim"))
        if key in ("conf", "session"):
            return self.get_component_rich_style("pattern-members--dim")
        return Style()
