"""Ranked skill suggestions for a task, each with a one-line explanation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from store.models.skills import FITS_WELL, Suggestion
from store.text import one_line


class SuggestionList(OptionList):
    """Shows `Suggestion`s best first; highlighting one posts `SuggestionHighlighted`."""

    DEFAULT_CSS = """
    SuggestionList {
        height: auto; max-height: 12; border: none; background: $surface;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    @dataclass
    class SuggestionHighlighted(Message):
        suggestion: Suggestion

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._suggestions: list[Suggestion] = []

    @property
    def suggestions(self) -> Sequence[Suggestion]:
        return self._suggestions

    @property
    def current(self) -> Suggestion | None:
        """The highlighted suggestion, if any."""
        if self.highlighted is None:
            return None
        chosen = self.get_option_at_index(self.highlighted).id
        return next((s for s in self._suggestions if str(s.skill_id) == chosen), None)

    def set_suggestions(self, suggestions: Sequence[Suggestion]) -> None:
        """Show `suggestions`; when none fits the task well (`FITS_WELL`), a line says so
        above them (they stay: the closest there is)."""
        self._suggestions = list(suggestions)
        self.clear_options()
        if self._suggestions and not fits_well(self._suggestions):
            self.add_option(Option(no_fit(self._suggestions), id=NO_FIT, disabled=True))
        self.add_options(
            Option(_prompt(rank, s), id=str(s.skill_id))
            for rank, s in enumerate(self._suggestions, start=1)
        )

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        chosen = event.option.id
        for suggestion in self._suggestions:
            if str(suggestion.skill_id) == chosen:
                self.post_message(self.SuggestionHighlighted(suggestion))
                return


#: The id of the line saying no skill fits well.
NO_FIT = "no-fit"


def fits_well(suggestions: Sequence[Suggestion]) -> bool:
    """Whether any suggestion fits its task well (an absolute relevance, not the rank)."""
    return any(s.relevance >= FITS_WELL for s in suggestions)


def no_fit(suggestions: Sequence[Suggestion]) -> Text:
    best = max((s.relevance for s in suggestions), default=0.0)
    return Text(
        f"no skill fits well (best fit {best:.2f}, below {FITS_WELL:.2f}): the closest",
        style="bold yellow",
    )


def _prompt(rank: int, s: Suggestion) -> Text:
    text = Text(f"{rank:>2}. ")
    text.append(one_line(s.name, 40), style="bold")
    text.append(f"  fit {s.relevance:.2f}", style="cyan" if s.relevance >= FITS_WELL else "dim")
    if s.status not in ("stable", "proposed"):
        text.append(f"  {s.status}", style="yellow")
    if s.health:
        text.append(
            f"  {s.health.lower()}", style="bold red" if s.health == "DRIFTING" else "yellow"
        )
    terms = ", ".join(s.matched_terms[:5])
    if terms:
        text.append(f"  {one_line(terms, 60)}", style="dim")
    return text
