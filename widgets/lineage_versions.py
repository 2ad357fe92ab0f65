"""A skill's versions, newest first, one per line (line API): when, how it came (installed or
changed), the statuses it went through, its fate as a candidate version (proving itself, took
over, set aside, replaced), which one is served, its spec warnings and lint findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import SKILL_STATUSES, LineageVersion
from store.text import one_line
from widgets.line_table import LineTable, fit, navigation_bindings, pad
from widgets.lineage_text import when

#: (title, width); width 0 takes what is left.
COLUMNS: tuple[tuple[str, int], ...] = (
    ("ver", 4),
    ("date", 16),
    ("how", 9),
    ("status", 0),
    ("warn", 4),
    ("lint", 4),
)
STATUS_CLASSES = {s: f"lineage-versions--{s}" for s in SKILL_STATUSES}


class LineageVersions(LineTable[LineageVersion, int]):
    """Versions of one skill; the highlighted one's diff with the one before is shown beside.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor (the diff follows) |
    | pageup, pagedown, home, end | jump |
    | enter | read the diff |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "versions",
            up="Newer version",
            down="Older version",
            page_up="Up a page",
            page_down="Down a page",
            first="Newest version",
            last="First version",
        ),
        Binding(
            "enter",
            "select",
            "Read diff",
            show=False,
            id="versions.select",
            tooltip="Scroll through what changed in this version",
        ),
    ]

    COMPONENT_CLASSES = {
        *STATUS_CLASSES.values(),
        "lineage-versions--header",
        "lineage-versions--cursor",
        "lineage-versions--dim",
        "lineage-versions--warning",
        "lineage-versions--high",
    }

    DEFAULT_CSS = """
    LineageVersions > .lineage-versions--header {
        background: $panel; color: $text; text-style: bold;
    }
    LineageVersions > .lineage-versions--cursor { background: $block-cursor-blurred-background; }
    LineageVersions:focus > .lineage-versions--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    LineageVersions > .lineage-versions--dim { color: $text-muted; }
    LineageVersions > .lineage-versions--warning { color: $text-warning; }
    LineageVersions > .lineage-versions--high { color: $text-error; text-style: bold; }
    LineageVersions > .lineage-versions--proposed { color: $text-accent; }
    LineageVersions > .lineage-versions--stable { color: $text-success; }
    LineageVersions > .lineage-versions--deprecated { color: $text-warning; }
    LineageVersions > .lineage-versions--retired { color: $text-error; text-style: bold; }
    LineageVersions > .lineage-versions--uninstalled { color: $text-muted; }
    """

    COMPONENT_PREFIX = "lineage-versions"

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No versions."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another version (None when the list is empty)."""

        table: LineageVersions
        version_no: int | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a version."""

        table: LineageVersions
        version_no: int

    def row_key(self, row: LineageVersion) -> int:
        return row.version_no

    def previous_of(self, version_no: int) -> int:
        """The version before `version_no` (0 when it is the first)."""
        older = [r.version_no for r in self.rows if r.version_no < version_no]
        return max(older, default=0)

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: int | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: int) -> None:
        self.post_message(self.Selected(self, key))

    # -- rendering -----------------------------------------------------------------

    def render_header(self, width: int) -> Strip:
        return self._text_line(_header(width), "header", width)

    def render_row(self, row: LineageVersion, is_cursor: bool, width: int) -> Strip:
        cells = _cells(row, width)
        if is_cursor:
            base = self.get_component_rich_style("lineage-versions--cursor")
            segments = [Segment(text, base) for _, text in cells]
        else:
            segments = [
                Segment(text, self.rich_style + self._cell_style(key, row)) for key, text in cells
            ]
        return Strip(segments).crop(0, width).simplify()

    def _cell_style(self, key: str, row: LineageVersion) -> Style:
        if key == "status" and "set aside" in row.fate:
            return self.get_component_rich_style("lineage-versions--warning")
        if key == "status" and row.statuses:
            name = STATUS_CLASSES.get(row.statuses[-1], "lineage-versions--dim")
            return self.get_component_rich_style(name)
        if key == "warn" and row.warning_count:
            return self.get_component_rich_style("lineage-versions--warning")
        if key == "lint" and row.finding_count:
            high = row.max_severity == "high"
            return self.get_component_rich_style(
                f"lineage-versions--{'high' if high else 'warning'}"
            )
        if key in ("date", "how", "warn", "lint"):
            return self.get_component_rich_style("lineage-versions--dim")
        return Style()


def _widths(width: int) -> list[int]:
    fixed = sum(w for _, w in COLUMNS)
    return [w if w else max(width - fixed - len(COLUMNS), 8) for _, w in COLUMNS]


def _header(width: int) -> str:
    return " ".join(pad(title, w) for (title, _), w in zip(COLUMNS, _widths(width), strict=True))


def _cells(row: LineageVersion, width: int) -> list[tuple[str, str]]:
    status = " → ".join(one_line(s, 20) for s in row.statuses) or "-"
    if row.fate:
        status = f"{status} · {row.fate}"
    if row.served:
        status = f"{status} · served"
    values = [
        f"v{row.version_no}",
        when(row.created_at),
        row.event.removeprefix("skill."),
        status,
        str(row.warning_count) if row.warning_count else "-",
        str(row.finding_count) if row.finding_count else "-",
    ]
    return [
        (key, fit(value, w) + " ")
        for (key, _), w, value in zip(COLUMNS, _widths(width), values, strict=True)
    ]
