"""A skill's events, newest first, one per line (line API); reaching the last row asks for
the next page when there is one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import Event
from store.text import one_line
from widgets.line_table import LineTable, fit, navigation_bindings, pad
from widgets.lineage_text import event_summary, when

#: (title, width); width 0 takes what is left.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("seq", 7),
    ("when", 16),
    ("event", 22),
    ("by", 18),
    ("what", 0),
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
        Binding(
            "enter",
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

    def render_header(self, width: int) -> Strip:
        return self._text_line(_header(width), "header", width)

    def render_row(self, row: Event, is_cursor: bool, width: int) -> Strip:
        cells = _cells(row, width)
        if is_cursor:
            base = self.get_component_rich_style("lineage-events--cursor")
            segments = [Segment(text, base) for _, text in cells]
        else:
            segments = [
                Segment(text, self.rich_style + self._cell_style(key, row)) for key, text in cells
            ]
        return Strip(segments).crop(0, width).simplify()

    def _cell_style(self, key: str, row: Event) -> Style:
        if key == "event" and row.payload.get("alert"):
            return self.get_component_rich_style("lineage-events--alert")
        if key == "event" and row.type.startswith("skill.") and "from" in row.payload:
            return self.get_component_rich_style("lineage-events--status")
        if key in ("seq", "when", "by"):
            return self.get_component_rich_style("lineage-events--dim")
        return Style()


def _widths(width: int) -> list[int]:
    fixed = sum(w for _, w in COLUMNS)
    return [w if w else max(width - fixed - len(COLUMNS), 10) for _, w in COLUMNS]


def _header(width: int) -> str:
    return " ".join(pad(title, w) for (title, _), w in zip(COLUMNS, _widths(width), strict=True))


def _cells(row: Event, width: int) -> list[tuple[str, str]]:
    values = [
        f"#{row.seq}",
        when(row.ts),
        one_line(row.type, 40),
        one_line(row.actor, 60),
        event_summary(row, 400),
    ]
    return [
        (key, fit(value, w) + " ")
        for (key, _), w, value in zip(COLUMNS, _widths(width), values, strict=True)
    ]
