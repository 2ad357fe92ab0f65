"""The base of the review queue's decision tables (SKILL.md drafts, relation proposals): fixed
columns, and rows flagged busy — drawn dimmed — while a decision on them is being written."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from widgets.line_table import KeyT, LineTable, RowT, fit, pad


class DecisionTable(LineTable[RowT, KeyT]):
    """Subclasses give `COLUMNS` ((title, width); width 0 takes what is left), `values` (one
    string per column), and may style cells by column title in `_cell_style`. Their
    `COMPONENT_PREFIX` needs `--header`, `--cursor`, `--busy` and `--dim` classes."""

    COLUMNS: ClassVar[tuple[tuple[str, int], ...]] = ()
    KEEP_POSITION = True

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._busy: set[KeyT] = set()

    @property
    def busy(self) -> frozenset[KeyT]:
        return frozenset(self._busy)

    def set_busy(self, key: KeyT, busy: bool = True) -> None:
        """Flag a row while a decision on it is being written (drawn dimmed)."""
        if busy:
            self._busy.add(key)
        else:
            self._busy.discard(key)
        self.refresh()

    def values(self, row: RowT) -> list[str]:
        """The row's text, one string per column."""
        raise NotImplementedError

    def _cell_style(self, key: str, row: RowT) -> Style:
        return Style()

    def _rows_replaced(self) -> None:
        self._busy &= {self.row_key(r) for r in self._rows}

    # -- rendering -----------------------------------------------------------------

    def _widths(self, width: int) -> list[int]:
        fixed = sum(w for _, w in self.COLUMNS)
        return [w if w else max(width - fixed - len(self.COLUMNS), 10) for _, w in self.COLUMNS]

    def render_header(self, width: int) -> Strip:
        titles = zip(self.COLUMNS, self._widths(width), strict=True)
        return self._text_line(" ".join(pad(title, w) for (title, _), w in titles), "header", width)

    def cells(self, row: RowT, width: int) -> list[tuple[str, str]]:
        """(column title, its text fitted to the column) for one row."""
        return [
            (key, fit(value, w) + " ")
            for (key, _), w, value in zip(
                self.COLUMNS, self._widths(width), self.values(row), strict=True
            )
        ]

    def render_row(self, row: RowT, is_cursor: bool, width: int) -> Strip:
        cells = self.cells(row, width)
        prefix = self.COMPONENT_PREFIX
        if is_cursor:
            base = self.get_component_rich_style(f"{prefix}--cursor")
            segments = [Segment(text, base) for _, text in cells]
        elif self.row_key(row) in self._busy:
            dim = self.rich_style + self.get_component_rich_style(f"{prefix}--busy")
            segments = [Segment(text, dim) for _, text in cells]
        else:
            segments = [
                Segment(text, self.rich_style + self._cell_style(key, row)) for key, text in cells
            ]
        return Strip(segments).crop(0, width).simplify()
