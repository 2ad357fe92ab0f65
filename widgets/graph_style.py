"""Colours for skill statuses and health verdicts, the same on the Graph and Health screens:
stable green, proposed cyan, deprecated yellow, retired red, a missing (dangling) skill dim
red; DRIFTING red, DEGRADING yellow, HEALTHY green, IDLE dim."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from store.text import one_line

STATUS_STYLES: dict[str, str] = {
    "stable": "green",
    "proposed": "cyan",
    "deprecated": "yellow",
    "retired": "red",
    "missing": "dim red",
    "uninstalled": "dim",
}
#: The glyph before a skill's name: a dot, or a cross for a skill that does not exist.
STATUS_GLYPHS: dict[str, str] = {"missing": "✗", "retired": "⊘", "uninstalled": "·"}
VERDICT_STYLES: dict[str, str] = {
    "DRIFTING": "bold red",
    "DEGRADING": "yellow",
    "HEALTHY": "green",
    "IDLE": "dim",
}


def status_style(status: str) -> Style:
    return Style.parse(STATUS_STYLES.get(status, "dim"))


def verdict_style(verdict: str) -> Style:
    return Style.parse(VERDICT_STYLES.get(verdict, "dim"))


def glyph(status: str) -> str:
    return STATUS_GLYPHS.get(status, "●")


def skill_label(name: str, status: str, limit: int = 80) -> Text:
    """A skill's glyph and name in its status colour (the name shown literally)."""
    return Text.assemble((f"{glyph(status)} ", status_style(status)), one_line(name, limit))
