"""The base of the line-API tables: a cursor over rows under a fixed header (smooth at 10,000+
rows). Subclasses say how a row is keyed, which columns it has (`Column`: title, width rule,
cell renderer) and which messages they post; the header, the widths and the row's cells
follow from the columns."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from widgets.keys import bind

RowT = TypeVar("RowT")
KeyT = TypeVar("KeyT")

#: (action, description, verb: also the id suffix) of the navigation bindings, in help order.
_NAVIGATION: tuple[tuple[str, str, str], ...] = (
    ("cursor_up", "Up", "up"),
    ("cursor_down", "Down", "down"),
    ("page_up_rows", "Page up", "page_up"),
    ("page_down_rows", "Page down", "page_down"),
    ("first", "First", "first"),
    ("last", "Last", "last"),
)


@dataclass(frozen=True)
class Column(Generic[RowT]):
    """One column: its title, its width (0: what the fixed columns leave, at least the
    table's FILL_MIN; a path column is no wider than its longest path) and how a row's cell
    reads (`text`; None: the table's `cell_text` supplies it); `narrow` leaves it out of a
    narrow table. Right-aligned cells keep their end; `keep_end` cuts a long text at its start
    (paths, where they differ)."""

    title: str
    width: int
    text: Callable[[RowT], str] | None = None
    right: bool = False
    keep_end: bool = False
    #: Left out of a table narrower than this (the detail pane still has it).
    narrow: int = 0


def navigation_bindings(prefix: str, **tooltips: str) -> list[BindingType]:
    """The cursor bindings, with ids `{prefix}.up` … `{prefix}.last` and tooltips by id suffix
    (`up=…`, `page_down=…`); the keys are hidden from the footer."""
    return [
        bind(name, action, text, show=False, id=f"{prefix}.{name}", tooltip=tooltips.get(name, ""))
        for action, text, name in _NAVIGATION
    ]


class LineTable(ScrollView, Generic[RowT, KeyT], can_focus=True):
    """Rows of `RowT`, one per line, under a header that stays put while the rows scroll.

    Subclasses give `row_key`, `COLUMNS` (or their own `render_header` and `render_row`),
    `_announce` and `_select` (which post their own messages), `COMPONENT_PREFIX` (whose
    `--dim` class draws `empty_text` and whose `--header` and `--cursor` classes draw the
    header and the cursor row), and
    their BINDINGS: `navigation_bindings(prefix, …)`, their own, then enter → `select`, so that
    the help panel lists enter last. A subclass that draws lines between its rows (group
    headers) maps rows to lines with `_line_count`, `_line_of`, `_row_at` and `_top_line_of`,
    and draws those lines with `render_between`; the cursor only ever stands on a row.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move the cursor |
    | pageup, pagedown, home, end | jump |
    | enter | select the row under the cursor (bound by each subclass) |
    """

    BINDINGS: ClassVar[list[BindingType]] = navigation_bindings(
        "table",
        up="Previous row",
        down="Next row",
        page_up="Up a page",
        page_down="Down a page",
        first="First row",
        last="Last row",
    )

    DEFAULT_CSS = """
    LineTable {
        background: $surface;
        scrollbar-gutter: stable;
        overflow-x: hidden;
    }
    """

    #: The start of the component classes (`{COMPONENT_PREFIX}--dim`, …).
    COMPONENT_PREFIX: ClassVar[str] = "line-table"
    #: Post the highlight on every cursor assignment, also when the row did not change.
    HIGHLIGHT_REPEATS: ClassVar[bool] = False
    #: When `set_rows` loses the cursor's row, keep the cursor's position (else: the top).
    KEEP_POSITION: ClassVar[bool] = False
    #: Scroll to the cursor at once rather than after the next refresh, and after a resize too.
    EAGER_SCROLL: ClassVar[bool] = False

    #: The columns, left to right (a subclass that draws its rows itself may have none).
    COLUMNS: ClassVar[Sequence[Column[Any]]] = ()
    #: The least width of the column that takes what is left.
    FILL_MIN: ClassVar[int] = 10

    cursor: reactive[int] = reactive(0, always_update=True)

    #: Shown on the first row when there are no rows (set by the screen).
    empty_text: str = "No rows."

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[RowT] = []
        self._shared: dict[str, str] = {}  # path column title → the folder all rows share
        self._longest: dict[str, int] = {}  # path column title → its longest text as drawn
        self._announced: object = ""  # the key last announced (unless HIGHLIGHT_REPEATS)

    # -- public API ----------------------------------------------------------------

    @property
    def rows(self) -> Sequence[RowT]:
        return self._rows

    @property
    def current(self) -> RowT | None:
        return self._rows[self.cursor] if 0 <= self.cursor < len(self._rows) else None

    def row_key(self, row: RowT) -> KeyT:
        """The id that follows a row across `set_rows` (and that messages carry)."""
        raise NotImplementedError

    def index_of(self, key: KeyT) -> int | None:
        """The position of the first row with `key`."""
        return next((i for i, row in enumerate(self._rows) if self.row_key(row) == key), None)

    def set_rows(self, rows: Iterable[RowT], focus: KeyT | None = None) -> None:
        """Replace the rows; the cursor goes to `focus`, else stays on the same row, else goes
        to the top (or, with KEEP_POSITION, stays where it is)."""
        current = self.current
        keep = focus or (self.row_key(current) if current is not None else None)
        self._rows = list(rows)
        self._find_shared_folders()
        self._rows_replaced()
        self._resize()
        found = self.index_of(keep) if keep is not None else None
        fallback = self.cursor if self.KEEP_POSITION else 0
        self.cursor = self._clamp(fallback if found is None else found)
        self.refresh()

    def move_to(self, key: KeyT) -> bool:
        index = self.index_of(key)
        if index is not None:
            self.cursor = index
        return index is not None

    # -- actions -------------------------------------------------------------------

    def action_cursor_up(self) -> None:
        self.cursor = max(self.cursor - 1, 0)

    def action_cursor_down(self) -> None:
        self.cursor = self._clamp(self.cursor + 1)

    def action_page_up_rows(self) -> None:
        self.cursor = max(self.cursor - self._page(), 0)

    def action_page_down_rows(self) -> None:
        self.cursor = self._clamp(self.cursor + self._page())

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = self._clamp(len(self._rows))

    def action_select(self) -> None:
        current = self.current
        if current is not None:
            self._select(self.row_key(current))

    # -- watchers ------------------------------------------------------------------

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        self._scroll_to_cursor()
        if int(self.scroll_offset.y) == top:
            # Only the two rows that changed are redrawn (line l is drawn at y = l + 1 - top).
            for row in {old, new}:
                self.refresh_lines(self._line_of(row) - top + 1)
        else:
            self.refresh()
        current = self.current
        key = self.row_key(current) if current is not None else None
        if self.HIGHLIGHT_REPEATS or key != self._announced:
            self._announced = key
            self._announce(key)

    def on_resize(self) -> None:
        self._resize()
        if self.EAGER_SCROLL:
            self._scroll_to_cursor()

    def on_click(self, event: events.Click) -> None:
        if event.y > 0:
            index = self._row_at(int(self.scroll_offset.y) + event.y - 1)
            if index is not None:
                self.cursor = index

    # -- hooks for subclasses ------------------------------------------------------

    def _announce(self, key: KeyT | None) -> None:
        """Post the subclass's Highlighted message (None: the table is empty)."""
        raise NotImplementedError

    def _select(self, key: KeyT) -> None:
        """Post the subclass's Selected message."""
        raise NotImplementedError

    def _rows_replaced(self) -> None:
        """Called by `set_rows` right after the rows were replaced."""

    def _line_count(self) -> int:
        """Lines below the header: one per row, unless the subclass draws lines between."""
        return len(self._rows)

    def _line_of(self, index: int) -> int:
        """The line row `index` is drawn on."""
        return index

    def _row_at(self, line: int) -> int | None:
        """The row drawn on `line` (None: no row there)."""
        return line if 0 <= line < len(self._rows) else None

    def _top_line_of(self, index: int) -> int:
        """The first line to keep in view with row `index` (its group's header, say)."""
        return self._line_of(index)

    # -- helpers -------------------------------------------------------------------

    def _find_shared_folders(self) -> None:
        """For each path column, the folder all rows share (dropped when drawn)."""
        self._shared, self._longest = {}, {}
        for column in self.COLUMNS:
            if column.keep_end:
                paths = {self.cell_text(column, row) for row in self._rows}
                shared = self._shared[column.title] = common_folder(paths)
                cut = len(shared) - 2 if shared else 0  # "…/" stands for the shared folder
                self._longest[column.title] = max((len(p) - cut for p in paths), default=0)

    def _clamp(self, index: int) -> int:
        return min(max(index, 0), max(len(self._rows) - 1, 0))

    def _width(self) -> int:
        """Columns for the rows: the vertical scrollbar's gutter is not theirs."""
        return self.scrollable_content_region.width

    def _page(self) -> int:
        return max(self.size.height - 2, 1)

    def _resize(self) -> None:
        self.virtual_size = Size(self._width(), self._line_count() + 1)

    def _scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        visible = max(self.size.height - 1, 1)
        first, line = self._top_line_of(self.cursor), self._line_of(self.cursor)
        if first < top:
            self.scroll_to(y=first, animate=False, immediate=self.EAGER_SCROLL)
        elif line >= top + visible:
            self.scroll_to(y=line - visible + 1, animate=False, immediate=self.EAGER_SCROLL)

    # -- rendering -----------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self._width()
        if y == 0:
            return self.render_header(width)
        line = int(self.scroll_offset.y) + y - 1
        if not self._rows:
            lines = wrap(self.empty_text, width, indent=2)
            if y <= len(lines):
                return self._text_line(lines[y - 1], "dim", width)
        if line >= self._line_count():
            return Strip.blank(width, self.rich_style)
        index = self._row_at(line)
        if index is None:
            return self.render_between(line, width)
        return self.render_row(self._rows[index], index == self.cursor, width)

    def render_header(self, width: int) -> Strip:
        """The fixed first line: the column titles."""
        return self._text_line(self.header_text(width), "header", width)

    def render_row(self, row: RowT, is_cursor: bool, width: int) -> Strip:
        """One row's line, `width` cells wide. The cursor row is drawn in the cursor's colours
        only (coloured text on the cursor is hard to read); a row with a `row_style` is drawn
        in it whole; otherwise each cell in its `cell_style`."""
        cells = self.cells(row, width)
        if is_cursor:
            cursor = self.get_component_rich_style(f"{self.COMPONENT_PREFIX}--cursor")
            segments = [Segment(text, cursor) for _, text in cells]
        else:
            base = self.rich_style + self.row_base(row)
            whole = self.row_style(row)
            segments = [
                Segment(text, base + (whole or self.cell_style(title, row)))
                for title, text in cells
            ]
        return Strip(segments).crop(0, width).simplify()

    # -- the column model ----------------------------------------------------------

    def column_widths(self, width: int) -> list[int]:
        """Each column's width in `width` cells (one space after each column; 0: left out)."""
        shown = [c for c in self.COLUMNS if width >= c.narrow]
        fixed = sum(self._fixed_width(c) for c in shown)
        rest = max(width - fixed - len(shown), self.FILL_MIN)
        return [0 if width < c.narrow else self._fixed_width(c) or rest for c in self.COLUMNS]

    def _fixed_width(self, column: Column[Any]) -> int:
        """A fixed column's width; a path column's shrinks to its longest path (not its
        title)."""
        if not column.width or not column.keep_end or column.title not in self._longest:
            return column.width
        return min(column.width, max(self._longest[column.title], len(column.title)))

    def header_text(self, width: int) -> str:
        return " ".join(
            c.title.rjust(w) if c.right else pad(c.title, w)
            for c, w in zip(self.COLUMNS, self.column_widths(width), strict=True)
            if w
        )

    def cell_text(self, column: Column[Any], row: RowT) -> str:
        """A cell's text before it is fitted to its column."""
        if column.text is None:
            raise NotImplementedError(f"no text for column {column.title!r}")
        return column.text(row)

    def shown_text(self, column: Column[Any], row: RowT) -> str:
        """A cell's text as drawn: a path without the folder all rows share."""
        text = self.cell_text(column, row)
        shared = self._shared.get(column.title, "") if column.keep_end else ""
        return "…/" + text[len(shared) :] if shared and text.startswith(shared) else text

    def cells(self, row: RowT, width: int) -> list[tuple[str, str]]:
        """(column title, its text fitted to the column and a space) for one row."""
        return [
            (c.title, fit_cell(c, self.shown_text(c, row), w) + " ")
            for c, w in zip(self.COLUMNS, self.column_widths(width), strict=True)
            if w
        ]

    def row_base(self, row: RowT) -> Style:
        """A style under every cell of the row (a marked row, say)."""
        return Style()

    def row_style(self, row: RowT) -> Style | None:
        """A style for the whole row instead of the cells' (a busy row, say), or None."""
        return None

    def cell_style(self, title: str, row: RowT) -> Style:
        """The style of the cell in column `title` (not on the cursor row)."""
        return Style()

    def render_between(self, line: int, width: int) -> Strip:
        """A line that holds no row (see `_row_at`); blank unless the subclass draws one."""
        return Strip.blank(width, self.rich_style)

    def _text_line(self, text: str, component: str, width: int) -> Strip:
        """`text` cut or padded to `width`, in the style of `{COMPONENT_PREFIX}--{component}`."""
        style = self.get_component_rich_style(f"{self.COMPONENT_PREFIX}--{component}")
        return Strip([Segment(pad(text, width), style)])


def fit_cell(column: Column[Any], text: str, width: int) -> str:
    """A cell's text fitted to its column: right-aligned cells keep their end."""
    if column.right:
        return text[-width:].rjust(width)
    return fit(text, width, keep_end=column.keep_end)


def common_folder(paths: Iterable[str]) -> str:
    """The folder (with its last `/`) that every path in `paths` is under, never a path's
    last part; "" when they share none worth dropping (only `/` or `~/`) or some text is not
    an absolute or home path."""
    distinct = {p for p in paths if p}
    if not all(p.startswith(("/", "~/")) for p in distinct):
        return ""  # not all paths (a project name, say): nothing to drop
    split = [p.split("/")[:-1] for p in distinct]
    shared: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        shared.append(parts[0])
    folder = "/".join(shared) + "/"
    return folder if split and len(folder) > 2 else ""


def wrap(text: str, width: int, indent: int = 1, hang: int = 2) -> list[str]:
    """`text` in lines of at most `width` cells: `indent` spaces before the first line,
    `hang` more before the others (a hanging indent); words longer than a line are split."""
    first = " " * indent
    lines = textwrap.wrap(
        text,
        max(width, indent + hang + 1),
        initial_indent=first,
        subsequent_indent=first + " " * hang,
        break_on_hyphens=False,
    )
    return lines or [first]


def pad(text: str, width: int) -> str:
    return text[:width].ljust(width)


def fit(text: str, width: int, keep_end: bool = False) -> str:
    """Pad or shorten to `width`; paths keep their end, where they differ."""
    if len(text) <= width:
        return text.ljust(width)
    if width < 2:
        return "…"[:width]
    return "…" + text[len(text) - width + 1 :] if keep_end else text[: width - 1] + "…"
