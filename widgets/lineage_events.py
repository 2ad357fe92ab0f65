"""A skill's events, newest first, one per line (line API); reaching the last row asks for
the next page when there is one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import Event
from store.text import one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings
from widgets.lineage_text import event_summary, when

COLUMNS: tuple[Column[Event], ...] = (
    Column("seq", 7, lambda r: f"#{r.seq}"),
    Column("when", 16, lambda r: when(r.ts)),
    Column("event", 22, lambda r: one_line(r.type, 40)),
    Column("by", 18, lambda r: one_line(r.actor, 60)),
    Column("what", 0, lambda r: event_summary(r, 400)),
)


class LineageEvents(LineTable[Event, int]):
    """Events whose subject is the skill, newest first.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor (the last row loads older events) |
    | pageup, pagedown, home, end | jump |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "events",
            up="Newer event",
            down="Older event",
            page_up="Up a page",
            page_down="Down a page",
            first="Newest event",
            last="Oldest event loaded (loads more when there are)",
        ),
        bind(
            "open",
            "select",
            "Select",
            show=False,
            id="events.select",
            tooltip="Load older events when this is the last one loaded",
        ),
    ]

    COMPONENT_CLASSES = {
        "lineage-events--header",
        "lineage-events--cursor",
        "lineage-events--dim",
        "lineage-events--status",
        "lineage-events--alert",
    }

    DEFAULT_CSS = """
    LineageEvents > .lineage-events--header { background: $panel; color: $text; text-style: bold; }
    LineageEvents > .lineage-events--cursor { background: $block-cursor-blurred-background; }
    LineageEvents:focus > .lineage-events--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    LineageEvents > .lineage-events--dim { color: $text-muted; }
    LineageEvents > .lineage-events--status { color: $text-primary; text-style: bold; }
    LineageEvents > .lineage-events--alert { color: $text-error; text-style: bold; }
    """

    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "lineage-events"

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No events."

    @dataclass
    class MoreWanted(Message):
        """The cursor reached the last event loaded and there are older ones."""

        table: LineageEvents
        offset: int  # how many are loaded (the next page starts there)

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.total = 0  # how many events the skill has (more than `rows` when paged)

    def row_key(self, row: Event) -> int:
        return row.seq

    def show(self, events: list[Event], total: int) -> None:
        """Replace the events (newest first) and say how many there are in all."""
        self.total = total
        self.set_rows(events)

    def extend(self, events: list[Event], total: int) -> None:
        """Add an older page below the loaded events (the cursor stays where it is)."""
        known = {e.seq for e in self.rows}
        self.total = total
        self.set_rows([*self.rows, *(e for e in events if e.seq not in known)])

    @property
    def has_more(self) -> bool:
        return len(self.rows) < self.total

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: int | None) -> None:
        if key is not None and self.cursor == len(self.rows) - 1 and self.has_more:
            self.post_message(self.MoreWanted(self, len(self.rows)))

    def _select(self, key: int) -> None:
        self._announce(key)

    # -- rendering -----------------------------------------------------------------

    def cell_style(self, key: str, row: Event) -> Style:
        if key == "event" and row.payload.get("alert"):
            return self.get_component_rich_style("lineage-events--alert")
        if key == "event" and row.type.startswith("skill.") and "from" in row.payload:
            return self.get_component_rich_style("lineage-events--status")
        if key in ("seq", "when", "by"):
            return self.get_component_rich_style("lineage-events--dim")
        return Style()
