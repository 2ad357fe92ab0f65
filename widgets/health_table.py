"""The Health screen's table: skills worst first (DRIFTING, DEGRADING, HEALTHY, IDLE), drawn
with the line API so 50,000 rows scroll smoothly.

Columns: verdict (coloured), skill, status (`⇢v2`: a candidate version proving itself), runs
and failures in the window (of the served version, once it has enough), failure rate,
the weekly failure-rate trend as a sparkline (a week without runs is a dim dot; "…" while
the trends are still being counted), the last run and the flags.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import BindingType
from textual.message import Message
from textual.strip import Strip

from store.models import HEALTH_VERDICTS, SkillHealth
from store.text import one_line
from widgets.graph_style import status_style, verdict_style
from widgets.keys import bind
from widgets.line_table import Column, LineTable, fit, fit_cell, navigation_bindings

SPARKS = "▁▂▃▄▅▆▇█"
NO_RUNS = "·"
NO_TREND = (-1.0,) * 8  # eight weeks without runs
#: The columns; the cells are drawn by `HealthTable.render_row` (each in its own style, the
#: trend as a sparkline).
#: Below this width the last run and the flags are left out (the detail pane has them).
NARROW = 100
COLUMNS: tuple[Column[SkillHealth], ...] = (
    Column("verdict", 9),
    Column("skill", 0),
    Column("status", 10),
    Column("runs", 5, right=True),
    Column("fail", 5, right=True),
    Column("rate", 4, right=True),
    Column("trend", 8),
    Column("last run", 10, narrow=NARROW),
    Column("flags", 26, narrow=NARROW),
)


def matching(rows: Iterable[SkillHealth], verdict: str | None, text: str) -> list[SkillHealth]:
    """The rows with `verdict` (None: any) whose name, status or flags contain every word
    of `text` (any case), in the order given (worst first)."""
    words = text.casefold().split()
    return [
        h
        for h in rows
        if (verdict is None or h.verdict == verdict) and all(w in _haystack(h) for w in words)
    ]


def _haystack(h: SkillHealth) -> str:
    return "\n".join((h.name, h.status, h.verdict, *h.flags)).casefold()


def sparkline(trend: tuple[float, ...]) -> list[tuple[str, bool]]:
    """(character, is a week without runs) per week, oldest first; "…" while unknown."""
    if not trend:
        return [("…", True)]
    return [(NO_RUNS, True) if r < 0 else (SPARKS[min(7, int(r * 7.999))], False) for r in trend]


def status_text(h: SkillHealth) -> str:
    """The status, and `⇢v2` while a new version proves itself as the candidate."""
    if h.candidate is not None and h.candidate.open:
        return f"{h.status} ⇢v{h.candidate.version_no}"
    return h.status


def flags_text(h: SkillHealth) -> str:
    if not h.flags:
        return ""
    more = f" +{len(h.flags) - 1}" if len(h.flags) > 1 else ""
    return one_line(h.flags[0], 60) + more


class HealthTable(LineTable[SkillHealth, int]):
    """Skills by health, one per line; the header stays put while the rows scroll.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | to the detail of the skill under the cursor |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings(
            "health",
            up="Previous skill",
            down="Next skill",
            page_up="Up a page",
            page_down="Down a page",
            first="Worst skill",
            last="Last skill",
        ),
        bind(
            "open",
            "select",
            "Detail",
            show=False,
            id="health.select",
            tooltip="To the skill's versions, flags and recent runs",
        ),
    ]

    COMPONENT_CLASSES = {
        "health-table--header",
        "health-table--cursor",
        "health-table--dim",
        "health-table--warning",
    }

    DEFAULT_CSS = """
    HealthTable > .health-table--header { background: $panel; color: $text; text-style: bold; }
    HealthTable > .health-table--cursor { background: $block-cursor-blurred-background; }
    HealthTable:focus > .health-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    HealthTable > .health-table--dim { color: $text-muted; }
    HealthTable > .health-table--warning { color: $text-warning; }
    """

    FILL_MIN = 12
    COLUMNS = COLUMNS
    COMPONENT_PREFIX = "health-table"
    KEEP_POSITION = True

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text = "No skills."

    @dataclass
    class Highlighted(Message):
        """The cursor moved onto another skill (None when the table is empty)."""

        table: HealthTable
        skill_id: int | None

    @dataclass
    class Selected(Message):
        """Enter was pressed on a skill."""

        table: HealthTable
        skill_id: int

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._index: dict[int, int] = {}
        self._trends: Mapping[int, tuple[float, ...]] | None = None

    def set_trends(self, trends: Mapping[int, tuple[float, ...]] | None) -> None:
        """Weekly trends by skill id for rows computed without them (None: still unknown);
        a skill missing from `trends` had no runs in those weeks."""
        self._trends = trends
        self.refresh()

    def trend_of(self, h: SkillHealth) -> tuple[float, ...]:
        """The row's trend, or the one set later, or () while it is being counted."""
        if h.trend or self._trends is None:
            return h.trend
        return self._trends.get(h.skill_id, NO_TREND)

    def row_key(self, row: SkillHealth) -> int:
        return row.skill_id

    def index_of(self, key: int) -> int | None:
        return self._index.get(key)

    def index_of_name(self, name: str) -> int | None:
        return next((i for i, h in enumerate(self._rows) if h.name == name), None)

    # -- hooks ---------------------------------------------------------------------

    def _announce(self, key: int | None) -> None:
        self.post_message(self.Highlighted(self, key))

    def _select(self, key: int) -> None:
        self.post_message(self.Selected(self, key))

    def _rows_replaced(self) -> None:
        self._index = {h.skill_id: i for i, h in enumerate(self._rows)}

    # -- rendering -----------------------------------------------------------------

    def render_row(self, row: SkillHealth, is_cursor: bool, width: int) -> Strip:
        cursor = self.get_component_rich_style("health-table--cursor")
        segments = [
            Segment(text, cursor if is_cursor else self.rich_style + style)
            for text, style in self._cells(row, width)
        ]
        return Strip(segments).crop(0, width).simplify()

    def _cells(self, h: SkillHealth, width: int) -> list[tuple[str, Style]]:
        widths = self.column_widths(width)
        dim = self.get_component_rich_style("health-table--dim")
        warning = self.get_component_rich_style("health-table--warning")
        rate = f"{h.failure_rate:.0%}" if h.runs else "-"
        plain = [
            (h.verdict, verdict_style(h.verdict)),
            (one_line(h.name, 300), Style()),
            (status_text(h), status_style(h.status)),
            (f"{h.runs:,}" if h.runs else "-", Style() if h.runs else dim),
            (f"{h.failures:,}" if h.failures else "-", Style() if h.failures else dim),
            (rate, verdict_style(h.verdict) if h.failures else dim),
        ]
        cells: list[tuple[str, Style]] = []
        for column, w, (value, style) in zip(COLUMNS, widths, plain, strict=False):
            cells.append((fit_cell(column, value, w) + " ", style))
        trend_style = verdict_style(h.verdict) if h.verdict != "IDLE" else dim
        spark = sparkline(self.trend_of(h))
        for char, empty in spark:
            cells.append((char, dim if empty else trend_style))
        cells.append((" " * (widths[6] - len(spark) + 1), Style()))
        if widths[7]:
            cells.append((fit(h.last_run[:10] or "never", widths[7]) + " ", dim))
        if widths[8]:
            cells.append((fit(flags_text(h), widths[8]), warning))
        return cells


#: Retired skills are counted apart from the verdicts (as `store.lifecycle.health.first`).
RETIRED = "retired"


def verdict_counts(rows: Iterable[SkillHealth]) -> dict[str, int]:
    """How many skills have each verdict; retired skills (no longer served) apart."""
    counts = {**dict.fromkeys(HEALTH_VERDICTS, 0), RETIRED: 0}
    for h in rows:
        key = RETIRED if h.status == "retired" else h.verdict
        counts[key] = counts.get(key, 0) + 1
    return counts
