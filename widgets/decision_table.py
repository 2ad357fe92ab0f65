"""The base of the review queue's decision tables (SKILL.md drafts, relation proposals,
enrichment proposals): fixed columns, and rows flagged busy — drawn dimmed — while a decision
on them is being written."""

from __future__ import annotations

from rich.style import Style

from widgets.line_table import KeyT, LineTable, RowT


class DecisionTable(LineTable[RowT, KeyT]):
    """Subclasses give `COLUMNS` and may style cells by column title in `cell_style`. Their
    `COMPONENT_PREFIX` needs `--header`, `--cursor`, `--busy` and `--dim` classes."""

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

    def _rows_replaced(self) -> None:
        self._busy &= {self.row_key(r) for r in self._rows}

    def row_style(self, row: RowT) -> Style | None:
        if self.row_key(row) in self._busy:
            return self.get_component_rich_style(f"{self.COMPONENT_PREFIX}--busy")
        return None
