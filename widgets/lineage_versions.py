"""A skill's versions, newest first, one per line (line API): when, how it came (installed or
changed), the statuses it went through, its fate as a candidate version (proving itself, took
over, set aside, replaced), which one is served, its spec warnings and lint findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from textual.binding import BindingType
from textual.message import Message

from store.models import SKILL_STATUSES, LineageVersion
from store.text import one_line
from widgets.keys import bind
from widgets.line_table import Column, LineTable, navigation_bindings
from widgets.lineage_text import when

#: Below this width how a version came and its warning and lint counts are left out (the status
#: keeps room).
NARROW = 56
COLUMNS: tuple[Column[LineageVersion], ...] = (
    Column("ver", 4, lambda r: f"v{r.version_no}"),
    Column("date", 16, lambda r: when(r.created_at)),
    Column("how", 9, lambda r: r.event.removeprefix("skill."), narrow=NARROW),
    Column("status", 0, lambda r: status_text(r)),
    Column("warn", 4, lambda r: str(r.warning_count) if r.warning_count else "-", narrow=NARROW),
    Column("lint", 4, lambda r: str(r.finding_count) if r.finding_count else "-", narrow=NARROW),
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
        bind(
            "open",
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

    FILL_MIN = 8
    COLUMNS = COLUMNS
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

    def cell_style(self, key: str, row: LineageVersion) -> Style:
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


def status_text(row: LineageVersion) -> str:
    """The statuses the version went through, its fate, and whether it is served."""
    status = " → ".join(one_line(s, 20) for s in row.statuses) or "-"
    if row.fate:
        status = f"{status} · {row.fate}"
    if row.served:
        status = f"{status} · served"
    return status
