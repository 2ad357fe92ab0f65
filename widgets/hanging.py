"""A hanging indent for detail panes: each line of a `Text` that does not fit is wrapped, and
its wrapped lines are indented under it (by the line's own leading spaces and `hang` more),
so an entry that wraps still reads as one entry.

    Description: Author, review and run
      Alembic migrations for our services.
"""

from __future__ import annotations

from rich._wrap import divide_line
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.text import Text

#: Cells a wrapped line is indented by, past its entry's own indent.
HANG = 2


class Hanging:
    """`text` wrapped to the width it is given, with hanging indents (see the module)."""

    def __init__(self, text: Text, hang: int = HANG) -> None:
        self.text = text
        self.hang = hang

    def __str__(self) -> str:
        return self.text.plain

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.text)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, 1)
        for line in self.text.split("\n", allow_blank=True):
            for piece in hang_line(line, width, self.hang):
                yield from piece.render(console, "")
                yield Segment.line()


def hang_line(line: Text, width: int, hang: int = HANG) -> list[Text]:
    """One line of text in lines of at most `width` cells, the second and later indented by
    the line's leading spaces and `hang`."""
    line = line.copy()
    line.rstrip()
    if line.cell_len <= width:
        return [line]
    lead = len(line.plain) - len(line.plain.lstrip(" "))
    indent = min(lead + hang, max(width // 2, 0))
    first = divide_line(line.plain, width, fold=True)
    if not first:
        return [line]
    head, rest = line.divide([first[0]])
    rest = _lstrip(rest)
    pieces = [head]
    room = max(width - indent, 1)
    offsets = divide_line(rest.plain, room, fold=True)
    for part in rest.divide(offsets):
        part.rstrip()
        pieces.append(Text(" " * indent) + part)
    head.rstrip()
    return pieces


def _lstrip(text: Text) -> Text:
    """`text` without its leading spaces (styles kept)."""
    strip = len(text.plain) - len(text.plain.lstrip(" "))
    return text[strip:]


def flush(text: Text) -> RenderableType:
    """A paragraph of prose (a description): wrapped flush left, never hanging."""
    return Padding(text, 0)


def hanging(renderable: RenderableType, hang: int = HANG) -> RenderableType:
    """`renderable` with hanging indents: a `Text` (or each `Text` in a `Group`) wrapped as
    `Hanging`; anything else (a table, a syntax block) as it is."""
    if isinstance(renderable, Text):
        return Hanging(renderable, hang)
    if isinstance(renderable, Group):
        return Group(*(hanging(r, hang) for r in renderable.renderables))
    return renderable
